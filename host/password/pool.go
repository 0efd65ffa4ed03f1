package password

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
)

// Defaults of Limits (and of Service:Security:Password:Hash*).
const (
	DefaultQueue   = 64
	DefaultMaxWait = 3 * time.Second
	// warnEvery throttles the overload warning.
	warnEvery = 10 * time.Second
	// maxRetryAfter caps the Retry-After of a refusal, in seconds.
	maxRetryAfter = 30
)

var (
	// ErrBusy is the cause of a refusal: every hashing slot is taken and
	// the wait queue is full, or the wait reached Limits.MaxWait.
	ErrBusy = errors.New("password hashing is saturated")
	// ErrAbandoned is the cause of a refusal whose caller's context ended
	// while it waited for a slot (the work was never started).
	ErrAbandoned = errors.New("caller left while waiting for a password hashing slot")
)

// Refused reports an error of the pool rather than of the hash itself: the
// caller got no answer about the password and must not count it as a wrong
// one. Such errors are *errcode.Error 40008 TooManyRequests with HTTP 503
// and args.retryAfterSeconds (the envelope adds Retry-After).
func Refused(err error) bool {
	return errors.Is(err, ErrBusy) || errors.Is(err, ErrAbandoned)
}

// Limits bound the PBKDF2 work of a hasher.
type Limits struct {
	// Concurrency is the number of hashes computed at once; ≤ 0 means
	// DefaultConcurrency().
	Concurrency int
	// Queue is the number of callers that may wait for a slot; beyond it a
	// call is refused at once. 0 means no waiting; < 0 means DefaultQueue.
	Queue int
	// MaxWait is the longest a caller waits in the queue before it is
	// refused; ≤ 0 means DefaultMaxWait.
	MaxWait time.Duration
	// Log receives the (throttled) overload warning; nil discards it.
	Log hclog.Logger
}

// DefaultConcurrency is GOMAXPROCS-1, at least 1. PBKDF2 is pure CPU work:
// more hashes at once than processors only lengthen each one, and with
// every processor hashing the rest of the API waits for Go's scheduler to
// reach the network poller (on 2 CPUs the login storm cut ping throughput
// to under 10 % of idle with a p99 near 30 ms at a pool of 2, against about
// 55 % and under 10 ms at a pool of 1; docs/benchmarks.md "Login storm").
// Keeping one processor free costs login throughput (one verification per
// processor less), which the queue absorbs.
func DefaultConcurrency() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Stats are the pool's counters since start (GET /api/v1/sys/monitor/server,
// passwordHashing).
type Stats struct {
	Concurrency   int   `json:"concurrency"`
	QueueCapacity int   `json:"queueCapacity"`
	MaxWaitMillis int64 `json:"maxWaitMillis"`
	// Running and Waiting are the hashes being computed and the callers
	// waiting for a slot now.
	Running int64 `json:"running"`
	Waiting int64 `json:"waiting"`
	// PeakRunning and PeakWaiting are the highest values seen.
	PeakRunning int64 `json:"peakRunning"`
	PeakWaiting int64 `json:"peakWaiting"`
	// Completed counts the hashes computed; AvgHashMillis is a moving
	// average of one computation's wall time (what Retry-After is
	// estimated from).
	Completed     uint64  `json:"completed"`
	AvgHashMillis float64 `json:"avgHashMillis"`
	// BusyMillis is the slots' total busy time (the sum of every
	// computation's wall time).
	BusyMillis int64 `json:"busyMillis"`
	// Rejected counts calls refused at once (the queue was full, or the
	// expected wait was beyond MaxWait), TimedOut those refused after
	// MaxWait in the queue, Abandoned those whose
	// caller left while waiting. The three are answered HTTP 503.
	Rejected  uint64 `json:"rejected"`
	TimedOut  uint64 `json:"timedOut"`
	Abandoned uint64 `json:"abandoned"`
}

// Pool runs at most Concurrency functions at once, with at most Queue
// callers waiting (first come, first served) for at most MaxWait. It is
// safe for concurrent use.
type Pool struct {
	slots   chan struct{}
	queue   int64
	maxWait time.Duration
	log     hclog.Logger

	running, waiting         atomic.Int64
	peakRunning, peakWaiting atomic.Int64
	completed                atomic.Uint64
	busyNanos                atomic.Int64
	rejected, timedOut       atomic.Uint64
	abandoned                atomic.Uint64
	// avgNanos is a moving average of one computation's duration, for
	// Retry-After.
	avgNanos atomic.Int64
	// lastWarn (unix nanos) and warned (refusals counted at the last
	// warning) throttle the overload warning.
	lastWarn atomic.Int64
	warned   atomic.Uint64
}

// NewPool returns a pool with the given limits (defaults applied).
func NewPool(l Limits) *Pool {
	if l.Concurrency <= 0 {
		l.Concurrency = DefaultConcurrency()
	}
	if l.Queue < 0 {
		l.Queue = DefaultQueue
	}
	if l.MaxWait <= 0 {
		l.MaxWait = DefaultMaxWait
	}
	if l.Log == nil {
		l.Log = hclog.NewNullLogger()
	}
	return &Pool{slots: make(chan struct{}, l.Concurrency), queue: int64(l.Queue), maxWait: l.MaxWait, log: l.Log}
}

