package password

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
)

// Defaults of Limits (and of Service:Security:Password:Hash*).
const (
	DefaultQueue   = 64
	DefaultMaxWait = 3 * time.Second
	// DefaultPerClient and DefaultPerAccount are the calls one client key
	// and one account may have running or waiting at once.
	DefaultPerClient  = 2
	DefaultPerAccount = 2
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
	// ErrShare is the cause of a refusal because the caller's client or
	// account already has its share of calls running or waiting (HTTP
	// 429, not 503: the pool may be idle for everyone else).
	ErrShare = errors.New("this client or account already has its share of password hashing")
)

// Refused reports an error of the pool rather than of the hash itself: the
// caller got no answer about the password and must not count it as a wrong
// one. Such errors are *errcode.Error 40008 TooManyRequests with
// args.retryAfterSeconds (the envelope adds Retry-After), HTTP 429 for
// ErrShare and 503 for the others.
func Refused(err error) bool {
	return errors.Is(err, ErrBusy) || errors.Is(err, ErrAbandoned) || errors.Is(err, ErrShare)
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
	// PerClient and PerAccount are the calls one client key and one
	// account (WithCaller) may have running or waiting at once; beyond
	// them a call is refused at once with HTTP 429. ≤ 0 means
	// DefaultPerClient and DefaultPerAccount.
	PerClient  int
	PerAccount int
	// Log receives the (throttled) overload warning; nil discards it.
	Log hclog.Logger
}

// DefaultConcurrency is GOMAXPROCS-1, at least 1. PBKDF2 is pure CPU work:
// more hashes at once than processors only lengthen each one, and with
// every processor hashing the rest of the API waits for Go's scheduler to
// reach the network poller (on 2 CPUs the login storm cut ping throughput
// to under 10 % of idle with a p99 near 30 ms at a pool of 2, against about
// 55 % and under 10 ms at a pool of 1; docs/design/benchmarks.md "Login storm").
// Keeping one processor free costs login throughput (one verification per
// processor less), which the queue absorbs.
func DefaultConcurrency() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Stats are the pool's counters since start (GET /api/v1/sys/monitor/server,
// passwordHashing).
type Stats struct {
	Concurrency   int   `json:"concurrency"`
	QueueCapacity int   `json:"queueCapacity"`
	MaxWaitMillis int64 `json:"maxWaitMillis"`
	PerClient     int   `json:"perClient"`
	PerAccount    int   `json:"perAccount"`
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
	// Throttled counts calls refused at once (HTTP 429) because their
	// client or account already had PerClient or PerAccount calls running
	// or waiting.
	Throttled uint64 `json:"throttled"`
}

// Pool runs at most Concurrency functions at once, with at most Queue
// callers waiting for at most MaxWait. It is safe for concurrent use.
//
// The wait is shared fairly among clients, not first come, first served
// (docs/design/security.md, "Login fairness"). A caller is identified by the
// client and account that WithCaller put in its context; each client key
// (an IPv4 address or an IPv6 /64 network) may have at most PerClient
// hashes running or waiting, and each account at most PerAccount; beyond
// either the call is refused at once (HTTP 429 / 40008, cause ErrShare).
// Waiting callers are served by start-time fair queuing over client keys:
// a call's start tag is the later of the pool's virtual time (the tag of
// the last call started) and the finish tag of its client's previous call,
// and the waiter with the smallest tag starts next (ties in arrival
// order). A client that has been idle is served before the queued calls
// of a client that keeps the pool busy, so a flooding client delays
// another client's hash by at most the hashes already running. Callers
// without a client (administrative operations, the command line) share
// one key without a cap.
type Pool struct {
	maxWait    time.Duration
	queue      int64
	slots      int
	perClient  int32
	perAccount int32
	log        hclog.Logger

	mu sync.Mutex
	// free is the number of idle slots.
	free int
	// flows holds a flow per client key with a hash running or waiting;
	// accounts counts the hashes running or waiting per account.
	flows    map[string]*flow
	accounts map[string]int32
	// backlog lists the flows with waiters (unordered: the scheduler
	// scans it; it holds at most Queue flows).
	backlog []*flow
	// vtime is the start tag of the last call started; seq numbers the
	// arrivals.
	vtime int64
	seq   uint64
	// spare recycles flows; waiters recycles waiters (with their channel
	// and timer).
	spare   []*flow
	waiters sync.Pool

	running, waiting         atomic.Int64
	peakRunning, peakWaiting atomic.Int64
	completed                atomic.Uint64
	busyNanos                atomic.Int64
	rejected, timedOut       atomic.Uint64
	abandoned, throttled     atomic.Uint64
	// avgNanos is a moving average of one computation's duration, for
	// Retry-After.
	avgNanos atomic.Int64
	// lastWarn (unix nanos) and warned (refusals counted at the last
	// warning) throttle the overload warning.
	lastWarn atomic.Int64
	warned   atomic.Uint64
}

