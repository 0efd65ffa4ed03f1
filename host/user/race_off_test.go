//go:build !race

package user_test

const raceEnabled = false
