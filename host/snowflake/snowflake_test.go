package snowflake

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestNewWorkerRange(t *testing.T) {
	tests := []struct {
		worker  int
		wantErr bool
	}{
		{-1, true},
		{0, false},
		{1, false},
		{63, false},
		{64, true},
	}
	for _, tt := range tests {
		g, err := New(tt.worker)
		if tt.wantErr {
			if !errors.Is(err, ErrWorkerRange) {
				t.Errorf("New(%d) error = %v, want ErrWorkerRange", tt.worker, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("New(%d): %v", tt.worker, err)
		}
		if g.Worker() != tt.worker {
			t.Errorf("Worker() = %d, want %d", g.Worker(), tt.worker)
		}
	}
}

func TestConcurrentUniqueMonotonicBounded(t *testing.T) {
	const goroutines, perGoroutine = 8, 20000
	g, err := New(5)
	if err != nil {
		t.Fatal(err)
	}
	results := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]int64, perGoroutine)
			for j := range ids {
				ids[j] = g.Next()
			}
			results[i] = ids
		}()
	}
	wg.Wait()

	seen := make(map[int64]struct{}, goroutines*perGoroutine)
	for i, ids := range results {
		for j, id := range ids {
			if _, dup := seen[id]; dup {
				t.Fatalf("duplicate id %d", id)
			}
			seen[id] = struct{}{}
			if id >= MaxID {
				t.Fatalf("id %d is not below 2^53", id)
			}
			if id < MinID {
				t.Fatalf("id %d is below %d", id, MinID)
			}
			// Within one goroutine ids are strictly increasing.
			if j > 0 && id <= ids[j-1] {
				t.Fatalf("goroutine %d: id %d after %d is not increasing", i, id, ids[j-1])
			}
			if _, w, _ := Parts(id); w != 5 {
				t.Fatalf("id %d carries worker %d, want 5", id, w)
			}
		}
	}
	if len(seen) != goroutines*perGoroutine {
		t.Fatalf("got %d unique ids, want %d", len(seen), goroutines*perGoroutine)
	}
}

func TestLayout(t *testing.T) {
	for _, worker := range []int{0, 1, 17, 63} {
		g, err := New(worker)
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now().Add(-time.Millisecond)
		id := g.Next()
		after := time.Now().Add(time.Millisecond)
		ts, w, seq := Parts(id)
		if w != worker {
			t.Errorf("worker = %d, want %d", w, worker)
		}
		if seq != 0 {
			t.Errorf("first sequence = %d, want 0", seq)
		}
		if ts.Before(before) || ts.After(after) {
			t.Errorf("timestamp %v not within [%v, %v]", ts, before, after)
		}
		if got := id >> 6 & 63; got != int64(worker) {
			t.Errorf("bits 6-11 = %d, want %d", got, worker)
		}
	}
}

// fakeClock is a manual clock for the generator; sleep advances it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time        { return c.t }
func (c *fakeClock) sleep(d time.Duration) { c.t = c.t.Add(max(d, time.Microsecond)) }
func (c *fakeClock) set(t time.Time)       { c.t = t }
func (c *fakeClock) add(d time.Duration)   { c.t = c.t.Add(d) }

func fakeGenerator(t *testing.T, start time.Time) (*Generator, *fakeClock) {
	t.Helper()
	g, err := New(3)
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeClock{t: start}
	g.now, g.sleep = c.now, c.sleep
	return g, c
}

func TestSmallestID(t *testing.T) {
	tests := []struct {
		name string
		at   time.Time
	}{
		{"at the epoch", Epoch},
		{"before the epoch", Epoch.Add(-time.Hour)},
		{"one ms after the epoch", Epoch.Add(time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := New(0)
			c := &fakeClock{t: tt.at}
			g.now, g.sleep = c.now, c.sleep
			if id := g.Next(); id != MinID {
				t.Fatalf("first id = %d, want %d", id, MinID)
			}
		})
	}
}

func TestSequenceOverflowWaitsForNextMillisecond(t *testing.T) {
	start := Epoch.Add(1000 * time.Hour)
	g, c := fakeGenerator(t, start)
	var last int64
	for i := 0; i <= MaxSequence; i++ {
		id := g.Next()
		if i > 0 && id != last+1 {
			t.Fatalf("id %d = %d, want %d", i, id, last+1)
		}
		last = id
	}
	if !c.t.Equal(start) {
		t.Fatalf("clock moved before the sequence overflowed")
	}
	id := g.Next()
	ts, _, seq := Parts(id)
	if seq != 0 || !ts.Equal(start.Add(time.Millisecond)) {
		t.Fatalf("after overflow: time %v seq %d, want %v seq 0", ts, seq, start.Add(time.Millisecond))
	}
	if !c.t.After(start) {
		t.Fatalf("generator did not wait for the next millisecond")
	}
}

func TestClockBackwards(t *testing.T) {
	start := Epoch.Add(2000 * time.Hour)
	g, c := fakeGenerator(t, start)
	first := g.Next()
	c.add(-10 * time.Second)
	prev := first
	// More than one millisecond worth of ids while the clock is behind: the
	// generator continues from the last millisecond and then borrows the
	// following ones instead of sleeping for ten seconds.
	for i := 0; i < 3*(MaxSequence+1); i++ {
		id := g.Next()
		if id <= prev {
			t.Fatalf("id %d not above %d after the clock went back", id, prev)
		}
		prev = id
	}
	if !c.t.Equal(start.Add(-10 * time.Second)) {
		t.Fatalf("generator slept while the clock was behind")
	}
	// When the clock catches up, ids follow the clock again.
	c.set(start.Add(time.Minute))
	id := g.Next()
	if id <= prev {
		t.Fatalf("id %d not above %d after the clock caught up", id, prev)
	}
	if ts, _, seq := Parts(id); !ts.Equal(start.Add(time.Minute)) || seq != 0 {
		t.Fatalf("after catch-up: %v seq %d", ts, seq)
	}
}

// SetWorker moves one generator to another worker id without ids going
// backwards, and leaves every other generator alone.
func TestSetWorker(t *testing.T) {
	g, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(7)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetWorker(64); !errors.Is(err, ErrWorkerRange) {
		t.Fatalf("SetWorker(64) = %v, want ErrWorkerRange", err)
	}
	a := g.Next()
	if err := g.SetWorker(42); err != nil {
		t.Fatal(err)
	}
	b := g.Next()
	if b <= a {
		t.Fatalf("ids went backwards across SetWorker: %d then %d", a, b)
	}
	if _, w, _ := Parts(b); w != 42 || g.Worker() != 42 {
		t.Fatalf("worker = %d (Worker() %d), want 42", w, g.Worker())
	}
	if _, w, _ := Parts(other.Next()); w != 7 {
		t.Fatalf("the other generator issues worker %d, want 7", w)
	}
}
