// Package nearcache keeps a replica-local copy of the shared (Redis) cache's
// hot entries: session marks, permission sets, data scopes, config values
// and dictionaries, the entries every request reads. A hit costs a map
// lookup instead of a network round trip.
//
// A local copy must never let a replica answer differently from Redis after
// a change has been acknowledged, so invalidation is synchronous:
//
//   - Delete and DeletePrefix remove the entries from Redis, drop the local
//     copies, then publish the keys on a pub/sub channel and wait until
//     every subscribed replica has dropped its copies and acknowledged
//     (PUBLISH tells how many subscribers received the message; each one
//     answers on the same channel). Only then do they return, so once a
//     logout, a role change or a config change has answered, the next
//     request on any replica reads Redis. A replica that does not answer
//     within AckTimeout is logged; its copies are bounded as below.
//   - A replica trusts its copies only while it hears from Redis on its
//     subscription: it pings every second, and after StaleAfter without a
//     message (a partition, a stalled connection) or after the subscription
//     broke, it reads Redis instead and drops every copy before trusting
//     new ones again. Redis pub/sub loses messages only when the
//     subscriber's connection is lost, which this detects.
//   - Every copy expires after at most TTL even if all of the above failed
//     (a safety net, not the mechanism).
//   - A copy is only stored if no invalidation happened since the read that
//     produced it began (a generation counter checked under the shard lock),
//     so a value read before a concurrent invalidation is never kept after
//     it.
//
// Entries outside the configured prefixes, one-time values and counters go
// straight to Redis.
//
// Without a Redis client (New with a nil client) the cache is local only:
// for the in-process store of a single replica, where every change goes
// through this one Cache and is dropped synchronously. It then serves the
// same hot entries from a plain sharded map, cheaper to read than the
// bounded store underneath (ristretto's admission bookkeeping on every Get).
package nearcache

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/rediscache"
)

// Defaults of Options.
const (
	DefaultTTL        = 30 * time.Second
	DefaultMaxEntries = 10000
	DefaultAckTimeout = time.Second
	DefaultStaleAfter = 3 * time.Second
	// ChannelSuffix follows the Redis key prefix in the channel name.
	ChannelSuffix = "near"

	shards      = 32
	retryEvery  = 500 * time.Millisecond
	startWithin = 5 * time.Second
	publishFor  = 3 * time.Second
)

// Options configures New.
type Options struct {
	// Channel is the pub/sub channel shared by the replicas of one
	// deployment (required; the kernel uses KeyPrefix + ChannelSuffix).
	Channel string
	// Prefixes are the key prefixes kept locally (required).
	Prefixes []string
	// TTL caps a local copy's life (default DefaultTTL).
	TTL time.Duration
	// MaxEntries bounds the local copies (default DefaultMaxEntries).
	MaxEntries int
	// AckTimeout bounds the wait for the other replicas' acknowledgements
	// (default DefaultAckTimeout).
	AckTimeout time.Duration
	// StaleAfter is how long the replica may go without hearing from Redis
	// on its subscription before it stops trusting its copies (default
	// DefaultStaleAfter; it pings every StaleAfter/3).
	StaleAfter time.Duration
	// Log receives subscription trouble and missing acknowledgements.
	Log hclog.Logger
	// Lag, when not nil, receives the publication time of every
	// invalidation received from another replica (the kernel's
	// adminkernel_cache_invalidation_lag_seconds).
	Lag func(sent time.Time)
}

// Cache is a cache.Store that keeps local copies of a shared store's hot
// entries. It is safe for concurrent use.
type Cache struct {
	cache.Store // the shared store: everything not overridden goes there

	client   redis.UniversalClient // nil: local only
	alone    bool                  // no client: local only
	ps       *redis.PubSub
	opts     Options
	origin   string
	perShard int
	seed     maphash.Seed
	shards   [shards]shard

	// epoch is the origin of the cache's clock (now): monotonic time since
	// construction, which reads one clock instead of time.Now's two and
	// ignores wall-clock steps.
	epoch      time.Time
	gen        atomic.Uint64 // bumped by every invalidation
	heard      atomic.Int64  // now() of the last message on the subscription
	subscribed atomic.Bool

	wmu     sync.Mutex
	waiters map[string]*waiter
	nextID  atomic.Uint64

	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once

	hits, misses, fills, skipped, invalidations, ackTimeouts atomic.Int64
}

type shard struct {
	mu sync.RWMutex
	m  map[string]copyOf
}

type copyOf struct {
	val []byte
	exp int64 // now() at expiry
}

