//go:build race

package user_test

// raceEnabled: the race detector makes each row several times slower; the
// volume tests keep their full size in the race-free runs (make
// test-matrix).
const raceEnabled = true
