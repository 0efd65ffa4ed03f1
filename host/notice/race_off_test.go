//go:build !race

package notice_test

const raceEnabled = false