// Do runs fn once a slot is free. It returns without running fn when the
// queue is full, when the caller's expected wait (its place in the queue ×
// the mean computation time ÷ Concurrency) is beyond MaxWait, when the wait
// reaches MaxWait (all three Refused, cause ErrBusy) or when ctx ends while waiting (Refused, cause ErrAbandoned and
// ctx's error). A function that has started always runs to its end.
func (p *Pool) Do(ctx context.Context, fn func()) error {
	select {
	case p.slots <- struct{}{}:
	default:
		if err := p.wait(ctx); err != nil {
			return err
		}
	}
	raise(&p.peakRunning, p.running.Add(1))
	start := time.Now()
	defer func() {
		d := time.Since(start).Nanoseconds()
		p.busyNanos.Add(d)
		if avg := p.avgNanos.Load(); avg > 0 {
			d = avg + (d-avg)/8
		}
		p.avgNanos.Store(d)
		p.running.Add(-1)
		p.completed.Add(1)
		<-p.slots
	}()
	fn()
	return nil
}

// wait queues the caller for a slot. A buffered channel hands a freed slot
// to the longest-waiting sender, so the queue is first come, first served
// and a newcomer cannot overtake it.
func (p *Pool) wait(ctx context.Context) error {
	n := p.waiting.Add(1)
	if n > p.queue {
		p.waiting.Add(-1)
		p.rejected.Add(1)
		return p.refuse(ErrBusy, "queue full")
	}
	// A place whose expected wait (its rank × the mean hash time ÷ the
	// slots) is beyond MaxWait would only time out: refuse it now.
	if avg := time.Duration(p.avgNanos.Load()); avg > 0 && time.Duration(n)*avg/time.Duration(cap(p.slots)) > p.maxWait {
		p.waiting.Add(-1)
		p.rejected.Add(1)
		return p.refuse(ErrBusy, "expected wait beyond the maximum")
	}
	raise(&p.peakWaiting, n)
	defer p.waiting.Add(-1)
	if err := ctx.Err(); err != nil {
		p.abandoned.Add(1)
		return p.refuse(fmt.Errorf("%w: %w", ErrAbandoned, err), "")
	}
	t := time.NewTimer(p.maxWait)
	defer t.Stop()
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		p.abandoned.Add(1)
		return p.refuse(fmt.Errorf("%w: %w", ErrAbandoned, ctx.Err()), "")
	case <-t.C:
		p.timedOut.Add(1)
		return p.refuse(ErrBusy, "waited too long")
	}
}

// refuse builds the 503 answer and, for a saturation (reason != ""), logs
// the throttled warning.
func (p *Pool) refuse(cause error, reason string) error {
	if reason != "" {
		p.warn(reason)
	}
	e := errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", p.retryAfter()).Wrap(cause)
	e.Status = http.StatusServiceUnavailable
	return e
}

// retryAfter estimates, in whole seconds (1..30), when the current queue
// will have drained.
func (p *Pool) retryAfter() int {
	avg := time.Duration(p.avgNanos.Load())
	if avg <= 0 {
		return 1
	}
	n := cap(p.slots)
	ahead := p.waiting.Load() + int64(n)
	s := math.Ceil((time.Duration(ahead) * avg / time.Duration(n)).Seconds())
	return int(min(max(s, 1), maxRetryAfter))
}

// warn logs at most one warning per warnEvery, with the refusals since the
// previous one.
func (p *Pool) warn(reason string) {
	now := time.Now().UnixNano()
	last := p.lastWarn.Load()
	if last != 0 && now-last < int64(warnEvery) {
		return
	}
	if !p.lastWarn.CompareAndSwap(last, now) {
		return
	}
	total := p.rejected.Load() + p.timedOut.Load()
	since := total - p.warned.Swap(total)
	p.log.Warn("password hashing saturated: logins and password changes are answered 503 (see Service:Security:Password:HashConcurrency, HashQueue, HashMaxWaitMillis)",
		"reason", reason, "refused", since, "refused_total", total,
		"concurrency", cap(p.slots), "queue", p.queue, "max_wait", p.maxWait)
}

// Stats returns the counters.
func (p *Pool) Stats() Stats {
	return Stats{
		Concurrency:   cap(p.slots),
		QueueCapacity: int(p.queue),
		MaxWaitMillis: p.maxWait.Milliseconds(),
		Running:       p.running.Load(),
		Waiting:       p.waiting.Load(),
		PeakRunning:   p.peakRunning.Load(),
		PeakWaiting:   p.peakWaiting.Load(),
		Completed:     p.completed.Load(),
		AvgHashMillis: float64(p.avgNanos.Load()) / 1e6,
		BusyMillis:    p.busyNanos.Load() / 1e6,
		Rejected:      p.rejected.Load(),
		TimedOut:      p.timedOut.Load(),
		Abandoned:     p.abandoned.Load(),
	}
}

// raise stores v in m if it is higher.
func raise(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}
