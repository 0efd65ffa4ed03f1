package password_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
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
			want := password.Stats{Concurrency: tt.concurrency, QueueCapacity: tt.queue, MaxWaitMillis: time.Hour.Milliseconds(), PerClient: 2, PerAccount: 2,
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

// order records the order in which pool jobs start.
type order struct {
	mu      sync.Mutex
	started []string
}

func (o *order) job(name string, release <-chan struct{}) func() {
	return func() {
		o.mu.Lock()
		o.started = append(o.started, name)
		o.mu.Unlock()
		<-release
	}
}

func (o *order) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.started...)
}

// TestPoolServesClientsFairly: one client key floods a pool of one slot
// (its share raised to 10 so that its calls fill the queue); a call of
// another client that arrives last starts right after the running one,
// before every queued call of the flooder. A first come, first served
// queue would start it eleventh. Then the flooder's calls start in their
// order, and two clients that both keep calls queued alternate.
func TestPoolServesClientsFairly(t *testing.T) {
	p := password.NewPool(password.Limits{Concurrency: 1, Queue: 100, MaxWait: time.Hour, PerClient: 10, PerAccount: 100})
	flood := password.WithCaller(context.Background(), "203.0.113.7", "")
	other := password.WithCaller(context.Background(), "198.51.100.9", "alice")
	var o order
	release := make(chan struct{}, 100)
	var wg sync.WaitGroup
	do := func(ctx context.Context, name string) {
		wg.Go(func() {
			if err := p.Do(ctx, o.job(name, release)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	do(flood, "f0")
	poll.Until(t, 10*time.Second, "slot taken", func() bool { return p.Stats().Running == 1 })
	for i := 1; i < 10; i++ {
		do(flood, fmt.Sprintf("f%d", i))
		poll.Until(t, 10*time.Second, "flooder queued", func() bool { return p.Stats().Waiting == int64(i) })
	}
	do(other, "o1")
	poll.Until(t, 10*time.Second, "other queued", func() bool { return p.Stats().Waiting == 10 })
	// Release one job at a time; each release lets exactly one start.
	for i := 1; i <= 10; i++ {
		release <- struct{}{}
		poll.Until(t, 10*time.Second, "next job started", func() bool { return len(o.list()) == i+1 })
	}
	release <- struct{}{}
	wg.Wait()
	got := o.list()
	want := []string{"f0", "o1", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"}
	if !slices.Equal(got, want) {
		t.Fatalf("start order %v, want %v (the other client within 1 slot of arriving)", got, want)
	}

	// Two backlogged clients alternate, whatever their arrival order.
	o = order{}
	hold := make(chan struct{})
	wg.Go(func() { _ = p.Do(flood, func() { <-hold }) })
	poll.Until(t, 10*time.Second, "slot taken", func() bool { return p.Stats().Running == 1 })
	for i, c := range []struct {
		ctx  context.Context
		name string
	}{{flood, "a1"}, {flood, "a2"}, {flood, "a3"}, {other, "b1"}, {other, "b2"}} {
		do(c.ctx, c.name)
		poll.Until(t, 10*time.Second, "queued", func() bool { return p.Stats().Waiting == int64(i+1) })
	}
	close(hold)
	for i := 1; i <= 5; i++ {
		poll.Until(t, 10*time.Second, "next job started", func() bool { return len(o.list()) == i })
		release <- struct{}{}
	}
	wg.Wait()
	// The held call has start tag v; the flooder's queued calls v+1, v+2,
	// v+3; b arrived idle: b1 gets v (before a1), b2 v+1 (after a1, which
	// came first).
	if got, want := o.list(), []string{"b1", "a1", "b2", "a2", "a3"}; !slices.Equal(got, want) {
		t.Fatalf("start order %v, want %v", got, want)
	}
	if s := p.Stats(); s.Running != 0 || s.Waiting != 0 || s.Throttled != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// wantShare checks the 429 business error of a call over its share.
func wantShare(t *testing.T, err error) {
	t.Helper()
	if !password.Refused(err) || !errors.Is(err, password.ErrShare) {
		t.Fatalf("err = %v, want a refusal caused by ErrShare", err)
	}
	be, ok := errcode.As(err)
	if !ok || be.Code != errcode.TooManyRequests || be.HTTPStatus() != http.StatusTooManyRequests {
		t.Fatalf("err = %#v, want 40008 with HTTP 429", err)
	}
	if s, ok := be.Args["retryAfterSeconds"].(int); !ok || s < 1 {
		t.Fatalf("retryAfterSeconds = %v, want ≥ 1", be.Args["retryAfterSeconds"])
	}
}

// TestPoolCapsClientAndAccount: a client key or an account with
// PerClient/PerAccount calls running or waiting is refused at once (429),
// even with idle slots; other clients and accounts are not; the shares
// free up as calls end or leave the queue; callers without a key are not
// capped.
func TestPoolCapsClientAndAccount(t *testing.T) {
	p := password.NewPool(password.Limits{Concurrency: 1, Queue: 100, MaxWait: time.Hour})
	if s := p.Stats(); s.PerClient != password.DefaultPerClient || s.PerAccount != password.DefaultPerAccount {
		t.Fatalf("defaults %+v", s)
	}
	g := newGate()
	var wg sync.WaitGroup
	a := password.WithCaller(context.Background(), "203.0.113.7", "alice")
	wg.Go(func() { _ = p.Do(a, g.job) }) // running
	poll.Until(t, 10*time.Second, "slot taken", func() bool { return p.Stats().Running == 1 })
	wg.Go(func() { _ = p.Do(password.WithCaller(context.Background(), "203.0.113.7", "bob"), g.job) }) // queued
	poll.Until(t, 10*time.Second, "queued", func() bool { return p.Stats().Waiting == 1 })

	start := time.Now()
	wantShare(t, p.Do(password.WithCaller(context.Background(), "203.0.113.7", "carol"), g.job)) // third of the client
	// The account: alice from elsewhere is queued once, then refused.
	left, cancel := context.WithCancel(password.WithCaller(context.Background(), "198.51.100.9", "alice"))
	gone := make(chan error, 1)
	go func() { gone <- p.Do(left, g.job) }()
	poll.Until(t, 10*time.Second, "queued", func() bool { return p.Stats().Waiting == 2 })
	wantShare(t, p.Do(password.WithCaller(context.Background(), "192.0.2.1", "alice"), g.job))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusals took %v, want at once", d)
	}
	// A caller without a key is never capped.
	for range 3 {
		wg.Go(func() { _ = p.Do(context.Background(), g.job) })
	}
	poll.Until(t, 10*time.Second, "queued", func() bool { return p.Stats().Waiting == 5 })
	// Leaving the queue gives the share back.
	cancel()
	wantRefusal(t, <-gone, password.ErrAbandoned)
	wg.Go(func() { _ = p.Do(password.WithCaller(context.Background(), "192.0.2.1", "alice"), g.job) })
	poll.Until(t, 10*time.Second, "queued", func() bool { return p.Stats().Waiting == 5 })
	if s := p.Stats(); s.Throttled != 2 || s.Rejected != 0 {
		t.Fatalf("stats %+v, want 2 throttled", s)
	}
	close(g.release)
	wg.Wait()
	// Once the calls ended, the client and the account start afresh.
	for range 3 {
		if err := p.Do(a, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.Running != 0 || s.Waiting != 0 || g.ran.Load() != 6 {
		t.Fatalf("stats %+v, ran %d", s, g.ran.Load())
	}
}

// TestPoolNoLeakUnderChurn: many keyed callers, some cancelled, some
// timing out, on a small pool; at the end nothing runs or waits and every
// call is accounted for.
func TestPoolNoLeakUnderChurn(t *testing.T) {
	p := password.NewPool(password.Limits{Concurrency: 2, Queue: 8, MaxWait: 30 * time.Millisecond})
	var wg sync.WaitGroup
	var ran, refused atomic.Int64
	for i := range 400 {
		wg.Go(func() {
			ctx := password.WithCaller(context.Background(), fmt.Sprintf("10.0.0.%d", i%7), fmt.Sprintf("u%d", i%5))
			if i%3 == 0 {
				c, cancel := context.WithTimeout(ctx, time.Duration(i%4)*time.Millisecond)
				defer cancel()
				ctx = c
			}
			err := p.Do(ctx, func() { time.Sleep(time.Millisecond); ran.Add(1) })
			if err != nil {
				if !password.Refused(err) {
					t.Errorf("err %v", err)
				}
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	s := p.Stats()
	if s.Running != 0 || s.Waiting != 0 || int64(s.Completed) != ran.Load() || ran.Load()+refused.Load() != 400 ||
		s.Rejected+s.TimedOut+s.Abandoned+s.Throttled != uint64(refused.Load()) || s.PeakRunning > 2 {
		t.Fatalf("stats %+v, ran %d refused %d", s, ran.Load(), refused.Load())
	}
	// The pool still works, at full width.
	g := newGate()
	for range 2 {
		wg.Go(func() {
			_ = p.Do(password.WithCaller(context.Background(), fmt.Sprint(time.Now().UnixNano()), ""), g.job)
		})
	}
	poll.Until(t, 10*time.Second, "both slots", func() bool { return p.Stats().Running == 2 })
	close(g.release)
	wg.Wait()
}
