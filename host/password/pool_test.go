package password_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/password"
)

// gate is a pool job that holds its slot until released, counting how many
// jobs are inside at once.
type gate struct {
	release chan struct{}
	inside  atomic.Int64
	peak    atomic.Int64
	ran     atomic.Int64
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) job() {
	n := g.inside.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	g.ran.Add(1)
	<-g.release
	g.inside.Add(-1)
}

// wantRefusal checks the 503 business error of a refused call.
func wantRefusal(t *testing.T, err error, cause error) {
	t.Helper()
	if !password.Refused(err) || !errors.Is(err, cause) {
		t.Fatalf("err = %v, want a refusal caused by %v", err, cause)
	}
	be, ok := errcode.As(err)
	if !ok || be.Code != errcode.TooManyRequests || be.HTTPStatus() != http.StatusServiceUnavailable {
		t.Fatalf("err = %#v, want 40008 with HTTP 503", err)
	}
	if s, ok := be.Args["retryAfterSeconds"].(int); !ok || s < 1 {
		t.Fatalf("retryAfterSeconds = %v, want ≥ 1", be.Args["retryAfterSeconds"])
	}
}

func TestPoolBoundsConcurrencyAndQueue(t *testing.T) {
	tests := []struct{ concurrency, queue int }{{1, 1}, {2, 0}, {3, 4}}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			p := password.NewPool(password.Limits{Concurrency: tt.concurrency, Queue: tt.queue, MaxWait: time.Hour})
			g := newGate()
			var wg sync.WaitGroup
			errs := make(chan error, tt.concurrency+tt.queue)
			for range tt.concurrency + tt.queue {
				wg.Go(func() { errs <- p.Do(context.Background(), g.job) })
			}
			poll.Until(t, 10*time.Second, "slots taken and queue filled", func() bool {
				s := p.Stats()
				return s.Running == int64(tt.concurrency) && s.Waiting == int64(tt.queue)
			})
			// Full: the next caller is refused at once and its job never runs.
			wantRefusal(t, p.Do(context.Background(), g.job), password.ErrBusy)
			close(g.release)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("an admitted caller failed: %v", err)
				}
			}
			s := p.Stats()
			if g.peak.Load() != int64(tt.concurrency) || s.PeakRunning != int64(tt.concurrency) {
				t.Fatalf("peak inside = %d, pool peak = %d, want %d", g.peak.Load(), s.PeakRunning, tt.concurrency)
			}
			want := password.Stats{Concurrency: tt.concurrency, QueueCapacity: tt.queue, MaxWaitMillis: time.Hour.Milliseconds(),
				PeakRunning: int64(tt.concurrency), PeakWaiting: int64(tt.queue), Completed: uint64(tt.concurrency + tt.queue), Rejected: 1}
			if s.AvgHashMillis <= 0 {
				t.Errorf("avgHashMillis = %v after %d jobs", s.AvgHashMillis, s.Completed)
			}
			s.AvgHashMillis, s.BusyMillis = 0, 0
			if s != want || g.ran.Load() != int64(tt.concurrency+tt.queue) {
				t.Fatalf("stats = %+v (ran %d), want %+v", s, g.ran.Load(), want)
			}
		})
	}
}

// TestHasherNeverExceedsConcurrency runs real PBKDF2 verifications from
// many goroutines through a pool of 2.
func TestHasherNeverExceedsConcurrency(t *testing.T) {
	h := password.New(password.MinIterations).WithLimits(password.Limits{Concurrency: 2, Queue: 100, MaxWait: time.Hour})
	hash, err := h.Hash("s3cret!")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for i := range 12 {
		wg.Go(func() {
			plain, want := "s3cret!", true
			if i%2 == 1 {
				plain, want = "wrong", false
			}
			if ok, err := h.VerifyContext(context.Background(), hash, plain); ok != want || err != nil {
				bad.Add(1)
			}
		})
	}
	wg.Wait()
	s := h.Stats()
	if bad.Load() != 0 || s.PeakRunning > 2 || s.Completed != 13 || s.Running != 0 || s.Waiting != 0 {
		t.Fatalf("bad results %d, stats %+v; want none, peak ≤ 2, 13 completed", bad.Load(), s)
	}
}

