// Package oplog writes the operation log (sys_op_log, wire contract §4.9)
// and serves the "Log" module: the operation-log and exception-log pages
// and their clearing endpoints.
//
// By default every write operation (non-GET) on a non-anonymous endpoint is
// logged; a route may opt in with Route.OpLog. Rows go through a bounded
// in-memory queue to a background flusher that inserts them in batches, so
// a slow or broken database never blocks a request: when the queue is full
// the oldest row is dropped and counted. With Service:Logging:OpLog:Sync the
// row is written in the request path, before the response.
package oplog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/internal/textclip"
)

// Defaults (spec, Limits).
const (
	DefaultQueueCapacity = 10000
	DefaultParamMaxChars = 8192
	DefaultBatchSize     = 200
	DefaultDrainTimeout  = 5 * time.Second
	DefaultInsertTimeout = 10 * time.Second
	DefaultSyncTimeout   = 5 * time.Second
	defaultRetryDelay    = 200 * time.Millisecond
	// dropReportInterval spaces the "rows dropped" warnings while the
	// queue stays full.
	dropReportInterval = 10 * time.Second
)

// Column limits of sys_op_log (ent/schema/log.go).
const (
	titleMaxChars     = 256
	methodMaxChars    = 16
	pathMaxChars      = 1024
	messageMaxChars   = 2000
	ipMaxChars        = 64
	userAgentMaxChars = 512
)

// Row is one operation-log entry. Every string is owned by the row (copied
// from the request before the handler returned).
type Row struct {
	// Time is when the operation started (create_time).
	Time             time.Time
	Title            string
	Method           string
	Path             string
	ParamJSON        *string
	ResultCode       int
	Success          bool
	ExceptionMessage *string
	ElapsedMs        int64
	OperatorID       *int64
	IP               string
	UserAgent        string
	// RequestID is the request's X-Request-ID (the caller's when valid).
	RequestID string
	// TraceID is the request's W3C trace id when it was traced
	// (Service:Telemetry:Tracing), else "".
	TraceID string
}

// Inserter stores a batch of rows.
type Inserter interface {
	Insert(ctx context.Context, rows []Row) error
}

// InserterFunc adapts a function to Inserter.
type InserterFunc func(ctx context.Context, rows []Row) error

// Insert calls f.
func (f InserterFunc) Insert(ctx context.Context, rows []Row) error { return f(ctx, rows) }

// EntInserter inserts through ent with one bulk INSERT per batch.
func EntInserter(client *ent.Client) Inserter { return entInserter{client} }

type entInserter struct{ client *ent.Client }

func (e entInserter) Insert(ctx context.Context, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	b := make([]*ent.SysOpLogCreate, len(rows))
	for i, r := range rows {
		c := e.client.SysOpLog.Create().
			SetCreateTime(r.Time).
			SetTitle(r.Title).
			SetHTTPMethod(r.Method).
			SetPath(r.Path).
			SetNillableParamJSON(r.ParamJSON).
			SetResultCode(r.ResultCode).
			SetSuccess(r.Success).
			SetNillableExceptionMessage(r.ExceptionMessage).
			SetElapsedMs(r.ElapsedMs).
			SetNillableOperatorID(r.OperatorID).
			SetNillableCreateUserID(r.OperatorID)
		if r.IP != "" {
			c.SetIP(r.IP)
		}
		if r.UserAgent != "" {
			c.SetUserAgent(r.UserAgent)
		}
		if r.RequestID != "" {
			c.SetRequestID(r.RequestID)
		}
		if r.TraceID != "" {
			c.SetTraceID(r.TraceID)
		}
		b[i] = c
	}
	return e.client.SysOpLog.CreateBulk(b...).Exec(ctx)
}

// Options configure a Writer.
type Options struct {
	// Config is Service:Logging:OpLog. A zero QueueCapacity or ParamMaxChars
	// takes the default (10000, 8192).
	Config config.OpLog
	// BatchSize is the most rows per INSERT (default 200).
	BatchSize int
	// DrainTimeout bounds Close (default 5 s).
	DrainTimeout time.Duration
	// InsertTimeout bounds one batch insert (default 10 s).
	InsertTimeout time.Duration
	// SyncTimeout bounds a synchronous write (default 5 s).
	SyncTimeout time.Duration
	// Trusted are the proxies whose X-Forwarded-For gives the client IP.
	Trusted []*net.IPNet
	// Catalog, when set, gives the msgKey stored as the exception message
	// of a business error.
	Catalog *errcode.Catalog
	// Log receives warnings (queue near its cap, failed batches).
	Log hclog.Logger
	// Recorder, when set, receives panics of the background flusher.
	Recorder *exceptionlog.Recorder
}

