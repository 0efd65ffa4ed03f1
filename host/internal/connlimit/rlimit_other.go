//go:build !linux

package connlimit

// RaiseFileLimit does nothing outside Linux (ok is false).
func RaiseFileLimit() (before, after uint64, ok bool, err error) {
	return 0, 0, false, nil
}

// FileLimit is unknown outside Linux (ok false).
func FileLimit() (limit uint64, ok bool) { return 0, false }
