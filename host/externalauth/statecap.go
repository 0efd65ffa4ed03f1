package externalauth

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
)

// DefaultMaxPendingStates is the cap on pending authorize states when
// Options.MaxPendingStates is 0 (Service:ExternalAuth:MaxPendingStates).
const DefaultMaxPendingStates = 100000

// stateCountPrefix names the counters of issued, not yet taken states, one
// per time bucket (counter space of cache.Store: exempt from eviction, each
// with its own TTL).
const stateCountPrefix = "extauth:statecount:"

// stateBucket is the width of one counting bucket.
const stateBucket = time.Minute

// stateSlots bounds the authorize states waiting for their callback.
//
// Every state lives StateTTL, so the states that may still be pending at
// any moment were issued in the last StateTTL. They are counted per time
// bucket: a state issued in bucket k increments counter k, whose TTL
// (StateTTL + one bucket) outlives every state of the bucket; taking the
// state (callback, or the burn of a failed callback) decrements the
// counter of the bucket it was issued in, which the state record carries
// (a take from an older bucket is seen by acquire within olderFor).
// The pending count is the sum of the live counters, so expired states
// free their slot when their bucket's counter expires (at most one bucket
// late: the count errs on the high side, never the low side).
//
// acquire increments first and checks after, backing out when the sum is
// above the cap, so concurrent authorizes cannot overshoot it. It works the
// same on both cache backends; with Redis the counters are shared, so the
// cap counts every replica's states (they share Redis's memory).
type stateSlots struct {
	store  cache.Store
	max    int64
	ttl    time.Duration // of a state
	bucket time.Duration
	now    func() time.Time
	log    hclog.Logger

	lastWarn atomic.Int64 // unix nanoseconds of the last "cap reached" warning

	// older remembers, for olderFor, the sum of the buckets before the
	// current one. Those only shrink (takes) or expire: new states count
	// in the current bucket. So a remembered sum errs high, never low, and
	// acquire reads it at most once per olderFor instead of once per
	// authorize (with Redis, one round trip per bucket).
	olderMu sync.Mutex
	older   olderSum
}

// olderFor is how long a sum of the older buckets is reused.
const olderFor = time.Second

type olderSum struct {
	slot  int64     // the current bucket it was read for
	at    time.Time // when it was read
	total int64
	retry time.Duration // TTL of the oldest counted bucket, at read time
}

func newStateSlots(store cache.Store, maxStates int, log hclog.Logger) *stateSlots {
	if maxStates <= 0 {
		maxStates = DefaultMaxPendingStates
	}
	return &stateSlots{store: store, max: int64(maxStates), ttl: StateTTL, bucket: stateBucket, now: time.Now, log: log}
}

func (l *stateSlots) key(slot int64) string {
	return stateCountPrefix + strconv.FormatInt(slot, 10)
}

// counterTTL outlives every state of a bucket: the last one is issued at
// the end of the bucket and lives ttl.
func (l *stateSlots) counterTTL() time.Duration { return l.ttl + l.bucket }

// buckets is how many buckets back a counter may still be alive: a
// counter created at the start of bucket k lives until the end of bucket
// k+ceil(ttl/bucket)+1 at the latest.
func (l *stateSlots) buckets() int64 {
	return int64(math.Ceil(float64(l.ttl)/float64(l.bucket))) + 1
}

// acquire reserves a slot for a new state and returns its bucket (to store
// with the state). At the cap it answers 429 / 40008 with the seconds until
// the oldest counted bucket expires. A cache error fails closed.
func (l *stateSlots) acquire(ctx context.Context) (int64, error) {
	slot := l.now().UnixNano() / int64(l.bucket)
	n, err := l.store.Incr(ctx, l.key(slot), 1, l.counterTTL())
	if err != nil {
		return 0, fmt.Errorf("counting the pending authorize states: %w", err)
	}
	older, err := l.olderBuckets(ctx, slot)
	if err != nil {
		l.release(ctx, slot)
		return 0, fmt.Errorf("counting the pending authorize states: %w", err)
	}
	total := max(n, 0) + older.total
	retry := min(l.counterTTL(), older.retry)
	if total <= l.max {
		return slot, nil
	}
	l.release(ctx, slot)
	l.warn(total)
	secs := int64(math.Ceil(retry.Seconds()))
	return 0, errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", max(secs, 1))
}

// olderBuckets returns the sum of the live buckets before slot, reusing a
// sum read for the same slot less than olderFor ago.
func (l *stateSlots) olderBuckets(ctx context.Context, slot int64) (olderSum, error) {
	now := l.now()
	l.olderMu.Lock()
	o := l.older
	l.olderMu.Unlock()
	if o.slot == slot && now.Sub(o.at) < olderFor {
		o.retry -= now.Sub(o.at)
		return o, nil
	}
	o = olderSum{slot: slot, at: now, retry: l.counterTTL()}
	for k := slot - 1; k >= slot-l.buckets(); k-- {
		c, ttl, err := l.store.Count(ctx, l.key(k))
		if err != nil {
			return olderSum{}, err
		}
		if c > 0 {
			o.total += c
			if ttl > 0 && ttl < o.retry {
				o.retry = ttl
			}
		}
	}
	l.olderMu.Lock()
	l.older = o
	l.olderMu.Unlock()
	return o, nil
}

// release frees the slot of a state issued in bucket slot (0: a record
// without a slot, nothing to free). Failures are logged: a slot not freed
// only counts until its bucket expires.
func (l *stateSlots) release(ctx context.Context, slot int64) {
	if slot == 0 {
		return
	}
	if _, err := l.store.Incr(context.WithoutCancel(ctx), l.key(slot), -1, l.counterTTL()); err != nil {
		l.log.Warn("releasing a pending authorize state slot failed; it is freed when its bucket expires", "error", err)
	}
}

// warn logs the refusal at most once a minute.
func (l *stateSlots) warn(total int64) {
	now := l.now().UnixNano()
	last := l.lastWarn.Load()
	if now-last < int64(time.Minute) || !l.lastWarn.CompareAndSwap(last, now) {
		return
	}
	l.log.Warn("external login authorize refused: pending authorize states are at the cap (Service:ExternalAuth:MaxPendingStates)",
		"pending", total, "cap", l.max)
}
