//go:build !race

package sysconfig

const raceEnabled = false
