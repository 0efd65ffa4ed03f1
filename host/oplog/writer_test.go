package oplog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/oplog"
)

// fakeDB records inserted rows; gate (when set) holds every insert until it
// is closed, delay slows every insert, fail decides per call whether it
// fails.
type fakeDB struct {
	mu       sync.Mutex
	rows     []oplog.Row
	batches  []int
	calls    atomic.Int64
	gate     chan struct{}
	delay    time.Duration
	fail     func(call int64) error
	panicOn  int64
	blockCtx bool // wait for ctx.Done instead of the gate
}

func (f *fakeDB) Insert(ctx context.Context, rows []oplog.Row) error {
	call := f.calls.Add(1)
	if f.panicOn == call {
		panic("inserter exploded")
	}
	if f.blockCtx {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.gate != nil {
		<-f.gate
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.fail != nil {
		if err := f.fail(call); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, rows...)
	f.batches = append(f.batches, len(rows))
	return nil
}

func (f *fakeDB) titles() map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]bool, len(f.rows))
	for _, r := range f.rows {
		out[r.Title] = true
	}
	return out
}

func (f *fakeDB) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.rows)
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newWriter(t *testing.T, db *fakeDB, opts oplog.Options) (*oplog.Writer, *logBuf) {
	t.Helper()
	buf := &logBuf{}
	if opts.Log == nil {
		opts.Log = hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug})
	}
	w := oplog.New(db, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Close(ctx)
	})
	return w, buf
}

func row(title string) oplog.Row { return oplog.Row{Title: title, Method: "POST", Path: "/x"} }

// within fails the test when f does not return in time: used to prove that
// producers never block, without asserting a timing figure.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v: a producer is blocked", what, d)
	}
}

func TestFullQueueDropsOldestWithoutBlocking(t *testing.T) {
	db := &fakeDB{gate: make(chan struct{})} // the database hangs
	w, logs := newWriter(t, db, oplog.Options{Config: config.OpLog{QueueCapacity: 100}})
	// Park the flusher inside its first insert, so nothing leaves the queue
	// while it fills.
	w.Add(context.Background(), row("primer"))
	for deadline := time.Now().Add(5 * time.Second); db.calls.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the flusher never started an insert")
		}
		time.Sleep(time.Millisecond)
	}

	const producers, each = 50, 100 // 5000 rows from many goroutines
	within(t, 10*time.Second, "5000 concurrent Adds", func() {
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				for i := range each {
					w.Add(context.Background(), row(fmt.Sprintf("old-%d-%d", p, i)))
				}
			})
		}
		wg.Wait()
	})
	if w.Len() != w.Capacity() || w.Dropped() != producers*each-100 {
		t.Fatalf("Len() = %d, Dropped() = %d; want %d and %d", w.Len(), w.Dropped(), w.Capacity(), producers*each-100)
	}
	// The newest rows are the ones kept: after 100 more, the queue holds
	// exactly them.
	within(t, 10*time.Second, "100 more Adds", func() {
		for i := range 100 {
			w.Add(context.Background(), row(fmt.Sprintf("new-%d", i)))
		}
	})
	close(db.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	titles := db.titles()
	for i := range 100 {
		if !titles[fmt.Sprintf("new-%d", i)] {
			t.Fatalf("newest row new-%d was dropped", i)
		}
	}
	total := uint64(1 + producers*each + 100)
	if got := w.Dropped() + w.Written() + w.Lost(); got != total {
		t.Errorf("dropped %d + written %d + lost %d = %d, want %d", w.Dropped(), w.Written(), w.Lost(), got, total)
	}
	if n := strings.Count(logs.String(), "near its capacity"); n != 1 {
		t.Errorf("near-cap warning given %d times, want once:\n%s", n, logs.String())
	}
}

