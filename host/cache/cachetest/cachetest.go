// Package cachetest is the conformance suite every cache.Store passes.
//
// Run calls newStore once per subtest; the factory returns a fresh, empty
// store (or one isolated by key prefix) and registers its own cleanup. The
// subtests run in parallel and use short TTLs, so the suite takes well under
// a second of wall time beyond the backend's latency.
package cachetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache"
)

// Run runs the conformance suite against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) cache.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, s cache.Store)
	}{
		{"GetSetExpiry", testGetSetExpiry},
		{"SetOverwrites", testSetOverwrites},
		{"SetMany", testSetMany},
		{"Peek", testPeek},
		{"Delete", testDelete},
		{"DeletePrefix", testDeletePrefix},
		{"DeletePrefixGlobChars", testDeletePrefixGlob},
		{"DeletePrefixMany", testDeletePrefixMany},
		{"PutOnceTake", testPutOnceTake},
		{"PutOnceRejectsNoTTL", testPutOnceNoTTL},
		{"ExpiredOnceCannotBeTaken", testOnceExpiry},
		{"ConcurrentTake", testConcurrentTake},
		{"ConcurrentPutOnce", testConcurrentPutOnce},
		{"IncrFixedWindow", testIncrWindow},
		{"IncrWithoutTTL", testIncrNoTTL},
		{"CountAbsent", testCountAbsent},
		{"Reset", testReset},
		{"ConcurrentIncr", testConcurrentIncr},
		{"CancelledContext", testCancelled},
		{"Ping", testPing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tc.fn(t, ctx, newStore(t))
		})
	}
}

func testGetSetExpiry(t *testing.T, ctx context.Context, s cache.Store) {
	if _, ok := get(t, ctx, s, "e:missing"); ok {
		t.Fatal("Get of a missing key: ok = true")
	}
	must(t, s.Set(ctx, "e:short", []byte("v1"), 150*time.Millisecond))
	must(t, s.Set(ctx, "e:forever", []byte("v2"), 0))
	must(t, s.Set(ctx, "e:empty", nil, time.Minute))
	wantGet(t, ctx, s, "e:short", "v1")
	wantGet(t, ctx, s, "e:forever", "v2")
	wantGet(t, ctx, s, "e:empty", "")

	// The returned slice is the caller's: changing it leaves the entry alone.
	v, _ := get(t, ctx, s, "e:forever")
	v[0] = 'X'
	wantGet(t, ctx, s, "e:forever", "v2")

	time.Sleep(250 * time.Millisecond)
	if _, ok := get(t, ctx, s, "e:short"); ok {
		t.Fatal("entry still present after its ttl")
	}
	wantGet(t, ctx, s, "e:forever", "v2")
}

func testSetOverwrites(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.Set(ctx, "e:k", []byte("old"), time.Minute))
	must(t, s.Set(ctx, "e:k", []byte("new"), time.Minute))
	wantGet(t, ctx, s, "e:k", "new")
}

// testSetMany: cache.SetMany (the store's batch write, or one Set at a
// time) stores every entry with the ttl, overwrites, accepts an empty
// batch, and writes nothing with a cancelled context.
func testSetMany(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.Set(ctx, "m:0", []byte("old"), time.Minute))
	var batch []cache.Entry
	for i := range 300 {
		batch = append(batch, cache.Entry{Key: fmt.Sprintf("m:%d", i), Val: []byte(fmt.Sprintf("v%d", i))})
	}
	must(t, cache.SetMany(ctx, s, batch, 150*time.Millisecond))
	must(t, cache.SetMany(ctx, s, nil, time.Minute))
	for _, i := range []int{0, 1, 150, 299} {
		wantGet(t, ctx, s, fmt.Sprintf("m:%d", i), fmt.Sprintf("v%d", i))
	}
	if _, ok := get(t, ctx, s, "m:300"); ok {
		t.Fatal("an entry SetMany was not given is present")
	}
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if err := cache.SetMany(dead, s, []cache.Entry{{Key: "m:dead", Val: []byte("v")}}, time.Minute); err == nil {
		t.Error("SetMany with a cancelled context: err = nil")
	}
	if _, ok := get(t, ctx, s, "m:dead"); ok {
		t.Error("SetMany with a cancelled context stored the entry")
	}
	time.Sleep(250 * time.Millisecond)
	for _, i := range []int{0, 299} {
		if _, ok := get(t, ctx, s, fmt.Sprintf("m:%d", i)); ok {
			t.Fatalf("m:%d still present after the ttl of SetMany", i)
		}
	}
}