// now is the cache's clock: nanoseconds since epoch, monotonic.
func (c *Cache) now() int64 { return int64(time.Since(c.epoch)) }

// waiter collects the acknowledgements of one invalidation.
type waiter struct {
	mu   sync.Mutex
	got  int
	want int // -1 until PUBLISH answered
	done chan struct{}
}

// message is the wire form of invalidations and acknowledgements.
type message struct {
	Type   string   `json:"t"` // "inv" or "ack"
	Origin string   `json:"o"`
	ID     string   `json:"i"`
	Keys   []string `json:"k,omitempty"`
	Prefix *string  `json:"p,omitempty"`
	// Sent is the publication time (Unix nanoseconds) of an invalidation,
	// for Options.Lag; 0 from a replica that does not send it.
	Sent int64 `json:"s,omitempty"`
}

var _ cache.Store = (*Cache)(nil)

// New wraps shared, subscribes to the channel with client (the client of
// shared's Redis) and waits until Redis confirms the subscription.
func New(ctx context.Context, shared cache.Store, client redis.UniversalClient, opts Options) (*Cache, error) {
	if shared == nil || (client != nil && opts.Channel == "") || len(opts.Prefixes) == 0 {
		return nil, errors.New("nearcache: a shared store, prefixes and (with a client) a channel are required")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = DefaultAckTimeout
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("nearcache: origin: %w", err)
	}
	c := &Cache{
		Store: shared, client: client, opts: opts, origin: hex.EncodeToString(b[:]), epoch: time.Now(),
		perShard: max(opts.MaxEntries/shards, 1), seed: maphash.MakeSeed(),
		waiters: map[string]*waiter{}, done: make(chan struct{}),
	}
	for i := range c.shards {
		c.shards[i].m = map[string]copyOf{}
	}
	if client == nil {
		c.alone = true
		close(c.done)
		return c, nil
	}
	sctx, cancel := context.WithTimeout(ctx, startWithin)
	defer cancel()
	ps := rediscache.Subscribe(sctx, client, opts.Channel)
	if _, err := ps.ReceiveTimeout(sctx, startWithin); err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("nearcache: subscribe to %q: %w", opts.Channel, err)
	}
	c.ps = ps
	c.subscribed.Store(true)
	c.heard.Store(c.now())
	rctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go c.receive(rctx)
	return c, nil
}

// Close stops the subscription and closes the shared store.
func (c *Cache) Close() error {
	c.closeOnce.Do(func() {
		if !c.alone {
			c.stop()
			_ = c.ps.Close()
			<-c.done
		}
		c.dropAll()
	})
	return c.Store.Close()
}

// near reports whether key is kept locally.
func (c *Cache) near(key string) bool {
	for _, p := range c.opts.Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// trusted reports whether local copies may answer now: subscribed and heard
// from Redis within StaleAfter.
func (c *Cache) trusted(now int64) bool {
	return c.alone || (c.subscribed.Load() && now-c.heard.Load() < int64(c.opts.StaleAfter))
}

func (c *Cache) shard(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)%shards]
}

// local returns the local copy of key, if it may answer.
func (c *Cache) local(key string) ([]byte, bool) {
	now := c.now()
	if !c.trusted(now) {
		return nil, false
	}
	s := c.shard(key)
	s.mu.RLock()
	e, ok := s.m[key]
	s.mu.RUnlock()
	if !ok || now >= e.exp {
		return nil, false
	}
	return e.val, true
}

// keep stores a copy of val (owned by the cache from now on) unless an
// invalidation happened since gen was read.
func (c *Cache) keep(key string, val []byte, ttl time.Duration, gen uint64) {
	if ttl <= 0 || ttl > c.opts.TTL {
		ttl = c.opts.TTL
	}
	now := c.now()
	if !c.trusted(now) {
		c.skipped.Add(1)
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.gen.Load() != gen {
		c.skipped.Add(1)
		return
	}
	if _, ok := s.m[key]; !ok && len(s.m) >= c.perShard {
		for k := range s.m { // an arbitrary victim
			delete(s.m, k)
			break
		}
	}
	s.m[key] = copyOf{val: val, exp: now + int64(ttl)}
	c.fills.Add(1)
}

// Get returns the entry under key: the local copy when there is one that may
// answer, otherwise the shared store's (kept locally for next time).
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := c.Peek(ctx, key)
	if ok && err == nil {
		return bytes.Clone(v), true, nil
	}
	return v, ok, err
}

