package captcha

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/adminkernel/kernel/host/cache"
)

// fakeStore is a minimal in-memory cache.Store with a settable clock.
type fakeStore struct {
	mu      sync.Mutex
	now     time.Time
	vals    map[string]fakeItem
	fail    error
	takeHit int
}

type fakeItem struct {
	val []byte
	n   int64
	exp time.Time // zero: never
}

var _ cache.Store = (*fakeStore)(nil)

func newFakeStore() *fakeStore {
	return &fakeStore{now: time.Unix(1_700_000_000, 0), vals: map[string]fakeItem{}}
}

func (s *fakeStore) advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

func (s *fakeStore) live(key string) (fakeItem, bool) {
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

func (s *fakeStore) expiry(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return s.now.Add(ttl)
}

func (s *fakeStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, false, s.fail
	}
	it, ok := s.live(key)
	return it.val, ok, nil
}

func (s *fakeStore) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.vals[key] = fakeItem{val: append([]byte(nil), val...), exp: s.expiry(ttl)}
	return nil
}

func (s *fakeStore) Delete(_ context.Context, keys ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.vals, k)
	}
	return s.fail
}

func (s *fakeStore) DeletePrefix(_ context.Context, prefix string) (int, error) {
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

func (s *fakeStore) PutOnce(_ context.Context, key string, val []byte, ttl time.Duration) error {
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

func (s *fakeStore) Take(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, false, s.fail
	}
	it, ok := s.live(key)
	if ok {
		delete(s.vals, key)
		s.takeHit++
	}
	return it.val, ok, nil
}

func (s *fakeStore) Incr(_ context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
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

func (s *fakeStore) Count(_ context.Context, key string) (int64, time.Duration, error) {
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

func (s *fakeStore) Reset(_ context.Context, keys ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.vals, k)
	}
	return s.fail
}

func (s *fakeStore) Ping(context.Context) error { return s.fail }
func (s *fakeStore) Close() error               { return nil }