// testPeek: cache.Peek (the store's copy-free read, or Get) sees what Get
// sees, and a slice it handed out keeps its bytes when the entry is
// replaced or deleted.
func testPeek(t *testing.T, ctx context.Context, s cache.Store) {
	peek := func(key string) (string, bool) {
		t.Helper()
		v, ok, err := cache.Peek(ctx, s, key)
		must(t, err)
		return string(v), ok
	}
	if _, ok := peek("p:missing"); ok {
		t.Fatal("Peek of a missing key: ok = true")
	}
	must(t, s.Set(ctx, "p:k", []byte("first"), time.Minute))
	held, ok, err := cache.Peek(ctx, s, "p:k")
	must(t, err)
	if !ok || string(held) != "first" {
		t.Fatalf("Peek = %q, %v; want first, true", held, ok)
	}
	must(t, s.Set(ctx, "p:k", []byte("second"), time.Minute))
	if v, ok := peek("p:k"); !ok || v != "second" {
		t.Fatalf("Peek after Set = %q, %v; want second, true", v, ok)
	}
	must(t, s.Delete(ctx, "p:k"))
	if _, ok := peek("p:k"); ok {
		t.Fatal("Peek after Delete: ok = true")
	}
	if string(held) != "first" {
		t.Fatalf("a slice Peek handed out changed to %q", held)
	}
	must(t, s.Set(ctx, "p:short", []byte("v"), 100*time.Millisecond))
	time.Sleep(200 * time.Millisecond)
	if _, ok := peek("p:short"); ok {
		t.Fatal("Peek of an expired entry: ok = true")
	}
}

func testDelete(t *testing.T, ctx context.Context, s cache.Store) {
	for _, k := range []string{"d:1", "d:2", "d:3"} {
		must(t, s.Set(ctx, k, []byte(k), time.Minute))
	}
	must(t, s.Delete(ctx, "d:1", "d:2", "d:missing"))
	must(t, s.Delete(ctx))
	for _, k := range []string{"d:1", "d:2"} {
		if _, ok := get(t, ctx, s, k); ok {
			t.Fatalf("%s present after Delete", k)
		}
	}
	wantGet(t, ctx, s, "d:3", "d:3")
}

func testDeletePrefix(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.Set(ctx, "p:a:old", []byte("x"), 50*time.Millisecond))
	for _, k := range []string{"p:a:1", "p:a:2", "p:a:3", "p:b:1", "p:ab", "p:a"} {
		must(t, s.Set(ctx, k, []byte(k), time.Minute))
	}
	time.Sleep(100 * time.Millisecond) // p:a:old expires: not counted
	n, err := s.DeletePrefix(ctx, "p:a:")
	must(t, err)
	if n != 3 {
		t.Fatalf("DeletePrefix(p:a:) = %d, want 3", n)
	}
	for _, k := range []string{"p:a:1", "p:a:2", "p:a:3"} {
		if _, ok := get(t, ctx, s, k); ok {
			t.Fatalf("%s present after DeletePrefix", k)
		}
	}
	for _, k := range []string{"p:b:1", "p:ab", "p:a"} {
		wantGet(t, ctx, s, k, k)
	}
	if n, err := s.DeletePrefix(ctx, "p:a:"); err != nil || n != 0 {
		t.Fatalf("second DeletePrefix = %d, %v; want 0, nil", n, err)
	}
}

