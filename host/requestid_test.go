package host

import (
	"regexp"
	"sync"
	"testing"
)

func TestRequestIDs(t *testing.T) {
	a, b := newRequestIDs(), newRequestIDs()
	if a.prefix == b.prefix {
		t.Fatal("two processes' generators share a prefix")
	}
	shape := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-z]+$`)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				id := a.next()
				mu.Lock()
				dup := seen[id]
				seen[id] = true
				mu.Unlock()
				if dup || !shape.MatchString(id) {
					t.Errorf("id %q: duplicate %v or not of the expected shape", id, dup)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != 4000 {
		t.Fatalf("%d distinct ids, want 4000", len(seen))
	}
}
