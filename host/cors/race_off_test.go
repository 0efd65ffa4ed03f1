//go:build !race

package cors

const raceEnabled = false
