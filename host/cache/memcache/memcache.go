// Package memcache is the in-process cache.Store.
//
// Entries live in ristretto v2 (cost 1 per entry, so EntryLimit counts
// entries). Ristretto is best-effort by design: when the cache is full its
// TinyLFU policy may refuse a new entry, and under extreme write contention
// a Set can be dropped from its buffer. Entries are derived data, so a lost
// entry only means the next Get misses and the caller reads the database.
// Each Set waits for ristretto's write buffer, so a Set that was kept is
// visible to the next Get.
//
// One-time values and counters live in a mutex-guarded map with their own
// expiry: they are never size-evicted and the MaxEntryAge backstop does not
// apply to them. Expired items are absent on access and swept by a janitor
// goroutine that Close stops.
package memcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/adminkernel/kernel/host/cache"
)

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("memcache: closed")

const (
	defaultSweep = 30 * time.Second
	// unlimitedCost stands in for "no entry limit" (ristretto needs a
	// positive MaxCost); it leaves room for the policy's additions.
	unlimitedCost = math.MaxInt64 / 2
	// unlimitedCounters sizes the admission sketch when no limit is set.
	unlimitedCounters = 1_000_000
)

// Options configures New.
type Options struct {
	// EntryLimit caps the number of entries (0 = unlimited).
	EntryLimit int
	// MaxEntryAge caps every entry's lifetime (0 = no backstop). One-time
	// values and counters are exempt.
	MaxEntryAge time.Duration
	// Now is the clock (nil = time.Now); tests replace it. Ristretto's own
	// background cleanup always uses the real clock, so with a fake clock
	// entries may be dropped earlier than Now says, never served later.
	Now func() time.Time

	// sweepEvery is the janitor interval (0 = 30 s); tests shorten it.
	sweepEvery time.Duration
}

// Cache is the in-process cache.Store. It is safe for concurrent use.
type Cache struct {
	now    func() time.Time
	maxAge time.Duration
	// realClock: now is time.Now, the clock ristretto checks expiry with
	// on every Get, so reads need not check it again.
	realClock bool

	// life guards against use after Close: methods hold it shared while
	// they touch ristretto, Close holds it exclusively.
	life    sync.RWMutex
	closed  bool
	entries *ristretto.Cache[string, *entry]

	mu       sync.Mutex // guards once and counters
	once     map[string]item
	counters map[string]counter

	stop chan struct{} // closed by Close to stop the janitor
	done chan struct{} // closed by the janitor when it returns
}

// entry is a ristretto value. It carries its key so DeletePrefix can scan,
// and its expiry on c.now's clock.
type entry struct {
	key string
	val []byte
	exp time.Time // zero: never
}

type item struct {
	val []byte
	exp time.Time
}

type counter struct {
	n   int64
	exp time.Time // zero: never
}

var (
	_ cache.Store  = (*Cache)(nil)
	_ cache.Peeker = (*Cache)(nil)
)

// New creates the cache and starts its janitor; Close releases both.
func New(opts Options) (*Cache, error) {
	if opts.EntryLimit < 0 {
		return nil, fmt.Errorf("memcache: entry limit %d is negative", opts.EntryLimit)
	}
	if opts.MaxEntryAge < 0 {
		return nil, fmt.Errorf("memcache: max entry age %s is negative", opts.MaxEntryAge)
	}
	maxCost, counters := int64(unlimitedCost), int64(unlimitedCounters)
	if opts.EntryLimit > 0 {
		maxCost, counters = int64(opts.EntryLimit), int64(opts.EntryLimit)*10
	}
	entries, err := ristretto.NewCache(&ristretto.Config[string, *entry]{
		NumCounters:        counters,
		MaxCost:            maxCost,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("memcache: create entry cache: %w", err)
	}
	c := &Cache{
		now:      opts.Now,
		maxAge:   opts.MaxEntryAge,
		entries:  entries,
		once:     make(map[string]item),
		counters: make(map[string]counter),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if c.now == nil {
		c.now = time.Now
		c.realClock = true
	}
	sweep := opts.sweepEvery
	if sweep <= 0 {
		sweep = defaultSweep
	}
	go c.janitor(sweep)
	return c, nil
}

// enter checks ctx and that the cache is open. On success the caller must
// call c.life.RUnlock.
func (c *Cache) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memcache: %w", err)
	}
	c.life.RLock()
	if c.closed {
		c.life.RUnlock()
		return ErrClosed
	}
	return nil
}

// Get returns the entry under key.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := c.Peek(ctx, key)
	if !ok || err != nil {
		return nil, ok, err
	}
	return bytes.Clone(v), true, nil
}

// Peek returns the entry under key without copying it (cache.Peeker): the
// slice is the stored value, which Set never modifies in place.
func (c *Cache) Peek(ctx context.Context, key string) ([]byte, bool, error) {
	if err := c.enter(ctx); err != nil {
		return nil, false, err
	}
	defer c.life.RUnlock()
	e, ok := c.entries.Get(key)
	if !ok || e.key != key || (!c.realClock && expired(e.exp, c.now())) {
		return nil, false, nil
	}
	return e.val, true, nil
}

// Set stores an entry for min(ttl, MaxEntryAge); ttl <= 0 leaves only the
// backstop. The entry may be refused when the cache is full (a later miss).
func (c *Cache) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.life.RUnlock()
	c.set(key, val, ttl)
	c.entries.Wait()
	return nil
}

