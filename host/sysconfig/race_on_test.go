//go:build race

package sysconfig

// raceEnabled: the race detector's instrumentation allocates, so the
// allocation checks run in `make test`'s second, race-free pass
// (ALLOC_TESTS in the Makefile).
const raceEnabled = true
