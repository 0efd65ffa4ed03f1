//go:build race

package notice_test

// raceEnabled: the race detector makes the embedded SQLite and the hashing
// of a stream several times slower; the volume tests run a smaller size
// under it and their full size in the race-free runs (make test-matrix).
const raceEnabled = true