// SetMany stores entries as Set does, waiting for ristretto's buffers once
// for all of them (cache.MultiSetter).
func (c *Cache) SetMany(ctx context.Context, entries []cache.Entry, ttl time.Duration) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.life.RUnlock()
	for _, e := range entries {
		c.set(e.Key, e.Val, ttl)
	}
	c.entries.Wait()
	return nil
}

// set adds an entry to ristretto's buffers; the caller holds c.life and
// calls Wait.
func (c *Cache) set(key string, val []byte, ttl time.Duration) {
	if c.maxAge > 0 && (ttl <= 0 || ttl > c.maxAge) {
		ttl = c.maxAge
	}
	e := &entry{key: key, val: bytes.Clone(val)}
	if ttl > 0 {
		e.exp = c.now().Add(ttl)
	} else {
		ttl = 0 // ristretto: 0 = no expiry
	}
	// A false return means the set was dropped: the entry is simply absent.
	c.entries.SetWithTTL(key, e, 1, ttl)
}

// Delete removes entries.
func (c *Cache) Delete(ctx context.Context, keys ...string) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.life.RUnlock()
	for _, k := range keys {
		c.entries.Del(k)
	}
	return nil
}

// DeletePrefix removes every live entry whose key starts with prefix and
// returns how many it found. It scans all entries (an administrative
// operation, not a hot path); entries evicted concurrently may still be
// counted.
func (c *Cache) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := c.enter(ctx); err != nil {
		return 0, err
	}
	defer c.life.RUnlock()
	now := c.now()
	var keys []string
	// The callback runs under ristretto's shard locks: collect, delete after.
	c.entries.IterValues(func(e *entry) bool {
		if strings.HasPrefix(e.key, prefix) && !expired(e.exp, now) {
			keys = append(keys, e.key)
		}
		return false
	})
	for _, k := range keys {
		c.entries.Del(k)
	}
	return len(keys), nil
}

// PutOnce stores a one-time value for ttl; cache.ErrExists when the key is
// held by a value that has not expired.
func (c *Cache) PutOnce(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("memcache: put once %q: ttl %s must be positive", key, ttl)
	}
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.life.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if it, ok := c.once[key]; ok && !expired(it.exp, now) {
		return cache.ErrExists
	}
	c.once[key] = item{val: bytes.Clone(val), exp: now.Add(ttl)}
	return nil
}

// Take returns and removes a one-time value in one critical section, so of
// concurrent callers exactly one wins.
func (c *Cache) Take(ctx context.Context, key string) ([]byte, bool, error) {
	if err := c.enter(ctx); err != nil {
		return nil, false, err
	}
	defer c.life.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.once[key]
	if !ok {
		return nil, false, nil
	}
	delete(c.once, key)
	if expired(it.exp, c.now()) {
		return nil, false, nil
	}
	return it.val, true, nil
}

// Incr adds delta to a counter. A new (or expired) counter starts at 0 and
// expires ttl later; later increments keep that deadline.
func (c *Cache) Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	if err := c.enter(ctx); err != nil {
		return 0, err
	}
	defer c.life.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	ctr, ok := c.counters[key]
	if !ok || expired(ctr.exp, now) {
		ctr = counter{}
		if ttl > 0 {
			ctr.exp = now.Add(ttl)
		}
	}
	ctr.n += delta
	c.counters[key] = ctr
	return ctr.n, nil
}

// Count returns a counter's value and remaining lifetime.
func (c *Cache) Count(ctx context.Context, key string) (int64, time.Duration, error) {
	if err := c.enter(ctx); err != nil {
		return 0, 0, err
	}
	defer c.life.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	ctr, ok := c.counters[key]
	if !ok || expired(ctr.exp, now) {
		return 0, 0, nil
	}
	if ctr.exp.IsZero() {
		return ctr.n, 0, nil
	}
	return ctr.n, ctr.exp.Sub(now), nil
}

// Reset removes counters.
func (c *Cache) Reset(ctx context.Context, keys ...string) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.life.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.counters, k)
	}
	return nil
}

// Ping reports whether the cache is open.
func (c *Cache) Ping(ctx context.Context) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	c.life.RUnlock()
	return nil
}

// Close stops the janitor and releases ristretto. It waits for calls in
// flight; later calls return ErrClosed. Closing twice is a no-op.
func (c *Cache) Close() error {
	c.life.Lock()
	defer c.life.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	close(c.stop)
	<-c.done
	c.entries.Close()
	c.mu.Lock()
	c.once, c.counters = nil, nil
	c.mu.Unlock()
	return nil
}

// janitor sweeps expired one-time values and counters until Close.
func (c *Cache) janitor(every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.sweep()
		}
	}
}

// sweep deletes expired one-time values and counters.
func (c *Cache) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, it := range c.once {
		if expired(it.exp, now) {
			delete(c.once, k)
		}
	}
	for k, ctr := range c.counters {
		if expired(ctr.exp, now) {
			delete(c.counters, k)
		}
	}
}

// expired reports whether exp (zero: never) has been reached at now.
func expired(exp, now time.Time) bool {
	return !exp.IsZero() && !now.Before(exp)
}
