package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	var n atomic.Int32
	took := Until(t, 5*time.Second, "the third check", func() bool { return n.Add(1) >= 3 })
	if n.Load() != 3 || took < 2*Interval {
		t.Fatalf("checked %d times in %s, want 3 checks and at least %s", n.Load(), took, 2*Interval)
	}
}

// fatalTB records Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestUntilFails(t *testing.T) {
	f := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != f {
				t.Fatalf("recovered %v, want the Fatalf of Until", r)
			}
		}()
		Until(f, 50*time.Millisecond, "never", func() bool { return false })
	}()
	if f.msg == "" {
		t.Fatal("Until returned without failing the test")
	}
}