// Peek is Get without copying a local hit (cache.Peeker).
func (c *Cache) Peek(ctx context.Context, key string) ([]byte, bool, error) {
	if !c.near(key) {
		return c.Store.Get(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if v, ok := c.local(key); ok {
		c.hits.Add(1)
		return v, true, nil
	}
	c.misses.Add(1)
	gen := c.gen.Load()
	v, ok, err := c.Store.Get(ctx, key)
	if err == nil && ok {
		c.keep(key, bytes.Clone(v), 0, gen)
	}
	return v, ok, err
}

// Set writes the entry to the shared store and keeps a local copy.
func (c *Cache) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if !c.near(key) {
		return c.Store.Set(ctx, key, val, ttl)
	}
	gen := c.gen.Load()
	if err := c.Store.Set(ctx, key, val, ttl); err != nil {
		// The shared entry is unknown now: drop the local copy too.
		c.dropKeys([]string{key})
		return err
	}
	c.keep(key, bytes.Clone(val), ttl, gen)
	return nil
}

// SetMany writes the entries to the shared store in one round trip where
// it can (cache.SetMany) and keeps local copies of the hot ones.
func (c *Cache) SetMany(ctx context.Context, entries []cache.Entry, ttl time.Duration) error {
	gen := c.gen.Load()
	if err := cache.SetMany(ctx, c.Store, entries, ttl); err != nil {
		var mine []string
		for _, e := range entries {
			if c.near(e.Key) {
				mine = append(mine, e.Key)
			}
		}
		if len(mine) > 0 {
			c.dropKeys(mine) // the shared entries are unknown now
		}
		return err
	}
	for _, e := range entries {
		if c.near(e.Key) {
			c.keep(e.Key, bytes.Clone(e.Val), ttl, gen)
		}
	}
	return nil
}

// Delete removes entries from the shared store, then from every replica's
// local copies (see the package comment).
func (c *Cache) Delete(ctx context.Context, keys ...string) error {
	err := c.Store.Delete(ctx, keys...)
	var mine []string
	for _, k := range keys {
		if c.near(k) {
			mine = append(mine, k)
		}
	}
	if len(mine) == 0 {
		return err
	}
	// Dropped even when the shared delete failed: the shared state is
	// unknown, so no copy of it may be trusted.
	c.dropKeys(mine)
	if err != nil {
		return err
	}
	c.broadcast(ctx, message{Keys: mine})
	return nil
}

// DeletePrefix removes entries by prefix from the shared store, then from
// every replica's local copies.
func (c *Cache) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	n, err := c.Store.DeletePrefix(ctx, prefix)
	if !c.overlaps(prefix) {
		return n, err
	}
	c.dropPrefix(prefix)
	if err != nil {
		return n, err
	}
	c.broadcast(ctx, message{Prefix: &prefix})
	return n, nil
}

// overlaps reports whether some key under prefix can be kept locally.
func (c *Cache) overlaps(prefix string) bool {
	for _, p := range c.opts.Prefixes {
		if strings.HasPrefix(p, prefix) || strings.HasPrefix(prefix, p) {
			return true
		}
	}
	return false
}

func (c *Cache) dropKeys(keys []string) {
	c.invalidations.Add(1)
	for _, k := range keys {
		s := c.shard(k)
		s.mu.Lock()
		c.gen.Add(1)
		delete(s.m, k)
		s.mu.Unlock()
	}
}

func (c *Cache) dropPrefix(prefix string) {
	c.invalidations.Add(1)
	c.gen.Add(1)
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k := range s.m {
			if strings.HasPrefix(k, prefix) {
				delete(s.m, k)
			}
		}
		s.mu.Unlock()
	}
}

func (c *Cache) dropAll() { c.dropPrefix("") }

// broadcast publishes an invalidation and waits for the acknowledgements of
// every subscriber Redis delivered it to (this replica's own included,
// counted when its subscription sees the message), up to AckTimeout.
// Failures are logged, not returned: the shared entries are already gone,
// and every replica's copies are bounded by StaleAfter and TTL.
func (c *Cache) broadcast(ctx context.Context, m message) {
	if c.alone {
		return
	}
	m.Type, m.Origin = "inv", c.origin
	m.ID = c.origin + "-" + fmt.Sprint(c.nextID.Add(1))
	m.Sent = time.Now().UnixNano()
	raw, err := json.Marshal(m)
	if err != nil {
		c.opts.Log.Error("encoding an invalidation failed", "error", err)
		return
	}
	w := &waiter{want: -1, done: make(chan struct{})}
	c.wmu.Lock()
	c.waiters[m.ID] = w
	c.wmu.Unlock()
	defer func() {
		c.wmu.Lock()
		delete(c.waiters, m.ID)
		c.wmu.Unlock()
	}()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishFor)
	n, err := rediscache.Publish(pctx, c.client, c.opts.Channel, raw).Result()
	cancel()
	if err != nil {
		c.opts.Log.Warn("could not tell the other replicas to drop their copies; theirs expire within the near-cache bounds", "error", err)
		return
	}
	w.mu.Lock()
	w.want = int(n)
	complete := w.got >= w.want
	w.mu.Unlock()
	if complete {
		return
	}
	t := time.NewTimer(c.opts.AckTimeout)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
		c.ackTimeouts.Add(1)
		w.mu.Lock()
		got, want := w.got, w.want
		w.mu.Unlock()
		c.opts.Log.Warn("some replicas did not confirm dropping their local copies in time; theirs expire within the near-cache bounds",
			"confirmed", got, "expected", want, "timeout", c.opts.AckTimeout)
	}
}

