package oncecap

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/cachetest"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/errcode"
)

var testKind = Kind{Prefix: "test:count:", Values: "pending test values", Request: "test issue", Setting: "Service:Test:MaxPending"}

// fakeCap returns a Cap of maxPending values living ttl on a cachetest.Fake,
// with the Cap's clock following the store's, and a function advancing both.
func fakeCap(t *testing.T, maxPending int, ttl time.Duration, log hclog.Logger) (*Cap, *cachetest.Fake, func(time.Duration)) {
	t.Helper()
	store := cachetest.NewFake()
	clock := time.Unix(1_700_000_000, 0) // the Fake's start
	var mu sync.Mutex
	c := New(store, testKind, maxPending, ttl, log)
	c.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	advance := func(d time.Duration) {
		mu.Lock()
		clock = clock.Add(d)
		mu.Unlock()
		store.Advance(d)
	}
	return c, store, advance
}

// refusedAfter checks that err is 429 / 40008 and returns retryAfterSeconds.
func refusedAfter(t *testing.T, err error, what string) int64 {
	t.Helper()
	e, ok := errcode.As(err)
	if !ok || e.Code != errcode.TooManyRequests {
		t.Fatalf("%s: error %v, want errcode.TooManyRequests", what, err)
	}
	secs, ok := e.Args["retryAfterSeconds"].(int64)
	if !ok {
		t.Fatalf("%s: retryAfterSeconds = %#v, want an int64", what, e.Args["retryAfterSeconds"])
	}
	if e.HTTPStatus() != 429 {
		t.Fatalf("%s: HTTP status %d, want 429", what, e.HTTPStatus())
	}
	return secs
}

func TestAcquireUpToTheCapAndRelease(t *testing.T) {
	ctx := context.Background()
	c, _, _ := fakeCap(t, 3, 2*time.Minute, nil)
	var slots []Slot
	for i := range 3 {
		s, err := c.Acquire(ctx)
		if err != nil {
			t.Fatalf("acquire %d below the cap: %v", i+1, err)
		}
		if s == 0 {
			t.Fatalf("acquire %d returned the zero Slot", i+1)
		}
		slots = append(slots, s)
	}
	secs := refusedAfter(t, func() error { _, err := c.Acquire(ctx); return err }(), "fourth acquire")
	if maxSecs := int64((2*time.Minute + Bucket) / time.Second); secs < 1 || secs > maxSecs {
		t.Errorf("retryAfterSeconds = %d, want 1..%d", secs, maxSecs)
	}
	// A refusal backs out its increment: releasing one slot frees exactly one.
	c.Release(ctx, slots[0])
	if _, err := c.Acquire(ctx); err != nil {
		t.Fatalf("acquire after a release: %v", err)
	}
	refusedAfter(t, func() error { _, err := c.Acquire(ctx); return err }(), "acquire at the cap again")
	// The zero Slot frees nothing.
	c.Release(ctx, 0)
	refusedAfter(t, func() error { _, err := c.Acquire(ctx); return err }(), "acquire after releasing the zero Slot")
}

