package pagetotal

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func newStore(t *testing.T) cache.Store {
	t.Helper()
	s, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// counter is a count function over a table of n rows that records its
// calls (a call is a database round trip).
type counter struct {
	n     atomic.Int64
	calls atomic.Int64
}

func (c *counter) count(context.Context) (int, error) {
	c.calls.Add(1)
	return int(c.n.Load()), nil
}

func total(t *testing.T, tt *Totals, key string, c *counter) int {
	t.Helper()
	n, err := tt.Total(context.Background(), Users, key, c.count)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTotals: a hit counts nothing; a bump (this replica or, through the
// shared store, another one), the TTL and another key each count again.
func TestTotals(t *testing.T) {
	store := newStore(t)
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	a := New(store, Options{TTL: 5 * time.Second, Now: clk.Now})
	b := New(store, Options{TTL: 5 * time.Second, Now: clk.Now}) // another replica on the same shared cache
	rows := &counter{}
	rows.n.Store(100)
	steps := []struct {
		name      string
		on        *Totals
		key       string
		before    func()
		want      int
		wantCalls int64 // count calls so far
	}{
		{"first read counts", a, "all", nil, 100, 1},
		{"second read is a hit", a, "all", nil, 100, 1},
		{"another replica counts once", b, "all", nil, 100, 2},
		{"and then hits", b, "all", nil, 100, 2},
		{"a write on this replica", a, "all", func() { rows.n.Add(1); a.Bump(context.Background(), Users) }, 101, 3},
		{"is seen by the other replica at once", b, "all", nil, 101, 4},
		{"a write on the other replica", a, "all", func() { rows.n.Add(-2); b.Bump(context.Background(), Users) }, 99, 5},
		{"another key counts", a, "org=3", nil, 99, 6},
		{"within the TTL: hit", a, "all", func() { clk.add(4 * time.Second) }, 99, 6},
		{"after the TTL: counts", a, "all", func() { clk.add(2 * time.Second) }, 99, 7},
		{"another table's bump changes nothing", a, "all", func() { a.Bump(context.Background(), "sys_role") }, 99, 7},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		if got := total(t, s.on, s.key, rows); got != s.want {
			t.Fatalf("%s: total %d, want %d", s.name, got, s.want)
		}
		if got := rows.calls.Load(); got != s.wantCalls {
			t.Fatalf("%s: %d counts, want %d", s.name, got, s.wantCalls)
		}
	}
}

// TestSingleflight: concurrent identical misses count once; a different
// key or a newer generation does not join the flight.
func TestSingleflight(t *testing.T) {
	tt := New(newStore(t), Options{TTL: time.Minute})
	release := make(chan struct{})
	var calls atomic.Int64
	slow := func(context.Context) (int, error) {
		calls.Add(1)
		<-release
		return 42, nil
	}
	const n = 32
	var wg sync.WaitGroup
	results := make([]int, n)
	for i := range n {
		wg.Go(func() {
			v, err := tt.Total(context.Background(), Users, "k", slow)
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		})
	}
	// Wait until the leader is counting and the others wait for it.
	for deadline := time.Now().Add(5 * time.Second); calls.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d counts for %d concurrent identical misses, want 1", got, n)
	}
	for i, v := range results {
		if v != 42 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
	// A bump while a count is in flight: a later read does not take the
	// older flight's result.
	start, finish := make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = tt.Total(context.Background(), Users, "j", func(context.Context) (int, error) { close(start); <-finish; return 1, nil })
	}()
	<-start
	tt.Bump(context.Background(), Users)
	v, err := tt.Total(context.Background(), Users, "j", func(context.Context) (int, error) { return 2, nil })
	close(finish)
	if err != nil || v != 2 {
		t.Fatalf("after a bump: %d, %v; want the new count 2", v, err)
	}
	if v, _ := tt.Total(context.Background(), Users, "j", func(context.Context) (int, error) { return 3, nil }); v != 2 {
		t.Fatalf("the older flight's result was stored: %d", v)
	}
}

// failing is a shared cache that cannot be reached.
type failing struct{ cache.Store }

var errDown = errors.New("down")

func (failing) Count(context.Context, string) (int64, time.Duration, error) { return 0, 0, errDown }
func (failing) Incr(context.Context, string, int64, time.Duration) (int64, error) {
	return 0, errDown
}

// TestFailuresCount: without a readable generation, an error from the
// count, or caching off, every call counts; nothing wrong is stored.
func TestFailuresCount(t *testing.T) {
	rows := &counter{}
	rows.n.Store(7)
	cases := []struct {
		name string
		tt   *Totals
	}{
		{"shared cache down", New(failing{}, Options{TTL: time.Minute})},
		{"caching off", New(newStore(t), Options{})},
		{"nil", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := rows.calls.Load()
			for range 3 {
				if got := total(t, tc.tt, "k", rows); got != 7 {
					t.Fatalf("total %d", got)
				}
			}
			if got := rows.calls.Load() - before; got != 3 {
				t.Fatalf("%d counts for 3 reads, want 3", got)
			}
			tc.tt.Bump(context.Background(), Users) // must not panic or fail
		})
	}
	tt := New(newStore(t), Options{TTL: time.Minute})
	boom := errors.New("boom")
	if _, err := tt.Total(context.Background(), Users, "k", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("count error = %v", err)
	}
	if got := total(t, tt, "k", rows); got != 7 {
		t.Fatalf("after a failed count: %d", got)
	}
}

// TestCap: the entries stay within MaxEntries.
func TestCap(t *testing.T) {
	tt := New(newStore(t), Options{TTL: time.Minute, MaxEntries: 10})
	rows := &counter{}
	for i := range 100 {
		total(t, tt, string(rune('a'+i%26))+string(rune('0'+i/26)), rows)
	}
	if n := tt.Stats().Entries; n > 10 {
		t.Fatalf("%d entries, cap 10", n)
	}
}