// Writer queues and writes operation-log rows. It is safe for concurrent
// use. Create it with New and Close it at shutdown.
type Writer struct {
	ins  Inserter
	opts Options
	log  hclog.Logger

	mu     sync.Mutex
	buf    []Row // ring of cap QueueCapacity
	head   int   // index of the oldest row
	n      int   // rows queued
	warned bool  // the near-cap warning was given and not re-armed yet
	closed bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	ctx    context.Context // cancelled when the drain time is up
	cancel context.CancelFunc

	dropped atomic.Uint64
	lost    atomic.Uint64
	written atomic.Uint64

	// Owned by the flusher goroutine: drops already reported and when.
	reportedDrops  uint64
	lastDropReport time.Time

	closeOnce sync.Once
	closeErr  error
}

// New returns a writer. In asynchronous mode (the default) it starts the
// background flusher.
func New(ins Inserter, opts Options) *Writer {
	if opts.Config.QueueCapacity <= 0 {
		opts.Config.QueueCapacity = DefaultQueueCapacity
	}
	if opts.Config.ParamMaxChars <= 0 {
		opts.Config.ParamMaxChars = DefaultParamMaxChars
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.InsertTimeout <= 0 {
		opts.InsertTimeout = DefaultInsertTimeout
	}
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = DefaultSyncTimeout
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	w := &Writer{
		ins:  ins,
		opts: opts,
		log:  opts.Log,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if opts.Config.Sync {
		close(w.done)
		return w
	}
	w.buf = make([]Row, opts.Config.QueueCapacity)
	go w.run()
	return w
}

// Sync reports whether rows are written in the request path.
func (w *Writer) Sync() bool { return w.opts.Config.Sync }

// ParamMaxChars is the effective cut length of the input JSON.
func (w *Writer) ParamMaxChars() int { return w.opts.Config.ParamMaxChars }

// Dropped is the number of rows dropped because the queue was full (the
// oldest row goes first).
func (w *Writer) Dropped() uint64 { return w.dropped.Load() }

// Lost is the number of rows given up after a failed insert and its retry,
// or still queued when Close ran out of time.
func (w *Writer) Lost() uint64 { return w.lost.Load() }

// Written is the number of rows inserted.
func (w *Writer) Written() uint64 { return w.written.Load() }

// Len is the number of queued rows.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Capacity is the size of the queue.
func (w *Writer) Capacity() int { return w.opts.Config.QueueCapacity }

// Add logs one row. In asynchronous mode it only queues the row and never
// blocks on the database; in Sync mode it inserts the row now (ctx bounds
// the wait together with SyncTimeout; the write survives ctx's
// cancellation) and a failure is logged, never returned.
func (w *Writer) Add(ctx context.Context, r Row) {
	r = normalize(r)
	if w.opts.Config.Sync {
		w.writeSync(ctx, r)
		return
	}
	w.enqueue(r)
}

func (w *Writer) writeSync(ctx context.Context, r Row) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.opts.SyncTimeout)
	defer cancel()
	w.insert(ctx, []Row{r})
}

