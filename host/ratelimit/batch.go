package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/adminkernel/kernel/host/cache"
)

// maxBatched bounds the clients counted in process per window; beyond it a
// new client's requests are counted in the store one by one.
const maxBatched = 100_000

// batcher counts the general bucket in process and adds the counts to the
// shared counter in batches, so that a replica makes one round trip per
// Batch requests of a client instead of one per request.
//
// The decision uses the replica's view of the window's count: the shared
// count it last read plus its own requests since. It syncs (Incr by its
// pending requests, reading the new shared count) on a client's first
// request in a window, after every Batch requests, and on every request
// once its view has passed the allowance, so refusals are decided by the
// shared count. What a replica cannot see is the other replicas' pending
// requests: a client spreading requests over R replicas may get up to
// (R-1)*(Batch-1) requests beyond the allowance in a window. The auth
// bucket, which guards the login endpoints, is never batched.
type batcher struct {
	store cache.Store
	every int64

	mu     sync.Mutex
	window int64 // start of the window the counts belong to
	counts map[string]*batchCount
}

type batchCount struct {
	shared  int64 // the store's count when last synced
	pending int64 // this replica's requests not yet added to it
}

func newBatcher(store cache.Store, every int) *batcher {
	return &batcher{store: store, every: int64(every), counts: map[string]*batchCount{}}
}

// incr counts one request under key (a counter of the window starting at
// start) and returns the replica's view of the count.
func (b *batcher) incr(ctx context.Context, key []byte, start, limit int64, window time.Duration) (int64, error) {
	b.mu.Lock()
	switch {
	case start > b.window:
		// Windows are aligned to the epoch: a new one starts every count
		// afresh (a window length change only makes keys differ).
		clear(b.counts)
		b.window = start
	case start < b.window:
		// A request that read the clock before the window changed: count
		// it in the store rather than clear the new window's counts.
		b.mu.Unlock()
		return b.store.Incr(ctx, string(key), 1, window)
	}
	c := b.counts[string(key)]
	first := c == nil
	if first {
		if len(b.counts) >= maxBatched {
			b.mu.Unlock()
			return b.store.Incr(ctx, string(key), 1, window)
		}
		c = &batchCount{}
		b.counts[string(key)] = c
	}
	c.pending++
	view := c.shared + c.pending
	if !first && c.pending < b.every && view <= limit {
		b.mu.Unlock()
		return view, nil
	}
	delta := c.pending
	c.pending = 0
	b.mu.Unlock()

	n, err := b.store.Incr(ctx, string(key), delta, window)
	if err != nil {
		return 0, err // fail open; these requests stay uncounted
	}
	b.mu.Lock()
	if b.window == start && n > c.shared {
		c.shared = n
	}
	view = n + c.pending
	b.mu.Unlock()
	return view, nil
}
