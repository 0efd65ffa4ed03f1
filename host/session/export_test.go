package session

// SetPurgeBatch sets the batch size of Purge for a test and returns the
// function that restores it. Tests that call it do not run in parallel.
func SetPurgeBatch(n int) (restore func()) {
	old := purgeBatch
	purgeBatch = n
	return func() { purgeBatch = old }
}
