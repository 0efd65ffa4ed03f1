//go:build !unit

package host_test

import (
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/oplog"
)

// TestOpLogMarksMeanSomething: every write of a signed-in caller is in the
// operation log by default, so route.Route.OpLog marks only what would not
// be (reads such as exports, anonymous calls); a mark on a route logged
// anyway is noise that hides which marks matter.
func TestOpLogMarksMeanSomething(t *testing.T) {
	k := kerneltest.Start(t, nil)
	marked, writes := 0, 0
	for _, r := range k.Routes() {
		unmarked := r
		unmarked.OpLog = false
		if oplog.Logged(unmarked) {
			writes++
			if r.OpLog {
				t.Errorf("%s %s is marked OpLog but every write is logged without the mark", r.Method, r.Path)
			}
			continue
		}
		if r.OpLog {
			marked++
		}
	}
	if writes < 50 || marked == 0 {
		t.Fatalf("%d logged writes, %d marked reads or anonymous calls: the route table was not read", writes, marked)
	}
	t.Logf("%d writes logged by default, %d other routes marked", writes, marked)
}
