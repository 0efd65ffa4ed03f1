// Package poll waits in tests for something that happens asynchronously (a
// plugin restarting, an event crossing Redis, a replica becoming ready). It
// depends on nothing but the standard library, so the tests of any package
// can use it.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until checks its condition.
const Interval = 20 * time.Millisecond

// Until checks cond every Interval until it holds and returns how long that
// took; when it still does not hold after within, the test fails with
// "<what>: not within <within>".
func Until(tb testing.TB, within time.Duration, what string, cond func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			tb.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(Interval)
	}
	return time.Since(start)
}
