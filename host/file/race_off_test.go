//go:build !race

package file_test

const raceEnabled = false
