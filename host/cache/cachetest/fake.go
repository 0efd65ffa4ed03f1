package cachetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/adminkernel/kernel/host/cache"
)

// Fake is a minimal in-memory cache.Store with a settable clock and an
// injectable failure, for unit tests of cache users. Kernel-level tests use
// the real memcache and rediscache.
type Fake struct {
	mu   sync.Mutex
	now  time.Time
	vals map[string]fakeItem
	fail error
}

type fakeItem struct {
	val []byte
	n   int64
	exp time.Time // zero: never
}

var _ cache.Store = (*Fake)(nil)

// NewFake returns an empty store whose clock starts at a fixed instant.
func NewFake() *Fake {
	return &Fake{now: time.Unix(1_700_000_000, 0), vals: map[string]fakeItem{}}
}

// Advance moves the clock forward.
func (s *Fake) Advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

// Fail makes every later call return err (nil heals the store).
func (s *Fake) Fail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// Raw returns the stored bytes under key, live or not (tests inspect what
// a cache user wrote).
func (s *Fake) Raw(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.vals[key]
	return it.val, ok
}

// Keys lists every stored key.
func (s *Fake) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.vals))
	for k := range s.vals {
		out = append(out, k)
	}
	return out
}

func (s *Fake) live(key string) (fakeItem, bool) {
	it, ok := s.vals[key]
	if !ok {
		return it, false
	}
	if !it.exp.IsZero() && !s.now.Before(it.exp) {
		delete(s.vals, key)
		return it, false
	}
	return it, true
}

func (s *Fake) expiry(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return s.now.Add(ttl)
}

func (s *Fake) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, false, s.fail
	}
	it, ok := s.live(key)
	return it.val, ok, nil
}

func (s *Fake) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.vals[key] = fakeItem{val: append([]byte(nil), val...), exp: s.expiry(ttl)}
	return nil
}

func (s *Fake) Delete(_ context.Context, keys ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.vals, k)
	}
	return s.fail
}

func (s *Fake) DeletePrefix(_ context.Context, prefix string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.vals {
		if strings.HasPrefix(k, prefix) {
			delete(s.vals, k)
			n++
		}
	}
	return n, s.fail
}

func (s *Fake) PutOnce(_ context.Context, key string, val []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if ttl <= 0 {
		return errors.New("fake: ttl must be > 0")
	}
	if _, ok := s.live(key); ok {
		return cache.ErrExists
	}
	s.vals[key] = fakeItem{val: append([]byte(nil), val...), exp: s.expiry(ttl)}
	return nil
}

func (s *Fake) Take(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, false, s.fail
	}
	it, ok := s.live(key)
	if ok {
		delete(s.vals, key)
	}
	return it.val, ok, nil
}

func (s *Fake) Incr(_ context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	it, ok := s.live(key)
	if !ok {
		it = fakeItem{exp: s.expiry(ttl)}
	}
	it.n += delta
	s.vals[key] = it
	return it.n, nil
}

func (s *Fake) Count(_ context.Context, key string) (int64, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, 0, s.fail
	}
	it, ok := s.live(key)
	if !ok {
		return 0, 0, nil
	}
	var ttl time.Duration
	if !it.exp.IsZero() {
		ttl = it.exp.Sub(s.now)
	}
	return it.n, ttl, nil
}

func (s *Fake) Reset(_ context.Context, keys ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.vals, k)
	}
	return s.fail
}

func (s *Fake) Ping(context.Context) error { return s.fail }
func (s *Fake) Close() error               { return nil }
