//go:build race

package cors

// raceEnabled: the race detector's instrumentation allocates, so the
// allocation check runs in `make test`'s second, race-free pass
// (ALLOC_TESTS in the Makefile).
const raceEnabled = true