// ack counts one acknowledgement of an invalidation this replica sent.
func (c *Cache) ack(id string) {
	c.wmu.Lock()
	w := c.waiters[id]
	c.wmu.Unlock()
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got++
	if w.want >= 0 && w.got == w.want {
		close(w.done)
	}
}

// receive reads the subscription until Close: invalidations from the other
// replicas are applied and acknowledged, acknowledgements are counted,
// pings keep the connection checked.
func (c *Cache) receive(ctx context.Context) {
	defer close(c.done)
	pingEvery := max(c.opts.StaleAfter/3, 10*time.Millisecond)
	for {
		msg, err := c.ps.ReceiveTimeout(ctx, pingEvery)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				_ = c.ps.Ping(ctx) // the pong is a message; a dead link is replaced on the next read
				continue
			}
			if c.subscribed.Swap(false) {
				c.opts.Log.Warn("lost the near-cache subscription; reading Redis until it is back", "error", err)
				c.dropAll()
			}
			select {
			case <-time.After(retryEvery):
			case <-ctx.Done():
				return
			}
			continue
		}
		now := c.now()
		if now-c.heard.Load() >= int64(c.opts.StaleAfter) {
			// Copies were not trusted during the silence; invalidations
			// sent meanwhile may still be queued behind this message.
			c.dropAll()
		}
		c.heard.Store(now)
		switch m := msg.(type) {
		case *redis.Subscription:
			if rediscache.Subscribed(m) && !c.subscribed.Load() {
				c.dropAll()
				c.subscribed.Store(true)
				c.opts.Log.Info("near-cache subscription restored")
			}
		case *redis.Message:
			c.handle(ctx, m.Payload)
		}
	}
}

func (c *Cache) handle(ctx context.Context, payload string) {
	var m message
	if err := json.Unmarshal([]byte(payload), &m); err != nil || m.ID == "" {
		c.opts.Log.Debug("ignoring a malformed near-cache message", "payload_len", len(payload))
		return
	}
	switch m.Type {
	case "ack":
		c.ack(m.ID)
	case "inv":
		if m.Origin == c.origin {
			c.ack(m.ID) // our own copies were dropped before publishing
			return
		}
		if c.opts.Lag != nil && m.Sent > 0 {
			c.opts.Lag(time.Unix(0, m.Sent))
		}
		if m.Prefix != nil {
			c.dropPrefix(*m.Prefix)
		} else {
			c.dropKeys(m.Keys)
		}
		raw, _ := json.Marshal(message{Type: "ack", Origin: c.origin, ID: m.ID})
		pctx, cancel := context.WithTimeout(ctx, publishFor)
		if err := rediscache.Publish(pctx, c.client, c.opts.Channel, raw).Err(); err != nil {
			c.opts.Log.Debug("acknowledging an invalidation failed", "error", err)
		}
		cancel()
	}
}

// Stats are counters of a Cache.
type Stats struct {
	// Hits and Misses count reads of near keys; Fills copies kept; Skipped
	// copies not kept (an invalidation raced the read, or untrusted);
	// Invalidations local drops; AckTimeouts invalidations not confirmed
	// by every replica in time; Entries copies held now.
	Hits, Misses, Fills, Skipped, Invalidations, AckTimeouts, Entries int64
	// Trusted: the copies may answer now.
	Trusted bool
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	var n int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += int64(len(s.m))
		s.mu.RUnlock()
	}
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Fills: c.fills.Load(), Skipped: c.skipped.Load(),
		Invalidations: c.invalidations.Load(), AckTimeouts: c.ackTimeouts.Load(), Entries: n,
		Trusted: c.trusted(c.now()),
	}
}