func testDeletePrefixGlob(t *testing.T, ctx context.Context, s cache.Store) {
	// Glob metacharacters in the prefix are literal.
	for _, k := range []string{`g*?[x]\:1`, `g*?[x]\:2`, `gab[x]\:3`, `g*?x\:4`, `g:5`} {
		must(t, s.Set(ctx, k, []byte(k), time.Minute))
	}
	n, err := s.DeletePrefix(ctx, `g*?[x]\:`)
	must(t, err)
	if n != 2 {
		t.Fatalf("DeletePrefix with glob characters = %d, want 2", n)
	}
	for _, k := range []string{`gab[x]\:3`, `g*?x\:4`, `g:5`} {
		wantGet(t, ctx, s, k, k)
	}
}

func testDeletePrefixMany(t *testing.T, ctx context.Context, s cache.Store) {
	const n = 1200 // more than one scan batch
	for i := range n {
		must(t, s.Set(ctx, fmt.Sprintf("m:%04d", i), []byte("v"), time.Minute))
	}
	must(t, s.Set(ctx, "other", []byte("v"), time.Minute))
	got, err := s.DeletePrefix(ctx, "m:")
	must(t, err)
	if got != n {
		t.Fatalf("DeletePrefix(m:) = %d, want %d", got, n)
	}
	wantGet(t, ctx, s, "other", "v")
}

func testPutOnceTake(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.PutOnce(ctx, "o:k", []byte("state"), time.Minute))
	if err := s.PutOnce(ctx, "o:k", []byte("other"), time.Minute); !errors.Is(err, cache.ErrExists) {
		t.Fatalf("second PutOnce: err = %v, want cache.ErrExists", err)
	}
	v, ok, err := s.Take(ctx, "o:k")
	must(t, err)
	if !ok || string(v) != "state" {
		t.Fatalf("Take = %q, %v; want state, true", v, ok)
	}
	if _, ok, err := s.Take(ctx, "o:k"); err != nil || ok {
		t.Fatalf("second Take: ok = %v, err = %v; want false, nil", ok, err)
	}
	if _, ok, err := s.Take(ctx, "o:missing"); err != nil || ok {
		t.Fatalf("Take of a missing key: ok = %v, err = %v", ok, err)
	}
	// Once taken, the key can be held again.
	must(t, s.PutOnce(ctx, "o:k", []byte("again"), time.Minute))
}

func testPutOnceNoTTL(t *testing.T, ctx context.Context, s cache.Store) {
	if err := s.PutOnce(ctx, "o:nottl", []byte("v"), 0); err == nil {
		t.Fatal("PutOnce with ttl 0: err = nil")
	}
	if _, ok, _ := s.Take(ctx, "o:nottl"); ok {
		t.Fatal("PutOnce with ttl 0 stored a value")
	}
}

func testOnceExpiry(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.PutOnce(ctx, "o:exp", []byte("v"), 50*time.Millisecond))
	time.Sleep(100 * time.Millisecond)
	if _, ok, err := s.Take(ctx, "o:exp"); err != nil || ok {
		t.Fatalf("Take after expiry: ok = %v, err = %v; want false, nil", ok, err)
	}
	// An expired value no longer holds the key.
	must(t, s.PutOnce(ctx, "o:exp", []byte("v2"), time.Minute))
}

// parallel runs fn(i) for i in [0, n) on n goroutines released together.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

func testConcurrentTake(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.PutOnce(ctx, "o:race", []byte("v"), time.Minute))
	var wins, fails atomic.Int64
	parallel(50, func(int) {
		v, ok, err := s.Take(ctx, "o:race")
		switch {
		case err != nil:
			fails.Add(1)
		case ok && string(v) == "v":
			wins.Add(1)
		}
	})
	if wins.Load() != 1 || fails.Load() != 0 {
		t.Fatalf("50 concurrent Takes: %d succeeded, %d failed; want exactly 1 and 0", wins.Load(), fails.Load())
	}
}

