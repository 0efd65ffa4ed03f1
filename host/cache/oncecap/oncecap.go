// Package oncecap caps how many one-time values of one kind (authorize
// states, captcha answers, ...) may be pending in a cache.Store at once.
//
// One-time values (cache.Store PutOnce/Take) are never evicted before their
// TTL, and the in-process cache exempts them from its size limit, so an
// anonymous endpoint that stores one per request grows memory without bound
// unless the number of pending values is capped. A Cap counts them in the
// store's counter space, which works the same in process and on Redis
// (where the count covers every replica, which share Redis's memory).
//
// Use: Acquire a slot before storing a value and store the slot with it;
// Release the slot when the value is taken (whether it was used or burnt);
// Release it as well when storing the value fails. Taking a value is never
// refused by the cap.
package oncecap

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

// Bucket is the width of one counting bucket.
const Bucket = time.Minute

// olderFor is how long a sum of the older buckets is reused.
const olderFor = time.Second

// warnEvery throttles the "cap reached" warning.
const warnEvery = time.Minute

// Slot is the counting bucket a value was issued in: store it with the
// value and hand it to Release when the value is taken. The zero Slot
// stands for "no slot" (a value stored without one); releasing it does
// nothing.
type Slot int64

// Kind describes the values a Cap counts.
type Kind struct {
	// Prefix names the counters: Prefix + bucket number, in the store's
	// counter space. Each Cap needs its own prefix, distinct from the keys
	// of the values themselves.
	Prefix string
	// Values names the values in errors and in the warning, e.g.
	// "pending authorize states".
	Values string
	// Request names what is refused at the cap, e.g. "external login
	// authorize".
	Request string
	// Setting is the setting the cap comes from, named in the warning.
	Setting string
}

// Cap bounds the number of pending one-time values of one kind.
//
// Every value lives ttl, so the values that may still be pending at any
// moment were issued in the last ttl. They are counted per time bucket: a
// value issued in bucket k increments counter k, whose TTL (ttl + one
// bucket) outlives every value of the bucket; taking the value decrements
// the counter of the bucket it was issued in, which the value carries (its
// Slot; a take from an older bucket is seen by Acquire within olderFor).
// The pending count is the sum of the live counters, so expired values
// free their slot when their bucket's counter expires (at most one bucket
// late: the count errs on the high side, never the low side).
//
// Acquire increments first and checks after, backing out when the sum is
// above the cap, so concurrent callers cannot overshoot it.
type Cap struct {
	store  cache.Store
	kind   Kind
	max    int64
	ttl    time.Duration // of a value
	bucket time.Duration
	now    func() time.Time
	log    hclog.Logger

	lastWarn atomic.Int64 // unix nanoseconds of the last "cap reached" warning

	// older remembers, for olderFor, the sum of the buckets before the
	// current one. Those only shrink (takes) or expire: new values count
	// in the current bucket. So a remembered sum errs high, never low, and
	// Acquire reads it at most once per olderFor instead of once per call
	// (with Redis, one round trip per bucket).
	olderMu sync.Mutex
	older   olderSum
}

type olderSum struct {
	slot  int64     // the current bucket it was read for
	at    time.Time // when it was read
	total int64
	retry time.Duration // TTL of the oldest counted bucket, at read time
}

// New returns a Cap of maxPending values of kind, each living ttl (> 0),
// counted in store. maxPending < 1 is taken as 1 (settings validate their
// own floor); a nil log discards the warning.
func New(store cache.Store, kind Kind, maxPending int, ttl time.Duration, log hclog.Logger) *Cap {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Cap{
		store: store, kind: kind, max: int64(max(maxPending, 1)),
		ttl: ttl, bucket: Bucket, now: time.Now, log: log,
	}
}

func (c *Cap) key(slot int64) string {
	return c.kind.Prefix + strconv.FormatInt(slot, 10)
}

// counterTTL outlives every value of a bucket: the last one is issued at
// the end of the bucket and lives ttl.
func (c *Cap) counterTTL() time.Duration { return c.ttl + c.bucket }

// buckets is how many buckets back a counter may still be alive: a
// counter created at the start of bucket k lives until the end of bucket
// k+ceil(ttl/bucket)+1 at the latest.
func (c *Cap) buckets() int64 {
	return int64(math.Ceil(float64(c.ttl)/float64(c.bucket))) + 1
}

// Acquire reserves a slot for a new value. At the cap it answers
// errcode.TooManyRequests (429 / 40008) with retryAfterSeconds, the
// seconds until the oldest counted bucket expires. A cache error fails
// closed: it is returned as a plain error and nothing is reserved.
func (c *Cap) Acquire(ctx context.Context) (Slot, error) {
	slot := c.now().UnixNano() / int64(c.bucket)
	n, err := c.store.Incr(ctx, c.key(slot), 1, c.counterTTL())
	if err != nil {
		return 0, fmt.Errorf("counting the %s: %w", c.kind.Values, err)
	}
	older, err := c.olderBuckets(ctx, slot)
	if err != nil {
		c.Release(ctx, Slot(slot))
		return 0, fmt.Errorf("counting the %s: %w", c.kind.Values, err)
	}
	total := max(n, 0) + older.total
	retry := min(c.counterTTL(), older.retry)
	if total <= c.max {
		return Slot(slot), nil
	}
	c.Release(ctx, Slot(slot))
	c.warn(total)
	secs := int64(math.Ceil(retry.Seconds()))
	return 0, errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", max(secs, 1))
}

// olderBuckets returns the sum of the live buckets before slot, reusing a
// sum read for the same slot less than olderFor ago.
func (c *Cap) olderBuckets(ctx context.Context, slot int64) (olderSum, error) {
	now := c.now()
	c.olderMu.Lock()
	o := c.older
	c.olderMu.Unlock()
	if o.slot == slot && now.Sub(o.at) < olderFor {
		o.retry -= now.Sub(o.at)
		return o, nil
	}
	o = olderSum{slot: slot, at: now, retry: c.counterTTL()}
	for k := slot - 1; k >= slot-c.buckets(); k-- {
		n, ttl, err := c.store.Count(ctx, c.key(k))
		if err != nil {
			return olderSum{}, err
		}
		if n > 0 {
			o.total += n
			if ttl > 0 && ttl < o.retry {
				o.retry = ttl
			}
		}
	}
	c.olderMu.Lock()
	c.older = o
	c.olderMu.Unlock()
	return o, nil
}

// Release frees the slot of a value that was taken (or never stored). The
// zero Slot frees nothing. It runs even when ctx is cancelled; failures are
// logged: a slot not freed only counts until its bucket expires.
func (c *Cap) Release(ctx context.Context, slot Slot) {
	if slot == 0 {
		return
	}
	if _, err := c.store.Incr(context.WithoutCancel(ctx), c.key(int64(slot)), -1, c.counterTTL()); err != nil {
		c.log.Warn("releasing a slot of the "+c.kind.Values+" failed; it is freed when its bucket expires", "error", err)
	}
}

// warn logs the refusal at most once per warnEvery.
func (c *Cap) warn(total int64) {
	now := c.now().UnixNano()
	last := c.lastWarn.Load()
	if now-last < int64(warnEvery) || !c.lastWarn.CompareAndSwap(last, now) {
		return
	}
	c.log.Warn(fmt.Sprintf("%s refused: %s are at the cap (%s)", c.kind.Request, c.kind.Values, c.kind.Setting),
		"pending", total, "cap", c.max)
}