// flow is a client key's share of the pool while it has a call running
// or waiting.
type flow struct {
	key string
	// n counts the key's calls running or waiting; finish is the finish
	// tag of its last admitted call.
	n      int32
	finish int64
	// head..tail are its waiters in arrival order (their tags increase by
	// one); queued counts them; at is its index in backlog (-1: none).
	head, tail *waiter
	queued     int
	at         int
}

// waiter is a call waiting for a slot.
type waiter struct {
	ready   chan struct{} // receives the slot (buffered)
	timer   *time.Timer
	start   int64
	seq     uint64
	granted bool
	flow    *flow
	next    *waiter
	prev    *waiter
}

// callerKey is the context key of WithCaller.
type callerKey struct{}

// caller is who asks for a hash.
type caller struct{ client, account string }

// WithCaller returns ctx carrying who asks for the hashes computed under
// it: client is the client's key (ratelimit.ClientKey: the IPv4 address,
// or the /64 network of an IPv6 address) and account the account as login
// matches it (lower-cased). An empty client shares the key of the callers
// without one (no cap); an empty account is not counted.
func WithCaller(ctx context.Context, client, account string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller{client: client, account: account})
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
	if l.PerClient <= 0 {
		l.PerClient = DefaultPerClient
	}
	if l.PerAccount <= 0 {
		l.PerAccount = DefaultPerAccount
	}
	if l.Log == nil {
		l.Log = hclog.NewNullLogger()
	}
	p := &Pool{
		maxWait: l.MaxWait, queue: int64(l.Queue), slots: l.Concurrency, free: l.Concurrency,
		perClient: int32(min(l.PerClient, math.MaxInt32)), perAccount: int32(min(l.PerAccount, math.MaxInt32)), //nolint:gosec // G115: clamped to MaxInt32
		log: l.Log, flows: map[string]*flow{}, accounts: map[string]int32{},
	}
	p.waiters.New = func() any { return &waiter{ready: make(chan struct{}, 1)} }
	return p
}

// refusal is why a call is refused (none: admitted).
type refusal uint8

const (
	admitted refusal = iota
	overShare
	queueFull
	waitTooLong
	gone
)

// Do runs fn once a slot is free. It returns without running fn when the
// caller's client or account already has its share of calls running or
// waiting (Refused, cause ErrShare, HTTP 429), when the queue is full, when
// the caller's expected wait (the calls that start before it × the mean
// computation time ÷ Concurrency) is beyond MaxWait, when the wait reaches
// MaxWait (these three Refused, cause ErrBusy, HTTP 503) or when ctx ends
// while waiting (Refused, cause ErrAbandoned and ctx's error). A function
// that has started always runs to its end.
func (p *Pool) Do(ctx context.Context, fn func()) error {
	c, _ := ctx.Value(callerKey{}).(caller)
	p.mu.Lock()
	f, w, why := p.admit(ctx, c)
	p.mu.Unlock()
	if why != admitted {
		return p.refused(ctx, why)
	}
	if w != nil {
		if err := p.await(ctx, w, c.account); err != nil {
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
		p.mu.Lock()
		p.leave(f, c.account)
		p.handOn()
		p.mu.Unlock()
	}()
	fn()
	return nil
}

// admit takes a slot for the caller or queues it (w != nil), or says why
// not. p.mu is held.
func (p *Pool) admit(ctx context.Context, c caller) (*flow, *waiter, refusal) {
	f := p.flows[c.client]
	if c.client != "" && f != nil && f.n >= p.perClient {
		return nil, nil, overShare
	}
	if c.account != "" && p.accounts[c.account] >= p.perAccount {
		return nil, nil, overShare
	}
	if f == nil {
		f = p.newFlow(c.client)
	}
	tag := max(p.vtime, f.finish)
	if p.free > 0 && len(p.backlog) == 0 {
		p.free--
		p.enter(f, c.account, tag)
		p.vtime = tag
		return f, nil, admitted
	}
	why := admitted
	switch n := p.waiting.Load() + 1; {
	case n > p.queue:
		why = queueFull
	case ctx.Err() != nil:
		why = gone
	default:
		// The calls that start before this one: every waiter whose tag is
		// not above its tag (each flow's tags increase by one).
		rank := int64(1)
		for _, g := range p.backlog {
			rank += min(max(tag-g.head.start+1, 0), int64(g.queued))
		}
		if avg := time.Duration(p.avgNanos.Load()); avg > 0 && time.Duration(rank)*avg/time.Duration(p.slots) > p.maxWait {
			why = waitTooLong
		}
	}
	if why != admitted {
		p.dropIdle(f)
		return nil, nil, why
	}
	p.enter(f, c.account, tag)
	w := p.waiters.Get().(*waiter)
	p.seq++
	w.start, w.seq, w.granted, w.flow, w.next = tag, p.seq, false, f, nil
	w.prev = f.tail
	if f.tail != nil {
		f.tail.next = w
	} else {
		f.head = w
	}
	f.tail = w
	f.queued++
	if f.at < 0 {
		f.at = len(p.backlog)
		p.backlog = append(p.backlog, f)
	}
	raise(&p.peakWaiting, p.waiting.Add(1))
	return f, w, admitted
}

// enter counts an admitted call of f and account with start tag tag.
func (p *Pool) enter(f *flow, account string, tag int64) {
	f.n++
	f.finish = tag + 1
	if account != "" {
		p.accounts[account]++
	}
}

// leave uncounts a call of f and account that ended or left the queue.
func (p *Pool) leave(f *flow, account string) {
	f.n--
	p.dropIdle(f)
	if account != "" {
		if n := p.accounts[account] - 1; n > 0 {
			p.accounts[account] = n
		} else {
			delete(p.accounts, account)
		}
	}
}

// newFlow returns an empty flow of key, registered in p.flows.
func (p *Pool) newFlow(key string) *flow {
	var f *flow
	if n := len(p.spare); n > 0 {
		f, p.spare = p.spare[n-1], p.spare[:n-1]
	} else {
		f = &flow{}
	}
	*f = flow{key: key, at: -1}
	p.flows[key] = f
	return f
}

// dropIdle forgets f once no call of its key runs or waits.
func (p *Pool) dropIdle(f *flow) {
	if f.n > 0 {
		return
	}
	delete(p.flows, f.key)
	*f = flow{at: -1}
	if len(p.spare) < 64 {
		p.spare = append(p.spare, f)
	}
}

// handOn gives a freed slot to the waiter with the smallest start tag, or
// returns it to the idle slots. p.mu is held.
func (p *Pool) handOn() {
	if len(p.backlog) == 0 {
		p.free++
		return
	}
	best := p.backlog[0]
	for _, g := range p.backlog[1:] {
		if h, b := g.head, best.head; h.start < b.start || (h.start == b.start && h.seq < b.seq) {
			best = g
		}
	}
	w := best.head
	p.unlink(w)
	p.vtime = max(p.vtime, w.start)
	w.granted = true
	w.ready <- struct{}{}
}

// unlink removes a waiter from its flow's queue (and the flow from the
// backlog once empty). p.mu is held.
func (p *Pool) unlink(w *waiter) {
	f := w.flow
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		f.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		f.tail = w.prev
	}
	w.prev, w.next = nil, nil
	f.queued--
	p.waiting.Add(-1)
	if f.queued == 0 {
		last := len(p.backlog) - 1
		moved := p.backlog[last]
		p.backlog[f.at] = moved
		moved.at = f.at
		p.backlog[last] = nil
		p.backlog = p.backlog[:last]
		f.at = -1
	}
}