func testConcurrentPutOnce(t *testing.T, ctx context.Context, s cache.Store) {
	var wins, exists, other atomic.Int64
	parallel(50, func(i int) {
		switch err := s.PutOnce(ctx, "o:put", fmt.Appendf(nil, "%d", i), time.Minute); {
		case err == nil:
			wins.Add(1)
		case errors.Is(err, cache.ErrExists):
			exists.Add(1)
		default:
			other.Add(1)
		}
	})
	if wins.Load() != 1 || exists.Load() != 49 || other.Load() != 0 {
		t.Fatalf("50 concurrent PutOnce: %d ok, %d ErrExists, %d other errors; want 1, 49, 0",
			wins.Load(), exists.Load(), other.Load())
	}
}

func testIncrWindow(t *testing.T, ctx context.Context, s cache.Store) {
	const window = 300 * time.Millisecond
	start := time.Now()
	wantIncr(t, ctx, s, "c:w", 3, window, 3)
	time.Sleep(100 * time.Millisecond)
	wantIncr(t, ctx, s, "c:w", 2, window, 5)
	n, ttl, err := s.Count(ctx, "c:w")
	must(t, err)
	// The second Incr must not have pushed the deadline out.
	if left := window - time.Since(start) + 20*time.Millisecond; n != 5 || ttl <= 0 || ttl > left {
		t.Fatalf("Count = %d, %s; want 5 and 0 < ttl <= %s", n, ttl, left)
	}
	time.Sleep(window - time.Since(start) + 50*time.Millisecond)
	if n, ttl, err := s.Count(ctx, "c:w"); err != nil || n != 0 || ttl != 0 {
		t.Fatalf("Count after the window = %d, %s, %v; want 0, 0, nil", n, ttl, err)
	}
	wantIncr(t, ctx, s, "c:w", 2, window, 2) // a new window starts at delta
	if _, ttl, _ := s.Count(ctx, "c:w"); ttl <= window-100*time.Millisecond || ttl > window {
		t.Fatalf("new window ttl = %s, want about %s", ttl, window)
	}
}

func testIncrNoTTL(t *testing.T, ctx context.Context, s cache.Store) {
	wantIncr(t, ctx, s, "c:gen", 1, 0, 1)
	wantIncr(t, ctx, s, "c:gen", 1, time.Minute, 2) // ttl applies only at creation
	n, ttl, err := s.Count(ctx, "c:gen")
	must(t, err)
	if n != 2 || ttl != 0 {
		t.Fatalf("Count = %d, %s; want 2, 0 (no expiry)", n, ttl)
	}
	wantIncr(t, ctx, s, "c:neg", -4, time.Minute, -4)
}

func testCountAbsent(t *testing.T, ctx context.Context, s cache.Store) {
	n, ttl, err := s.Count(ctx, "c:absent")
	must(t, err)
	if n != 0 || ttl != 0 {
		t.Fatalf("Count of an absent counter = %d, %s; want 0, 0", n, ttl)
	}
}

func testReset(t *testing.T, ctx context.Context, s cache.Store) {
	wantIncr(t, ctx, s, "c:r1", 5, time.Minute, 5)
	wantIncr(t, ctx, s, "c:r2", 5, time.Minute, 5)
	wantIncr(t, ctx, s, "c:r3", 5, time.Minute, 5)
	must(t, s.Reset(ctx, "c:r1", "c:r2", "c:missing"))
	must(t, s.Reset(ctx))
	for _, k := range []string{"c:r1", "c:r2"} {
		if n, _, err := s.Count(ctx, k); err != nil || n != 0 {
			t.Fatalf("Count(%s) after Reset = %d, %v", k, n, err)
		}
	}
	if n, _, _ := s.Count(ctx, "c:r3"); n != 5 {
		t.Fatalf("Count(c:r3) = %d, want 5 (not reset)", n)
	}
	wantIncr(t, ctx, s, "c:r1", 1, time.Minute, 1)
}

