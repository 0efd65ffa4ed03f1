package externalauth

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
)

// countingCounts counts Count calls (round trips with Redis).
type countingCounts struct {
	cache.Store
	counts atomic.Int64
}

func (c *countingCounts) Count(ctx context.Context, key string) (int64, time.Duration, error) {
	c.counts.Add(1)
	return c.Store.Count(ctx, key)
}

// The older buckets are read at most once per second and bucket, and
// their remembered sum still refuses at the cap.
func TestStateSlotsReadOlderBucketsOncePerSecond(t *testing.T) {
	mem, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	store := &countingCounts{Store: mem}
	clock := time.Date(2031, 1, 2, 3, 4, 0, 0, time.UTC)
	l := newStateSlots(store, 50, hclog.NewNullLogger())
	l.now = func() time.Time { return clock }
	ctx := context.Background()
	for range 30 { // 30 pending states in an older bucket
		if _, err := l.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(stateBucket)
	before := store.counts.Load()
	for i := range 20 {
		if _, err := l.acquire(ctx); err != nil {
			t.Fatalf("acquire %d of the new bucket: %v", i, err)
		}
	}
	if got := store.counts.Load() - before; got != l.buckets() {
		t.Fatalf("%d Count calls for 20 acquires within a second; want one read of %d buckets", got, l.buckets())
	}
	if _, err := l.acquire(ctx); err == nil {
		t.Fatal("an acquire beyond the cap of 50 (30 older + 20) succeeded")
	}
	clock = clock.Add(olderFor)
	if _, err := l.acquire(ctx); err == nil {
		t.Fatal("an acquire beyond the cap succeeded after the older sum was read again")
	}
	if got := store.counts.Load() - before; got != 2*l.buckets() {
		t.Fatalf("%d Count calls; want two reads of %d buckets", got, l.buckets())
	}
}
