// Package cache is the kernel's cache contract. Two implementations satisfy
// it: memcache (in process: ristretto for bounded entries, a mutex-guarded
// TTL map for one-time values and counters) and rediscache (shared by every
// replica). Kernel features depend on Store only.
//
// Three kinds of data live here, with different guarantees:
//
//   - Entries (Get/Set/Delete/DeletePrefix): derived data such as permission
//     sets, config values and session-active marks. They may be evicted at
//     any time (in process: size cap Service:Cache:MemoryEntryLimit and age
//     backstop Service:Cache:MaxEntryMinutes); a miss means "read the
//     database".
//   - One-time values (PutOnce/Take): authorize states, login tickets,
//     pending-link tickets, captcha answers, SMS codes. Never evicted before
//     their TTL; Take is atomic: of any number of concurrent callers exactly
//     one receives the value.
//   - Counters (Incr/Count/Reset): rate-limit windows, lockout counters, the
//     portal generation. Exempt from size eviction and the age backstop.
//
// In Redis the three kinds share one keyspace, so callers give each kind
// its own key names (distinct prefixes); using one key for two kinds, or a
// DeletePrefix prefix that spans kinds, has backend-specific results.
//
// Every method fails closed: an error is never a hit, a successful take or a
// zero count the caller may trust.
package cache

import (
	"context"
	"errors"
	"time"
)

// ErrExists is returned by PutOnce when the key is already held.
var ErrExists = errors.New("cache: key already exists")

// ErrUnavailable is matched (errors.Is) by the errors of a shared cache
// that could not be reached: connection refused, reset or closed, a dial or
// I/O timeout, an exhausted connection pool, or a server that says it
// cannot serve now (LOADING, BUSY, READONLY after a failover, MASTERDOWN,
// TRYAGAIN, CLUSTERDOWN, OOM, max clients). rediscache marks them where it
// sees them (host/outage); the central error handler answers them with 503
// / 50002 CacheUnavailable and Retry-After, and the request may be retried
// once the cache is back. Other errors (a wrong type, a script error, bad
// credentials) are bugs or misconfiguration and stay unmarked.
var ErrUnavailable = errors.New("cache: unavailable")

// Store is the cache used by kernel features.
type Store interface {
	// Get returns the entry under key; ok is false when it is absent or
	// expired.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Set stores an entry for ttl (ttl <= 0: only the backstop applies).
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Delete removes entries (missing keys are not an error).
	Delete(ctx context.Context, keys ...string) error
	// DeletePrefix removes every entry whose key starts with prefix and
	// returns how many live (unexpired) entries were removed. Glob
	// characters in prefix are literal.
	DeletePrefix(ctx context.Context, prefix string) (int, error)

	// PutOnce stores a one-time value for ttl (> 0; otherwise an error). It
	// returns ErrExists when the key is held by a value that has not
	// expired.
	PutOnce(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Take atomically returns and removes a one-time value; ok is false when
	// it is absent or expired.
	Take(ctx context.Context, key string) (val []byte, ok bool, err error)

	// Incr adds delta to a counter and returns the new value. When the
	// counter did not exist it starts at 0 and expires after ttl (a fixed
	// window: later increments do not extend it); ttl <= 0 never expires.
	Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
	// Count returns a counter's value (0 when absent) and its remaining
	// lifetime (0 when absent or without expiry).
	Count(ctx context.Context, key string) (n int64, ttl time.Duration, err error)
	// Reset removes counters.
	Reset(ctx context.Context, keys ...string) error

	// Ping reports whether the backend answers (readiness).
	Ping(ctx context.Context) error
	// Close releases the backend.
	Close() error
}

// Peeker is implemented by stores that can hand out an entry without
// copying it. The returned slice is shared with the store: the caller must
// not modify it, and must not keep it beyond the current request (a later
// Set replaces the entry but never changes a slice already handed out).
// The kernel's hot path (session marks, permission sets, config switches)
// reads through Peek to avoid one allocation and copy per read.
type Peeker interface {
	Peek(ctx context.Context, key string) (val []byte, ok bool, err error)
}

// Peek returns the entry under key through s's Peeker when it has one and
// through Get otherwise. The result is read-only (see Peeker).
func Peek(ctx context.Context, s Store, key string) ([]byte, bool, error) {
	if p, ok := s.(Peeker); ok {
		return p.Peek(ctx, key)
	}
	return s.Get(ctx, key)
}

// Entry is one key and value for SetMany.
type Entry struct {
	Key string
	Val []byte
}

// MultiSetter is implemented by stores that write several entries at once
// (Redis: one pipelined round trip instead of one per entry).
type MultiSetter interface {
	SetMany(ctx context.Context, entries []Entry, ttl time.Duration) error
}

// SetMany stores every entry for ttl, through s's MultiSetter when it has
// one and one Set at a time otherwise (stopping at the first error). On an
// error some entries may have been written and others not, as with that
// many Sets.
func SetMany(ctx context.Context, s Store, entries []Entry, ttl time.Duration) error {
	if m, ok := s.(MultiSetter); ok {
		return m.SetMany(ctx, entries, ttl)
	}
	for _, e := range entries {
		if err := s.Set(ctx, e.Key, e.Val, ttl); err != nil {
			return err
		}
	}
	return nil
}
