// Package race reports whether the race detector is compiled in, for tests
// that must adapt to it: its instrumentation allocates (the allocation
// checks run in `make test`'s second, race-free pass, ALLOC_TESTS in the
// Makefile) and makes the embedded SQLite, hashing and row handling several
// times slower (the volume tests run a smaller size under it and their full
// size in the race-free runs of make test-matrix).
package race