// await waits for the slot handOn gives w, for MaxWait at most.
func (p *Pool) await(ctx context.Context, w *waiter, account string) error {
	if w.timer == nil {
		w.timer = time.NewTimer(p.maxWait)
	} else {
		w.timer.Reset(p.maxWait)
	}
	why := admitted
	select {
	case <-w.ready:
	case <-ctx.Done():
		why = gone
	case <-w.timer.C:
		why = waitTooLong
	}
	w.timer.Stop()
	if why == admitted {
		p.recycle(w)
		return nil
	}
	p.mu.Lock()
	if w.granted {
		// The slot came as the caller left: a caller that timed out takes
		// it; one whose context ended passes it on.
		<-w.ready
		if why == waitTooLong {
			p.mu.Unlock()
			p.recycle(w)
			return nil
		}
		p.leave(w.flow, account)
		p.handOn()
	} else {
		p.unlink(w)
		p.leave(w.flow, account)
	}
	p.mu.Unlock()
	p.recycle(w)
	if why == waitTooLong {
		why = timedOut
	}
	return p.refused(ctx, why)
}

// recycle returns a waiter to the free list.
func (p *Pool) recycle(w *waiter) {
	w.flow = nil
	p.waiters.Put(w)
}

// timedOut is a refusal after MaxWait in the queue (refused's reason).
const timedOut refusal = 255

// refused counts a refusal and builds its error.
func (p *Pool) refused(ctx context.Context, why refusal) error {
	switch why {
	case overShare:
		p.throttled.Add(1)
		return errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", p.retryAfter()).Wrap(ErrShare)
	case queueFull:
		p.rejected.Add(1)
		return p.refuse(ErrBusy, "queue full")
	case waitTooLong:
		p.rejected.Add(1)
		return p.refuse(ErrBusy, "expected wait beyond the maximum")
	case timedOut:
		p.timedOut.Add(1)
		return p.refuse(ErrBusy, "waited too long")
	default:
		p.abandoned.Add(1)
		return p.refuse(fmt.Errorf("%w: %w", ErrAbandoned, ctx.Err()), "")
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
	n := p.slots
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
		"concurrency", p.slots, "queue", p.queue, "max_wait", p.maxWait)
}

// Stats returns the counters.
func (p *Pool) Stats() Stats {
	return Stats{
		Concurrency:   p.slots,
		QueueCapacity: int(p.queue),
		MaxWaitMillis: p.maxWait.Milliseconds(),
		PerClient:     int(p.perClient),
		PerAccount:    int(p.perAccount),
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
		Throttled:     p.throttled.Load(),
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
