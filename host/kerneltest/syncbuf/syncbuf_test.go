package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"
)

// TestConcurrentWriters: every write of parallel writers is kept whole
// while readers read, and Reset empties the buffer.
func TestConcurrentWriters(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := b.Write([]byte("line\n")); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 || len(b.String()) != 800*len("line\n") {
		t.Fatalf("kept %d whole lines of 800 (%d bytes)", got, len(b.String()))
	}
	b.Reset()
	if b.String() != "" {
		t.Fatalf("after Reset: %q", b.String())
	}
}