// Expired values free their slots when their bucket's counter expires,
// never earlier (the count errs high), and Retry-After says when.
func TestExpiredValuesFreeTheirSlots(t *testing.T) {
	ctx := context.Background()
	ttl := 2 * time.Minute
	c, _, advance := fakeCap(t, 2, ttl, nil)
	for range 2 {
		if _, err := c.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	advance(ttl) // the values have expired, their bucket's counter not yet
	secs := refusedAfter(t, func() error { _, err := c.Acquire(ctx); return err }(), "acquire before the bucket expired")
	if want := int64(Bucket / time.Second); secs != want {
		t.Errorf("retryAfterSeconds = %d, want %d (the rest of the counter's life)", secs, want)
	}
	advance(Bucket)
	for i := range 2 {
		if _, err := c.Acquire(ctx); err != nil {
			t.Fatalf("acquire %d after the bucket expired: %v", i+1, err)
		}
	}
}

// failingCounts fails Count (Incr works), or both.
type failingCounts struct {
	cache.Store
	failCount atomic.Bool
}

func (f *failingCounts) Count(ctx context.Context, key string) (int64, time.Duration, error) {
	if f.failCount.Load() {
		return 0, 0, errors.New("count: cache down")
	}
	return f.Store.Count(ctx, key)
}

func TestCacheErrorsFailClosed(t *testing.T) {
	ctx := context.Background()
	fake := cachetest.NewFake()
	store := &failingCounts{Store: fake}
	c := New(store, testKind, 5, 2*time.Minute, nil)
	c.now = func() time.Time { return time.Unix(1_700_000_000, 0) }

	store.failCount.Store(true)
	_, err := c.Acquire(ctx)
	if err == nil {
		t.Fatal("acquire succeeded while the older buckets could not be read")
	}
	if _, biz := errcode.As(err); biz {
		t.Fatalf("a cache error came back as business error %v", err)
	}
	if !strings.Contains(err.Error(), "pending test values") {
		t.Errorf("error %q does not name the values", err)
	}
	// The failed acquire backed out its increment.
	slot := c.now().UnixNano() / int64(Bucket)
	if n, _, _ := fake.Count(ctx, c.key(slot)); n != 0 {
		t.Fatalf("counter after a failed acquire = %d, want 0", n)
	}

	store.failCount.Store(false)
	fake.Fail(errors.New("cache down"))
	if _, err := c.Acquire(ctx); err == nil {
		t.Fatal("acquire succeeded with a failing cache")
	} else if _, biz := errcode.As(err); biz {
		t.Fatalf("a cache error came back as business error %v", err)
	}
}

func TestWarningThrottledAndNamesTheSetting(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	var mu sync.Mutex
	log := hclog.New(&hclog.LoggerOptions{Output: &lockedWriter{w: &buf, mu: &mu}, Level: hclog.Warn})
	c, _, advance := fakeCap(t, 1, 2*time.Minute, log)
	if _, err := c.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := c.Acquire(ctx); err == nil {
			t.Fatal("acquire beyond the cap succeeded")
		}
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return strings.Count(buf.String(), "test issue refused: pending test values are at the cap (Service:Test:MaxPending)")
	}
	if got := count(); got != 1 {
		t.Fatalf("%d warnings after 5 refusals within a minute, want 1:\n%s", got, buf.String())
	}
	advance(warnEvery)
	if _, err := c.Acquire(ctx); err == nil {
		t.Fatal("acquire beyond the cap succeeded")
	}
	if got := count(); got != 2 {
		t.Fatalf("%d warnings after a minute more, want 2", got)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Parallel acquires never overshoot the cap.
func TestParallelAcquiresNeverOvershoot(t *testing.T) {
	mem, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	c := New(mem, testKind, 10, 2*time.Minute, nil)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if _, err := c.Acquire(context.Background()); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if got := ok.Load(); got < 1 || got > 10 {
		t.Fatalf("%d of 64 parallel acquires succeeded, want 1..10", got)
	}
}

// countingCounts counts Count calls (round trips with Redis).
type countingCounts struct {
	cache.Store
	counts atomic.Int64
}

func (c *countingCounts) Count(ctx context.Context, key string) (int64, time.Duration, error) {
	c.counts.Add(1)
	return c.Store.Count(ctx, key)
}

// The older buckets are read at most once per second and bucket, and
// their remembered sum still refuses at the cap.
func TestReadOlderBucketsOncePerSecond(t *testing.T) {
	mem, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	store := &countingCounts{Store: mem}
	clock := time.Date(2031, 1, 2, 3, 4, 0, 0, time.UTC)
	c := New(store, testKind, 50, 5*time.Minute, hclog.NewNullLogger())
	c.now = func() time.Time { return clock }
	ctx := context.Background()
	for range 30 { // 30 pending values in an older bucket
		if _, err := c.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(Bucket)
	before := store.counts.Load()
	for i := range 20 {
		if _, err := c.Acquire(ctx); err != nil {
			t.Fatalf("acquire %d of the new bucket: %v", i, err)
		}
	}
	if got := store.counts.Load() - before; got != c.buckets() {
		t.Fatalf("%d Count calls for 20 acquires within a second; want one read of %d buckets", got, c.buckets())
	}
	if _, err := c.Acquire(ctx); err == nil {
		t.Fatal("an acquire beyond the cap of 50 (30 older + 20) succeeded")
	}
	clock = clock.Add(olderFor)
	if _, err := c.Acquire(ctx); err == nil {
		t.Fatal("an acquire beyond the cap succeeded after the older sum was read again")
	}
	if got := store.counts.Load() - before; got != 2*c.buckets() {
		t.Fatalf("%d Count calls; want two reads of %d buckets", got, c.buckets())
	}
}
