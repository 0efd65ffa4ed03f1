package telemetry

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/adminkernel/kernel/host/cache"
)

// cacheKinds are the cache entry kinds counted by name: the first segment
// of the key (sess:..., perm:...). Any other key counts as "other", so a
// key never becomes a label.
var cacheKinds = []string{
	"sess", "perm", "scope", "cfg", "dict", "reauth", "portal", "mfa", "captcha",
	"extauth", "lk", "passkey", "job", "other",
}

type cacheCounters struct {
	hits, misses *prometheus.CounterVec
	hit, miss    map[string]prometheus.Counter
}

func newCacheCounters() *cacheCounters {
	c := &cacheCounters{
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "cache", Name: "hits_total",
			Help: "Cache reads that found their entry, by kind (the key's first segment).",
		}, []string{"kind"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "cache", Name: "misses_total",
			Help: "Cache reads that found nothing (absent or expired), by kind.",
		}, []string{"kind"}),
		hit:  make(map[string]prometheus.Counter, len(cacheKinds)),
		miss: make(map[string]prometheus.Counter, len(cacheKinds)),
	}
	for _, k := range cacheKinds {
		c.hit[k] = c.hits.WithLabelValues(k)
		c.miss[k] = c.misses.WithLabelValues(k)
	}
	return c
}

// count records one read of key.
func (c *cacheCounters) count(key string, ok bool, err error) {
	if err != nil {
		return
	}
	kind := key
	if i := strings.IndexByte(key, ':'); i >= 0 {
		kind = key[:i]
	}
	m := c.miss
	if ok {
		m = c.hit
	}
	ctr, known := m[kind]
	if !known {
		ctr = m["other"]
	}
	ctr.Inc()
}

// CountCache returns store with its reads (Get, Peek) counted as hits and
// misses by kind. With a nil receiver it returns store itself.
func (m *Metrics) CountCache(store cache.Store) cache.Store {
	if m == nil || store == nil {
		return store
	}
	if p, ok := store.(cache.Peeker); ok {
		return &countedPeeker{countedStore{Store: store, c: m.cache}, p}
	}
	return &countedStore{Store: store, c: m.cache}
}

// countedStore is a Store whose reads are counted.
type countedStore struct {
	cache.Store
	c *cacheCounters
}

func (s *countedStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := s.Store.Get(ctx, key)
	s.c.count(key, ok, err)
	return v, ok, err
}

// SetMany keeps the batch write of the store under the counting
// (cache.MultiSetter; one Set at a time when it has none).
func (s *countedStore) SetMany(ctx context.Context, entries []cache.Entry, ttl time.Duration) error {
	return cache.SetMany(ctx, s.Store, entries, ttl)
}

// Unwrap returns the store under the counting.
func (s *countedStore) Unwrap() cache.Store { return s.Store }

// countedPeeker keeps the Peeker of a store that has one.
type countedPeeker struct {
	countedStore
	p cache.Peeker
}

func (s *countedPeeker) Peek(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := s.p.Peek(ctx, key)
	s.c.count(key, ok, err)
	return v, ok, err
}