func TestPoolCancelledWaiterLeaves(t *testing.T) {
	p := password.NewPool(password.Limits{Concurrency: 1, Queue: 2, MaxWait: time.Hour})
	g := newGate()
	done := make(chan error, 1)
	go func() { done <- p.Do(context.Background(), g.job) }()
	poll.Until(t, 10*time.Second, "slot taken", func() bool { return p.Stats().Running == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() { left <- p.Do(ctx, g.job) }()
	poll.Until(t, 10*time.Second, "caller queued", func() bool { return p.Stats().Waiting == 1 })
	cancel()
	err := <-left
	wantRefusal(t, err, password.ErrAbandoned)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want it to wrap context.Canceled", err)
	}
	if s := p.Stats(); s.Waiting != 0 || s.Abandoned != 1 {
		t.Fatalf("stats %+v, want the waiter gone and counted", s)
	}
	// A context already ended never waits.
	wantRefusal(t, p.Do(ctx, g.job), password.ErrAbandoned)

	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g.ran.Load() != 1 {
		t.Fatalf("%d jobs ran, want only the admitted one", g.ran.Load())
	}
	if err := p.Do(context.Background(), func() {}); err != nil {
		t.Fatalf("the pool does not work after a cancelled waiter: %v", err)
	}
	if s := p.Stats(); s.Abandoned != 2 || s.Completed != 2 || s.Running != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestPoolMaxWaitAndWarning(t *testing.T) {
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	p := password.NewPool(password.Limits{Concurrency: 1, Queue: 1, MaxWait: 20 * time.Millisecond, Log: log})
	g := newGate()
	done := make(chan error, 1)
	go func() { done <- p.Do(context.Background(), g.job) }()
	poll.Until(t, 10*time.Second, "slot taken", func() bool { return p.Stats().Running == 1 })

	for range 3 { // each waits MaxWait in the queue and gives up
		wantRefusal(t, p.Do(context.Background(), g.job), password.ErrBusy)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if s.TimedOut != 3 || s.Rejected != 0 || s.Waiting != 0 || g.ran.Load() != 1 {
		t.Fatalf("stats %+v, ran %d; want 3 timed out, the holder alone ran", s, g.ran.Load())
	}
	if n := strings.Count(logs.String(), "password hashing saturated"); n != 1 {
		t.Fatalf("%d warnings, want 1 (throttled):\n%s", n, logs.String())
	}
}

// TestPooledHashesMatchDirect: a pooled hasher and a direct one read each
// other's hashes.
func TestPooledHashesMatchDirect(t *testing.T) {
	direct := password.New(password.MinIterations)
	pooled := direct.WithLimits(password.Limits{Concurrency: 1})
	for _, tt := range []struct {
		name     string
		from, to *password.PBKDF2
	}{{"direct to pooled", direct, pooled}, {"pooled to direct", pooled, direct}} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.from.Hash("Adm1n#Passw0rd")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				plain string
				ok    bool
			}{{"Adm1n#Passw0rd", true}, {"adm1n#Passw0rd", false}} {
				if ok, err := tt.to.VerifyContext(context.Background(), h, c.plain); ok != c.ok || err != nil {
					t.Fatalf("Verify(%q) = %v, %v; want %v", c.plain, ok, err, c.ok)
				}
			}
		})
	}
	// A malformed hash is reported without taking a slot.
	if _, err := pooled.Verify("plain-text", "x"); !errors.Is(err, password.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestDefaultConcurrency(t *testing.T) {
	want := max(1, runtime.GOMAXPROCS(0)-1)
	if got := password.DefaultConcurrency(); got != want {
		t.Fatalf("DefaultConcurrency() = %d, want GOMAXPROCS-1 (min 1) = %d", got, want)
	}
	if s := password.NewPool(password.Limits{Queue: -1}).Stats(); s.Concurrency != want || s.QueueCapacity != password.DefaultQueue ||
		s.MaxWaitMillis != password.DefaultMaxWait.Milliseconds() {
		t.Fatalf("defaults %+v", s)
	}
}

// TestPoolRefusesExpectedWaitBeyondMax: once the mean computation time is
// known, a caller whose place in the queue would wait longer than MaxWait is
// refused at once instead of timing out later.
func TestPoolRefusesExpectedWaitBeyondMax(t *testing.T) {
	const maxWait = 2 * time.Second
	p := password.NewPool(password.Limits{Concurrency: 1, Queue: 100, MaxWait: maxWait})
	if err := p.Do(context.Background(), func() { time.Sleep(600 * time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
	avg := time.Duration(p.Stats().AvgHashMillis * float64(time.Millisecond))
	if avg < 600*time.Millisecond {
		t.Fatalf("avgHashMillis = %v after a 600 ms job", avg)
	}
	admit := int(maxWait / avg) // places 1..admit expect at most MaxWait
	g := newGate()
	done := make(chan error, 1)
	go func() { done <- p.Do(context.Background(), g.job) }()
	poll.Until(t, 10*time.Second, "slot taken", func() bool { return p.Stats().Running == 1 })
	var wg sync.WaitGroup
	for i := 1; i <= admit; i++ {
		wg.Go(func() {
			if err := p.Do(context.Background(), func() {}); err != nil {
				t.Errorf("place %d of %d refused: %v", i, admit, err)
			}
		})
		poll.Until(t, 10*time.Second, "caller queued", func() bool { return p.Stats().Waiting == int64(i) })
	}
	// The next place would wait (admit+1) × avg > MaxWait: refused at once.
	wantRefusal(t, p.Do(context.Background(), g.job), password.ErrBusy)
	if s := p.Stats(); s.Rejected != 1 || s.TimedOut != 0 || s.Waiting != int64(admit) {
		t.Fatalf("stats %+v, want 1 rejected and %d waiting", s, admit)
	}
	close(g.release)
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
