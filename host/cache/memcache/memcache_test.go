package memcache

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/cachetest"
)

func newCache(t *testing.T, opts Options) *Cache {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Store {
		return newCache(t, Options{EntryLimit: 100_000, MaxEntryAge: 24 * time.Hour})
	})
}

func TestConformanceUnlimited(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Store { return newCache(t, Options{}) })
}

// fakeClock is a settable clock for Options.Now.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestEntryLimit(t *testing.T) {
	ctx := context.Background()
	c := newCache(t, Options{EntryLimit: 100})
	const n = 1000
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if err := c.Set(ctx, "e:"+k, []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := c.PutOnce(ctx, "o:"+k, []byte(k), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Incr(ctx, "c:"+k, 1, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for i := range n {
		if _, ok, _ := c.Get(ctx, fmt.Sprintf("e:k%d", i)); ok {
			kept++
		}
	}
	if kept == 0 || kept > 100 {
		t.Fatalf("%d of %d entries retrievable with EntryLimit 100; want 1..100", kept, n)
	}
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		if v, ok, err := c.Take(ctx, "o:"+k); err != nil || !ok || string(v) != k {
			t.Fatalf("one-time value %s lost: %q, %v, %v", k, v, ok, err)
		}
		if got, _, err := c.Count(ctx, "c:"+k); err != nil || got != 1 {
			t.Fatalf("counter %s = %d, %v; want 1", k, got, err)
		}
	}
	t.Logf("EntryLimit 100: %d of %d entries kept", kept, n)
}

// Without a limit ristretto keeps every Set, sequential or concurrent.
func TestSetsNotDropped(t *testing.T) {
	ctx := context.Background()
	c := newCache(t, Options{EntryLimit: 100_000})
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := c.Set(ctx, fmt.Sprintf("%d:%d", w, i), []byte("v"), time.Hour); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	missing := 0
	for w := range workers {
		for i := range each {
			if _, ok, _ := c.Get(ctx, fmt.Sprintf("%d:%d", w, i)); !ok {
				missing++
			}
		}
	}
	if missing != 0 {
		t.Fatalf("%d of %d sets dropped below the entry limit", missing, workers*each)
	}
}

func TestMaxEntryAge(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c := newCache(t, Options{MaxEntryAge: time.Minute, Now: clk.Now})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, "e:nottl", []byte("v"), 0))
	must(c.Set(ctx, "e:long", []byte("v"), time.Hour))
	must(c.Set(ctx, "e:short", []byte("v"), 30*time.Second))
	must(c.PutOnce(ctx, "o:long", []byte("v"), time.Hour))
	_, err := c.Incr(ctx, "c:long", 1, time.Hour)
	must(err)
	_, err = c.Incr(ctx, "c:forever", 1, 0)
	must(err)

	clk.Advance(31 * time.Second)
	if _, ok, _ := c.Get(ctx, "e:short"); ok {
		t.Error("entry with 30 s ttl present after 31 s")
	}
	if _, ok, _ := c.Get(ctx, "e:long"); !ok {
		t.Error("entry with 1 h ttl missing after 31 s")
	}

	clk.Advance(30 * time.Second) // 61 s: past the backstop
	for _, k := range []string{"e:nottl", "e:long"} {
		if _, ok, _ := c.Get(ctx, k); ok {
			t.Errorf("%s present after MaxEntryAge", k)
		}
	}
	if n, err := c.DeletePrefix(ctx, "e:"); err != nil || n != 0 {
		t.Errorf("DeletePrefix counted expired entries: %d, %v", n, err)
	}
	if n, ttl, _ := c.Count(ctx, "c:long"); n != 1 || ttl != time.Hour-61*time.Second {
		t.Errorf("counter after MaxEntryAge = %d, %s; want 1, %s", n, ttl, time.Hour-61*time.Second)
	}
	if n, _, _ := c.Count(ctx, "c:forever"); n != 1 {
		t.Errorf("counter without ttl = %d after MaxEntryAge, want 1", n)
	}
	if _, ok, _ := c.Take(ctx, "o:long"); !ok {
		t.Error("one-time value lost to MaxEntryAge")
	}
}

func TestJanitorSweeps(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c := newCache(t, Options{Now: clk.Now, sweepEvery: 5 * time.Millisecond})
	_ = c.PutOnce(ctx, "o:1", []byte("v"), time.Second)
	_ = c.PutOnce(ctx, "o:2", []byte("v"), time.Hour)
	_, _ = c.Incr(ctx, "c:1", 1, time.Second)
	_, _ = c.Incr(ctx, "c:2", 1, 0)
	clk.Advance(2 * time.Second)
	deadline := time.Now().Add(2 * time.Second)
	for {
		c.mu.Lock()
		once, ctrs := len(c.once), len(c.counters)
		c.mu.Unlock()
		if once == 1 && ctrs == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("janitor left %d one-time values and %d counters; want 1 and 1", once, ctrs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	c, err := New(Options{EntryLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if runtime.NumGoroutine() <= before {
		t.Fatal("New started no goroutines")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	default:
		t.Fatal("janitor still running after Close")
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before New, %d after Close", before, runtime.NumGoroutine())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	if _, ok, err := c.Get(ctx, "k"); err == nil || ok {
		t.Fatalf("Get after Close = %v, %v; want ErrClosed", ok, err)
	}
	if err := c.Set(ctx, "k", nil, 0); err == nil {
		t.Fatal("Set after Close: err = nil")
	}
	if err := c.Ping(ctx); err == nil {
		t.Fatal("Ping after Close: err = nil")
	}
}

func TestNewRejectsNegative(t *testing.T) {
	if _, err := New(Options{EntryLimit: -1}); err == nil {
		t.Error("EntryLimit -1: err = nil")
	}
	if _, err := New(Options{MaxEntryAge: -time.Second}); err == nil {
		t.Error("MaxEntryAge -1s: err = nil")
	}
}
