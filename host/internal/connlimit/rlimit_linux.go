//go:build linux

package connlimit

import "syscall"

// RaiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit and
// returns the soft limit before and after. ok is false where the limit is
// not handled (not Linux).
func RaiseFileLimit() (before, after uint64, ok bool, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, true, err
	}
	before = lim.Cur
	if lim.Cur >= lim.Max {
		return before, before, true, nil
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return before, before, true, err
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return before, before, true, err
	}
	return before, lim.Cur, true, nil
}

// FileLimit is the soft RLIMIT_NOFILE (ok false where unknown).
func FileLimit() (limit uint64, ok bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, false
	}
	return lim.Cur, true
}
