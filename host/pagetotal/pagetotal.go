// Package pagetotal caches the totals of list pages: the exact
// COUNT(*) a paged list answers next to its rows, which on a table of a
// million rows costs tens of milliseconds of database CPU per request
// while the rows themselves come from an index in a few.
//
// A total is cached per table and per key: the caller's exact filter and
// data scope (the inputs of the WHERE clause; two callers share an entry
// only when they would run the same statement). An entry is used for at
// most TTL (Service:Cache:ListTotalSeconds) and only while the table's
// generation is the one read before the total was counted:
//
//   - every committed write that can change a total bumps the generation
//     (Track installs ent hooks: a write in a transaction bumps after the
//     commit, once per transaction), in this process (a local counter) and
//     in the shared cache (a counter of cache.Store, in Redis shared by
//     every replica);
//   - a read takes both generations before it counts, so a total counted
//     before a write is never served after that write has committed: not on
//     this replica, and not on another one as long as the shared cache took
//     the bump (the write's request has not answered before). If the bump
//     could not reach the shared cache (it is logged), another replica may
//     serve the older total for at most TTL.
//
// Concurrent identical misses count once (a flight per key and
// generation); a hit reads one counter of the shared cache and no database.
// Entries are capped (MaxEntries); a failing shared cache means "count"
// (never a cached total that could not be checked).
package pagetotal

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
)

// GenPrefix namespaces the generation counters in the shared cache
// ("pagetotal:gen:<table>").
const GenPrefix = "pagetotal:gen:"

// DefaultMaxEntries bounds the cached totals of one process.
const DefaultMaxEntries = 4096

// Options configures New.
type Options struct {
	// TTL is how long a total may be served (<= 0: caching off, every
	// call counts).
	TTL time.Duration
	// MaxEntries caps the cached totals (default DefaultMaxEntries).
	MaxEntries int
	// Log receives the bumps that could not reach the shared cache.
	Log hclog.Logger
	// Now is the clock (tests; default time.Now).
	Now func() time.Time
}

// Stats are the counters of a Totals.
type Stats struct {
	Hits, Misses, Entries int
}

type entry struct {
	total   int
	expires time.Time
}

type flight struct {
	done  chan struct{}
	total int
	err   error
}

// Totals caches list totals; make one with New. A nil *Totals is valid and
// counts every time.
type Totals struct {
	store cache.Store
	opts  Options

	mu      sync.Mutex
	local   map[string]uint64 // table -> local generation
	entries map[string]entry  // key (table, generations, hash) -> total
	flights map[string]*flight

	hits, misses atomic.Int64
	pending      sync.Map // *ent.Tx (or any) -> struct{}: a bump already registered
}

// New returns a Totals over store (the shared cache; nil: local
// generations only).
func New(store cache.Store, opts Options) *Totals {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Totals{store: store, opts: opts, local: map[string]uint64{}, entries: map[string]entry{}, flights: map[string]*flight{}}
}

// Stats returns the hit and miss counters and the number of entries.
func (t *Totals) Stats() Stats {
	if t == nil {
		return Stats{}
	}
	t.mu.Lock()
	n := len(t.entries)
	t.mu.Unlock()
	return Stats{Hits: int(t.hits.Load()), Misses: int(t.misses.Load()), Entries: n}
}

// Total returns the total of the list of table identified by key (the
// exact filter and data scope of the query count counts), cached, or
// count's result. count runs at most once at a time per key and
// generation.
func (t *Totals) Total(ctx context.Context, table, key string, count func(context.Context) (int, error)) (int, error) {
	if t == nil || t.opts.TTL <= 0 {
		return count(ctx)
	}
	t.mu.Lock()
	local := t.local[table]
	t.mu.Unlock()
	var shared int64
	if t.store != nil {
		n, _, err := t.store.Count(ctx, GenPrefix+table)
		if err != nil {
			// The generation cannot be checked: never trust a cached total.
			t.misses.Add(1)
			return count(ctx)
		}
		shared = n
	}
	sum := sha256.Sum256([]byte(key))
	k := table + "\x00" + strconv.FormatUint(local, 10) + "\x00" + strconv.FormatInt(shared, 10) + "\x00" + string(sum[:])
	for {
		now := t.opts.Now()
		t.mu.Lock()
		if e, ok := t.entries[k]; ok {
			if now.Before(e.expires) {
				t.mu.Unlock()
				t.hits.Add(1)
				return e.total, nil
			}
			delete(t.entries, k)
		}
		if f, ok := t.flights[k]; ok {
			t.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			if f.err == nil {
				t.hits.Add(1)
				return f.total, nil
			}
			if ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
				continue // the leader's request went away, not ours: count again
			}
			return 0, f.err
		}
		f := &flight{done: make(chan struct{})}
		t.flights[k] = f
		t.mu.Unlock()
		t.misses.Add(1)

		f.total, f.err = count(ctx)
		expires := t.opts.Now().Add(t.opts.TTL)
		t.mu.Lock()
		delete(t.flights, k)
		if f.err == nil && t.local[table] == local {
			t.put(k, entry{total: f.total, expires: expires})
		}
		t.mu.Unlock()
		close(f.done)
		return f.total, f.err
	}
}

// put stores an entry within the cap (t.mu held): expired entries go
// first, then arbitrary ones.
func (t *Totals) put(k string, e entry) {
	if _, ok := t.entries[k]; !ok && len(t.entries) >= t.opts.MaxEntries {
		now := t.opts.Now()
		for key, old := range t.entries {
			if !now.Before(old.expires) {
				delete(t.entries, key)
			}
		}
		for key := range t.entries {
			if len(t.entries) < t.opts.MaxEntries {
				break
			}
			delete(t.entries, key)
		}
	}
	t.entries[k] = e
}

// Bump starts a new generation of table's totals: call it after a write
// that may change them has committed. The local generation changes at
// once (this process never serves an older total again); the shared one
// is incremented in the cache (logged when that fails).
func (t *Totals) Bump(ctx context.Context, table string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.local[table]++
	prefix := table + "\x00"
	for k := range t.entries {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			delete(t.entries, k)
		}
	}
	t.mu.Unlock()
	if t.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if _, err := t.store.Incr(ctx, GenPrefix+table, 1, 0); err != nil {
		t.opts.Log.Warn("list totals: the generation bump did not reach the shared cache; other replicas may serve an older total until it expires",
			"table", table, "ttl", t.opts.TTL, "error", err)
	}
}