func testConcurrentIncr(t *testing.T, ctx context.Context, s cache.Store) {
	var errs atomic.Int64
	parallel(100, func(int) {
		for range 10 {
			if _, err := s.Incr(ctx, "c:many", 1, time.Minute); err != nil {
				errs.Add(1)
			}
		}
	})
	n, _, err := s.Count(ctx, "c:many")
	must(t, err)
	if n != 1000 || errs.Load() != 0 {
		t.Fatalf("100×10 concurrent Incr: count %d, %d errors; want 1000, 0", n, errs.Load())
	}
}

func testCancelled(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.Set(ctx, "x:e", []byte("v"), time.Minute))
	must(t, s.PutOnce(ctx, "x:o", []byte("v"), time.Minute))
	wantIncr(t, ctx, s, "x:c", 7, time.Minute, 7)

	dead, cancel := context.WithCancel(ctx)
	cancel()
	if v, ok, err := s.Get(dead, "x:e"); err == nil || ok || v != nil {
		t.Errorf("Get with a cancelled context = %q, %v, %v; want an error and no hit", v, ok, err)
	}
	if v, ok, err := s.Take(dead, "x:o"); err == nil || ok || v != nil {
		t.Errorf("Take with a cancelled context = %q, %v, %v; want an error and no hit", v, ok, err)
	}
	if n, _, err := s.Count(dead, "x:c"); err == nil || n != 0 {
		t.Errorf("Count with a cancelled context = %d, %v; want an error and 0", n, err)
	}
	if n, err := s.Incr(dead, "x:c", 1, time.Minute); err == nil || n != 0 {
		t.Errorf("Incr with a cancelled context = %d, %v; want an error and 0", n, err)
	}
	if n, err := s.DeletePrefix(dead, "x:"); err == nil || n != 0 {
		t.Errorf("DeletePrefix with a cancelled context = %d, %v; want an error and 0", n, err)
	}
	for name, err := range map[string]error{
		"Set":     s.Set(dead, "x:e2", []byte("v"), time.Minute),
		"Delete":  s.Delete(dead, "x:e"),
		"PutOnce": s.PutOnce(dead, "x:o2", []byte("v"), time.Minute),
		"Reset":   s.Reset(dead, "x:c"),
		"Ping":    s.Ping(dead),
	} {
		if err == nil {
			t.Errorf("%s with a cancelled context: err = nil", name)
		}
	}
	// Nothing was changed or consumed.
	wantGet(t, ctx, s, "x:e", "v")
	if _, ok, err := s.Take(ctx, "x:o"); err != nil || !ok {
		t.Errorf("Take after the cancelled calls = %v, %v; want the value", ok, err)
	}
	if n, _, _ := s.Count(ctx, "x:c"); n != 7 {
		t.Errorf("Count after the cancelled calls = %d, want 7", n)
	}
	if _, ok := get(t, ctx, s, "x:e2"); ok {
		t.Error("Set with a cancelled context stored the entry")
	}
}

func testPing(t *testing.T, ctx context.Context, s cache.Store) {
	must(t, s.Ping(ctx))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, ctx context.Context, s cache.Store, key string) ([]byte, bool) {
	t.Helper()
	v, ok, err := s.Get(ctx, key)
	must(t, err)
	return v, ok
}

func wantGet(t *testing.T, ctx context.Context, s cache.Store, key, want string) {
	t.Helper()
	v, ok := get(t, ctx, s, key)
	if !ok || string(v) != want {
		t.Fatalf("Get(%s) = %q, %v; want %q, true", key, v, ok, want)
	}
}

func wantIncr(t *testing.T, ctx context.Context, s cache.Store, key string, delta int64, ttl time.Duration, want int64) {
	t.Helper()
	n, err := s.Incr(ctx, key, delta, ttl)
	must(t, err)
	if n != want {
		t.Fatalf("Incr(%s, %d) = %d, want %d", key, delta, n, want)
	}
}