func (w *Writer) enqueue(r Row) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.lost.Add(1)
		return
	}
	capacity := len(w.buf)
	if w.n == capacity {
		// Full: the oldest row makes room for the newest.
		w.buf[w.head] = r
		w.head = (w.head + 1) % capacity
		w.dropped.Add(1)
	} else {
		w.buf[(w.head+w.n)%capacity] = r
		w.n++
	}
	warn := false
	if !w.warned && w.n >= nearCap(capacity) {
		w.warned, warn = true, true
	}
	queued := w.n
	w.mu.Unlock()
	if warn {
		w.log.Warn("operation log queue is near its capacity; the oldest rows are dropped when it is full",
			"queued", queued, "capacity", capacity, "dropped_so_far", w.dropped.Load())
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// nearCap is the queue length that raises the warning (90 %).
func nearCap(capacity int) int { return max(1, capacity*9/10) }

// take removes up to max rows, oldest first.
func (w *Writer) take(limit int) []Row {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := min(limit, w.n)
	if k == 0 {
		return nil
	}
	out := make([]Row, k)
	capacity := len(w.buf)
	for i := range k {
		idx := (w.head + i) % capacity
		out[i] = w.buf[idx]
		w.buf[idx] = Row{}
	}
	w.head = (w.head + k) % capacity
	w.n -= k
	if w.warned && w.n < capacity/2 {
		w.warned = false // fell back: warn again next time
	}
	return out
}

// run is the background flusher.
func (w *Writer) run() {
	defer close(w.done)
	for {
		select {
		case <-w.wake:
			w.flush()
			w.reportDrops(true)
		case <-w.stop:
			w.flush()
			w.reportDrops(true)
			return
		}
	}
}

// flush writes batches until the queue is empty or the drain time is up.
func (w *Writer) flush() {
	for w.ctx.Err() == nil {
		batch := w.take(w.opts.BatchSize)
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(w.ctx, w.opts.InsertTimeout)
		w.insert(ctx, batch)
		cancel()
		w.reportDrops(false)
	}
}

// reportDrops warns about rows dropped since the last report: once the
// queue has drained (force), or every dropReportInterval while it stays
// busy. One line per overflow episode, never one per row.
func (w *Writer) reportDrops(force bool) {
	d := w.dropped.Load()
	if d == w.reportedDrops {
		return
	}
	now := time.Now()
	if !force && now.Sub(w.lastDropReport) < dropReportInterval {
		return
	}
	since := d - w.reportedDrops
	w.reportedDrops, w.lastDropReport = d, now
	w.log.Warn("operation log queue was full: the oldest rows were dropped",
		"dropped", since, "dropped_total", d, "capacity", w.opts.Config.QueueCapacity)
}

// insert writes a batch, retries it once after a short pause, then gives up
// on it (logged and counted in Lost). A panic of the inserter counts as a
// failure and is recorded; the flusher keeps running.
func (w *Writer) insert(ctx context.Context, rows []Row) {
	err := w.insertOnce(ctx, rows)
	if err != nil && ctx.Err() == nil {
		t := time.NewTimer(defaultRetryDelay)
		select {
		case <-t.C:
			err = w.insertOnce(ctx, rows)
		case <-ctx.Done():
			t.Stop()
		}
	}
	if err != nil {
		w.lost.Add(uint64(len(rows)))
		w.log.Error("writing the operation log failed; rows dropped", "rows", len(rows), "error", err)
		return
	}
	w.written.Add(uint64(len(rows)))
}

func (w *Writer) insertOnce(ctx context.Context, rows []Row) (err error) {
	panicked := exceptionlog.Protect(w.log, w.opts.Recorder, "oplog.insert", func() {
		err = w.ins.Insert(ctx, rows)
	})
	if panicked {
		return errors.New("the operation-log inserter panicked")
	}
	return err
}

// ErrDrainTimeout: Close ran out of time with rows still queued or being
// written.
var ErrDrainTimeout = errors.New("operation log: drain time is up")

// Close stops accepting rows and writes what is queued, for at most
// DrainTimeout (5 s) or until ctx ends. Rows left then are counted in Lost
// and an error is returned. Later rows are counted in Lost. Close is
// idempotent.
func (w *Writer) Close(ctx context.Context) error {
	w.closeOnce.Do(func() { w.closeErr = w.close(ctx) })
	return w.closeErr
}

func (w *Writer) close(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	timer := time.NewTimer(w.opts.DrainTimeout)
	defer timer.Stop()
	var err error
	select {
	case <-w.done:
	case <-timer.C:
		err = ErrDrainTimeout
	case <-ctx.Done():
		err = fmt.Errorf("%w: %w", ErrDrainTimeout, ctx.Err())
	}
	w.cancel()
	if err != nil {
		// The in-flight insert sees its context cancelled; wait briefly for
		// it rather than forever on a driver that ignores cancellation.
		grace := time.NewTimer(time.Second)
		select {
		case <-w.done:
		case <-grace.C:
		}
		grace.Stop()
	}
	w.mu.Lock()
	left := w.n
	w.n = 0
	w.mu.Unlock()
	if left > 0 {
		w.lost.Add(uint64(left))
	}
	if err != nil || left > 0 {
		w.log.Warn("operation log: shutdown drain incomplete", "rows_left", left, "error", err)
	}
	return err
}

// normalize cuts every value to its column.
func normalize(r Row) Row {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Title = textclip.ValidRunes(r.Title, titleMaxChars)
	r.Method = textclip.ValidRunes(r.Method, methodMaxChars)
	r.Path = textclip.ValidRunes(r.Path, pathMaxChars)
	if r.ExceptionMessage != nil {
		m := textclip.ValidRunes(*r.ExceptionMessage, messageMaxChars)
		r.ExceptionMessage = &m
	}
	r.IP = textclip.ValidRunes(r.IP, ipMaxChars)
	r.UserAgent = textclip.ValidRunes(r.UserAgent, userAgentMaxChars)
	return r
}