func TestSlowDatabaseNeverBlocksProducers(t *testing.T) {
	db := &fakeDB{delay: 30 * time.Millisecond}
	w, _ := newWriter(t, db, oplog.Options{Config: config.OpLog{QueueCapacity: 100}})
	within(t, 10*time.Second, "5000 concurrent Adds on a slow database", func() {
		var wg sync.WaitGroup
		for p := range 100 {
			wg.Go(func() {
				for i := range 50 {
					w.Add(context.Background(), row(fmt.Sprintf("r-%d-%d", p, i)))
				}
			})
		}
		wg.Wait()
	})
	if w.Dropped() == 0 {
		t.Fatal("nothing dropped: the queue never filled against a slow database")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := w.Dropped() + w.Written() + w.Lost(); got != 5000 {
		t.Errorf("accounted for %d rows, want 5000", got)
	}
}

func TestBatchesHoldAtMost200Rows(t *testing.T) {
	db := &fakeDB{gate: make(chan struct{})}
	w, _ := newWriter(t, db, oplog.Options{})
	for i := range 1000 {
		w.Add(context.Background(), row(fmt.Sprint(i)))
	}
	close(db.gate)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if db.count() != 1000 || w.Written() != 1000 || w.Dropped() != 0 {
		t.Fatalf("inserted %d, written %d, dropped %d; want 1000/1000/0", db.count(), w.Written(), w.Dropped())
	}
	big := 0
	for _, n := range db.batches {
		if n > oplog.DefaultBatchSize {
			t.Fatalf("a batch of %d rows", n)
		}
		if n == oplog.DefaultBatchSize {
			big++
		}
	}
	if big == 0 {
		t.Errorf("no full batch of 200 among %v", db.batches)
	}
}

func TestFailedBatchIsRetriedOnceThenDropped(t *testing.T) {
	// First attempt fails, the retry succeeds.
	db := &fakeDB{fail: func(call int64) error {
		if call == 1 {
			return errors.New("deadlock")
		}
		return nil
	}}
	w, _ := newWriter(t, db, oplog.Options{Config: config.OpLog{Sync: true}})
	w.Add(context.Background(), row("a"))
	if db.count() != 1 || w.Lost() != 0 || db.calls.Load() != 2 {
		t.Fatalf("retry: rows %d lost %d calls %d", db.count(), w.Lost(), db.calls.Load())
	}

	// Both attempts fail: logged, counted, dropped; the writer goes on.
	broken := &fakeDB{fail: func(int64) error { return errors.New("table missing") }}
	w2, logs := newWriter(t, broken, oplog.Options{})
	w2.Add(context.Background(), row("b"))
	if err := w2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w2.Lost() != 1 || broken.calls.Load() != 2 {
		t.Fatalf("lost %d calls %d, want 1 and 2", w2.Lost(), broken.calls.Load())
	}
	if !strings.Contains(logs.String(), "writing the operation log failed") {
		t.Errorf("failure not logged:\n%s", logs.String())
	}
}

func TestInserterPanicDoesNotStopTheFlusher(t *testing.T) {
	db := &fakeDB{panicOn: 1}
	w, logs := newWriter(t, db, oplog.Options{Config: config.OpLog{Sync: true}})
	w.Add(context.Background(), row("first")) // panics, then the retry inserts it
	w.Add(context.Background(), row("second"))
	if db.count() != 2 {
		t.Fatalf("%d rows inserted after an inserter panic, want 2", db.count())
	}
	if !strings.Contains(logs.String(), "panicked") {
		t.Errorf("the panic was not logged:\n%s", logs.String())
	}
}

func TestSyncModeWritesBeforeReturning(t *testing.T) {
	db := &fakeDB{delay: 20 * time.Millisecond}
	w, _ := newWriter(t, db, oplog.Options{Config: config.OpLog{Sync: true}})
	if !w.Sync() {
		t.Fatal("Sync() = false")
	}
	for i := range 3 {
		w.Add(context.Background(), row(fmt.Sprint(i)))
		if db.count() != i+1 {
			t.Fatalf("after Add %d: %d rows stored", i, db.count())
		}
	}
	// A cancelled request context does not cancel the write.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Add(ctx, row("cancelled"))
	if db.count() != 4 {
		t.Fatalf("write with a cancelled request context was skipped")
	}
}

func TestCloseDrainsWithinTheDrainTime(t *testing.T) {
	db := &fakeDB{delay: 5 * time.Millisecond, gate: make(chan struct{})}
	w, _ := newWriter(t, db, oplog.Options{})
	for i := range 2000 {
		w.Add(context.Background(), row(fmt.Sprint(i)))
	}
	close(db.gate)
	start := time.Now()
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > oplog.DefaultDrainTimeout {
		t.Errorf("Close took %v, longer than the drain time", el)
	}
	if db.count() != 2000 {
		t.Fatalf("%d of 2000 rows written at shutdown", db.count())
	}
	// Rows after Close are not written, only counted.
	w.Add(context.Background(), row("late"))
	if w.Lost() != 1 || db.count() != 2000 {
		t.Errorf("late row: lost %d rows %d", w.Lost(), db.count())
	}
	if err := w.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseGivesUpWhenTheDrainTimeIsUp(t *testing.T) {
	db := &fakeDB{blockCtx: true} // a database that never answers
	w, logs := newWriter(t, db, oplog.Options{DrainTimeout: 200 * time.Millisecond})
	for i := range 500 {
		w.Add(context.Background(), row(fmt.Sprint(i)))
	}
	var err error
	within(t, 5*time.Second, "Close on a hung database", func() { err = w.Close(context.Background()) })
	if !errors.Is(err, oplog.ErrDrainTimeout) {
		t.Fatalf("Close = %v, want ErrDrainTimeout", err)
	}
	if w.Lost() != 500 {
		t.Errorf("Lost() = %d, want 500", w.Lost())
	}
	if !strings.Contains(logs.String(), "drain incomplete") {
		t.Errorf("incomplete drain not logged:\n%s", logs.String())
	}
}

func TestRowsAreCutToTheirColumns(t *testing.T) {
	db := &fakeDB{}
	w, _ := newWriter(t, db, oplog.Options{Config: config.OpLog{Sync: true}})
	msg := strings.Repeat("m", 3000)
	w.Add(context.Background(), oplog.Row{
		Title: strings.Repeat("t", 300), Method: "POST", Path: "/" + strings.Repeat("p", 2000),
		ExceptionMessage: &msg, UserAgent: strings.Repeat("u", 600), IP: "127.0.0.1",
	})
	r := db.rows[0]
	if len(r.Title) != 256 || len(r.Path) != 1024 || len(*r.ExceptionMessage) != 2000 || len(r.UserAgent) != 512 {
		t.Fatalf("not cut: title %d path %d message %d ua %d", len(r.Title), len(r.Path), len(*r.ExceptionMessage), len(r.UserAgent))
	}
	if r.Time.IsZero() {
		t.Error("no time set")
	}
}
