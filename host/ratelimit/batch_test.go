package ratelimit

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
)

// countingStore counts the Incr calls reaching the store (round trips with
// Redis).
type countingStore struct {
	cache.Store
	incrs atomic.Int64
}

func (s *countingStore) Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	s.incrs.Add(1)
	return s.Store.Incr(ctx, key, delta, ttl)
}

// replicaApp is one replica's limiter over a shared store.
func replicaApp(t *testing.T, store cache.Store, clk *clock, opts Options) *fiber.App {
	t.Helper()
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	opts.Now, opts.Log = clk.Now, hclog.NewNullLogger()
	if opts.PasswordPaths == nil {
		opts.PasswordPaths = []string{} // /api/v1/auth/login stands for the auth bucket here
	}
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), nil)})
	app.Use(New(store, opts))
	ok := func(c fiber.Ctx) error { return envelope.OK(c, true) }
	app.Get("/api/v1/ping", ok)
	app.Post("/api/v1/auth/login", ok)
	return app
}

func limitOf(n int) func(context.Context) int { return func(context.Context) int { return n } }

func TestBatchedGeneralBucket(t *testing.T) {
	t.Run("one replica: exact allowance, one round trip per batch", func(t *testing.T) {
		store := &countingStore{Store: newFakeStore()}
		clk := &clock{t: windowStart.Add(15 * time.Second)}
		app := replicaApp(t, store, clk, Options{Batch: 16, Limit: limitOf(100)})
		for range 100 {
			expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "request within the allowance")
		}
		expectLimited(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), 60)
		if n := store.incrs.Load(); n > 101/16+3 {
			t.Fatalf("%d round trips for 101 requests with Batch 16", n)
		}
		// The next window starts afresh.
		clk.advance(60 * time.Second)
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "next window")
	})

	t.Run("replicas share the allowance, overshoot bounded", func(t *testing.T) {
		store := &countingStore{Store: newFakeStore()}
		clk := &clock{t: windowStart.Add(15 * time.Second)}
		const limit, batch, replicas = 100, 16, 3
		apps := make([]*fiber.App, replicas)
		for i := range apps {
			apps[i] = replicaApp(t, store, clk, Options{Batch: batch, Limit: limitOf(limit)})
		}
		allowed := 0
		for i := range 300 {
			if r := do(t, apps[i%replicas], http.MethodGet, "/api/v1/ping", ""); r.status == http.StatusOK {
				allowed++
			} else if r.status != http.StatusTooManyRequests {
				t.Fatalf("status %d", r.status)
			}
		}
		if allowed < limit || allowed > limit+(replicas-1)*(batch-1) {
			t.Fatalf("%d requests allowed over %d replicas; want %d..%d", allowed, replicas, limit, limit+(replicas-1)*(batch-1))
		}
		// Past the allowance every replica asks the store: once a replica
		// refused, the shared count is above the limit.
		n, _, err := store.Count(context.Background(), "rl:api:0.0.0.0:"+strconv.FormatInt(windowStart.Unix(), 10))
		if err != nil || n <= limit {
			t.Fatalf("shared count %d, %v; want above %d", n, err, limit)
		}
	})

	t.Run("a request that read the clock before the window changed keeps the new window's counts", func(t *testing.T) {
		store := &countingStore{Store: newFakeStore()}
		clk := &clock{t: windowStart.Add(59 * time.Second)}
		app := replicaApp(t, store, clk, Options{Batch: 16, Limit: limitOf(20)})
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "last second of the first window")
		clk.advance(2 * time.Second)
		for range 20 {
			expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "request within the new window's allowance")
		}
		clk.advance(-2 * time.Second) // a late request of the first window
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "late request of the first window")
		clk.advance(2 * time.Second)
		expectLimited(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), 60)
	})

	t.Run("the auth bucket is never batched", func(t *testing.T) {
		store := &countingStore{Store: newFakeStore()}
		clk := &clock{t: windowStart.Add(15 * time.Second)}
		app := replicaApp(t, store, clk, Options{Batch: 16, AuthLimit: limitOf(5)})
		for range 5 {
			expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "login within the allowance")
		}
		expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), 60)
		if n := store.incrs.Load(); n != 6 {
			t.Fatalf("%d round trips for 6 auth requests, want 6", n)
		}
	})
}
