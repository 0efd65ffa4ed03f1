package job

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysjob"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/sysconfig"
	"github.com/adminkernel/kernel/host/tracing"
)

// Engine timings.
const (
	// DefaultLease is how long a run's lease lasts without renewal.
	DefaultLease = 15 * time.Second
	// tickEvery is how often the scheduler looks for due firings.
	tickEvery = 250 * time.Millisecond
	// maintainEvery is how often leases are renewed, kill requests polled
	// (the database path of a kill) and expired leases reaped.
	maintainEvery = 500 * time.Millisecond
	// reapEvery is how often expired leases are looked for.
	reapEvery = time.Second
	// reloadEvery is how often the job list is re-read (a change on this
	// replica reloads it at once).
	reloadEvery = 2 * time.Second
	// MisfireGrace: a firing older than this when a replica first sees it
	// is a misfire (downtime), handled by the job's Misfire policy.
	MisfireGrace = 10 * time.Second
	// maxParallel caps the running runs of one Parallel job (47013 for a
	// manual run beyond it; a scheduled firing beyond it is Skipped).
	maxParallel = 16
	// maxOutput bounds a run's output and error message (characters).
	maxOutput = 16 << 10
	// finishTimeout bounds the final write of a run.
	finishTimeout = 5 * time.Second
)

var (
	errKilled   = errors.New("killed by an operator")
	errShutdown = errors.New("interrupted: the replica shut down")
)

// Options build an Engine.
type Options struct {
	Client *ent.Client
	SQL    *sql.DB
	// Dialect is the ent dialect of SQL (dialect.SQLite, ...).
	Dialect  string
	Settings *sysconfig.Service
	Events   *events.Bus
	Config   config.Job
	// Outbound are the address ranges Http jobs may reach beyond public
	// ones (Service:Outbound).
	Outbound config.Outbound
	Log      hclog.Logger
	// Instance names this replica in the run log (default host name,
	// process id and a random tag).
	Instance string
	// Now is the clock (nil = time.Now). For tests.
	Now func() time.Time
	// Notify delivers the notice of a job with alertByNotice that failed
	// failAlertThreshold times in a row to one user (nil: notices are not
	// built, or disabled: the switch then only logs).
	Notify func(ctx context.Context, userID int64, title, content string) error
	// Tracer traces each run as a span of its own trace (nil: tracing off).
	Tracer *tracing.Tracer
	// Sessions purges ended sessions for kernel.sessionCleanup (the session
	// service; nil: the handler fails).
	Sessions SessionPurger
}

// SessionPurger is what the session cleanup needs of the session area.
type SessionPurger interface {
	Purge(ctx context.Context, keep time.Duration) (sessions, tokens int, err error)
}

// Engine is one replica's scheduler: it fires due jobs (claiming each
// firing through the database), runs them, renews their leases, honours
// kill requests and marks the runs of dead replicas Failed.
type Engine struct {
	// retention are the modules' purges the log retention runs.
	retention []module.Retention
	client    *ent.Client
	db        *sql.DB
	dialect   string
	settings  *sysconfig.Service
	events    *events.Bus
	cfg       config.Job
	log       hclog.Logger
	instance  string
	now       func() time.Time
	lease     time.Duration
	guard     HTTPGuard
	http      *http.Client
	notify    func(ctx context.Context, userID int64, title, content string) error
	tracer    *tracing.Tracer
	sessions  SessionPurger

	mu        sync.Mutex
	handlers  map[string]module.JobHandler
	running   map[int64]*runState
	cursors   map[int64]time.Time
	jobs      []*ent.SysJob
	loadedAt  time.Time
	dirty     bool
	lastRenew time.Time
	lastReap  time.Time

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	loop   sync.WaitGroup
	unsub  func()
}

type runState struct {
	cancel context.CancelCauseFunc
	jobID  int64
}

// New returns an Engine that is not started.
func New(o Options) *Engine {
	e := &Engine{
		client: o.Client, db: o.SQL, dialect: o.Dialect, settings: o.Settings, events: o.Events, cfg: o.Config,
		log: o.Log, instance: o.Instance, now: o.Now, notify: o.Notify, tracer: o.Tracer, sessions: o.Sessions,
		handlers: map[string]module.JobHandler{}, running: map[int64]*runState{}, cursors: map[int64]time.Time{},
		guard: NewHTTPGuard(o.Config, o.Outbound),
		dirty: true,
	}
	if e.log == nil {
		e.log = hclog.NewNullLogger()
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.instance == "" {
		e.instance = instanceName()
	}
	e.lease = DefaultLease
	if o.Config.LeaseSeconds > 0 {
		e.lease = time.Duration(o.Config.LeaseSeconds) * time.Second
	}
	e.http = e.guard.Client()
	e.ctx, e.cancel = context.WithCancelCause(context.Background())
	return e
}

// instanceName is host name, process id and a random tag.
func instanceName() string {
	var tag [3]byte
	_, _ = rand.Read(tag[:])
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "host"
	}
	return textclip.Runes(fmt.Sprintf("%s:%d:%s", name, os.Getpid(), hex.EncodeToString(tag[:])), 128)
}

// Instance returns the name this replica writes into the run log.
func (e *Engine) Instance() string { return e.instance }

// Register adds compiled handlers; a name registered twice is an error.
func (e *Engine) Register(hs ...module.JobHandler) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range hs {
		name := strings.TrimSpace(h.Name)
		if name == "" || len(name) > 128 || h.Run == nil {
			return fmt.Errorf("job handler %q: a name of 1-128 characters and a Run function are required", h.Name)
		}
		if name == BuiltinHTTPHandler || name == BuiltinSQLHandler {
			return fmt.Errorf("job handler %q: the name is the kernel's built-in Http or Sql handler", name)
		}
		if _, dup := e.handlers[name]; dup {
			return fmt.Errorf("job handler %q is registered twice", name)
		}
		h.Name = name
		e.handlers[name] = h
	}
	return nil
}

// Handlers returns the compiled handlers sorted by name.
func (e *Engine) Handlers() []module.JobHandler {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]module.JobHandler, 0, len(e.handlers))
	for _, h := range e.handlers {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (e *Engine) handler(name string) (module.JobHandler, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h, ok := e.handlers[name]
	return h, ok
}

// SQLEnabled reports Service:Job:SqlEnabled.
func (e *Engine) SQLEnabled() bool { return e.cfg.SQLEnabled }

// Guard returns the HTTP guard of Http jobs.
func (e *Engine) Guard() HTTPGuard { return e.guard }

// Changed makes the next tick re-read the job list.
func (e *Engine) Changed() {
	e.mu.Lock()
	e.dirty = true
	e.mu.Unlock()
}

// Start seeds the kernel's system jobs, subscribes to kill requests and
// starts the scheduler loop (unless Service:Job:SchedulerDisabled: then
// only leases, kills and reaping run).
func (e *Engine) Start(ctx context.Context) error {
	if err := e.ensureSystemJobs(ctx); err != nil {
		return err
	}
	if e.events != nil {
		e.unsub = e.events.Subscribe(func(ev events.Event) {
			if k, ok := ev.(events.JobKillRequested); ok {
				e.cancelRun(k.LogID, errKilled)
			}
		})
	}
	e.loop.Add(1)
	go e.run()
	return nil
}

func (e *Engine) run() {
	defer e.loop.Done()
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var lastMaintain time.Time
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		now := e.now()
		if !e.cfg.SchedulerDisabled {
			if err := e.Tick(e.ctx, now); err != nil && e.ctx.Err() == nil {
				e.log.Warn("scheduler pass failed", "error", err)
			}
		}
		if now.Sub(lastMaintain) >= maintainEvery {
			lastMaintain = now
			if err := e.Maintain(e.ctx, now); err != nil && e.ctx.Err() == nil {
				e.log.Warn("job maintenance failed", "error", err)
			}
		}
	}
}

// Stop ends the loop, cancels every run of this replica (their context
// ends; they are logged Failed "interrupted") and waits up to timeout for
// them to write their end.
func (e *Engine) Stop(timeout time.Duration) {
	e.cancel(errShutdown)
	e.loop.Wait()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		e.log.Warn("job runs did not end within the shutdown timeout; their leases will expire", "timeout", timeout)
	}
	if e.unsub != nil {
		e.unsub()
	}
}

// Running returns the ids of the runs of this replica.
func (e *Engine) Running() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]int64, 0, len(e.running))
	for id := range e.running {
		ids = append(ids, id)
	}
	return ids
}

func (e *Engine) cancelRun(logID int64, cause error) bool {
	e.mu.Lock()
	r, ok := e.running[logID]
	e.mu.Unlock()
	if ok {
		r.cancel(cause)
	}
	return ok
}

// jobList returns the live jobs, re-read when stale.
func (e *Engine) jobList(ctx context.Context, now time.Time) ([]*ent.SysJob, error) {
	e.mu.Lock()
	stale := e.dirty || now.Sub(e.loadedAt) >= reloadEvery || now.Before(e.loadedAt)
	jobs := e.jobs
	e.mu.Unlock()
	if !stale {
		return jobs, nil
	}
	jobs, err := e.client.SysJob.Query().Where(sysjob.IsDelete(false), sysjob.Status(StatusReady)).All(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.jobs, e.loadedAt, e.dirty = jobs, now, false
	e.mu.Unlock()
	return jobs, nil
}

// TriggerOf builds a job's trigger.
func TriggerOf(j *ent.SysJob) (Trigger, error) {
	loc, err := location(j.TimeZone)
	if err != nil {
		return Trigger{}, err
	}
	tr := Trigger{Kind: j.TriggerKind, Anchor: j.ScheduleAnchor}
	if j.StartTime != nil {
		tr.Start, tr.Anchor = *j.StartTime, *j.StartTime
	}
	if j.EndTime != nil {
		tr.End = *j.EndTime
	}
	switch j.TriggerKind {
	case TriggerCron:
		if j.CronExpression == nil {
			return Trigger{}, errors.New("no cron expression")
		}
		if tr.Cron, err = ParseCron(*j.CronExpression, loc); err != nil {
			return Trigger{}, err
		}
	case TriggerInterval:
		if j.IntervalSeconds == nil || *j.IntervalSeconds <= 0 {
			return Trigger{}, errors.New("no interval")
		}
		tr.Interval = time.Duration(*j.IntervalSeconds) * time.Second
	case TriggerOneShot:
		if j.RunAt == nil {
			return Trigger{}, errors.New("no runAt")
		}
		tr.RunAt = *j.RunAt
	default:
		return Trigger{}, fmt.Errorf("trigger kind %d", j.TriggerKind)
	}
	return tr, nil
}

func location(tz *string) (*time.Location, error) {
	if tz == nil || strings.TrimSpace(*tz) == "" {
		return time.Local, nil
	}
	return time.LoadLocation(strings.TrimSpace(*tz))
}

// cursor is the time up to which this replica has handled a job's
// firings: the newer of what it handled, the job's last firing (by any
// replica) and the schedule's anchor (no firing before the schedule was
// set is owed).
func (e *Engine) cursor(j *ent.SysJob) time.Time {
	base := j.ScheduleAnchor
	if j.LastFireTime != nil && j.LastFireTime.After(base) {
		base = *j.LastFireTime
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.cursors[j.ID]; ok && !base.After(c) {
		return c
	}
	return base
}

func (e *Engine) setCursor(id int64, t time.Time) {
	e.mu.Lock()
	e.cursors[id] = t
	e.mu.Unlock()
}

// Tick fires the firings due at now: each one is claimed through the
// database (only one replica's claim of a firing succeeds) and run by the
// claimer. Firings older than MisfireGrace are misfires: Skip drops them,
// FireOnceNow runs the newest one once, now.
func (e *Engine) Tick(ctx context.Context, now time.Time) error {
	jobs, err := e.jobList(ctx, now)
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range jobs {
		tr, err := TriggerOf(j)
		if err != nil {
			continue // refused at save time; an old row is left alone
		}
		due := tr.Due(e.cursor(j), now)
		if len(due) == 0 {
			continue
		}
		e.setCursor(j.ID, due[len(due)-1])
		var missed []time.Time
		for len(due) > 0 && now.Sub(due[0]) > MisfireGrace {
			missed, due = append(missed, due[0]), due[1:]
		}
		if len(missed) > 0 && j.MisfireStrategy == MisfireFireOnceNow {
			if _, _, err := e.fire(ctx, j, tr, missed[len(missed)-1], ByMisfire, now); err != nil {
				errs = append(errs, err)
			}
		} else if len(missed) > 0 {
			// Skip: one Skipped row (fireMode MissedSkipped) for the newest
			// missed firing, claimed like a firing so replicas coming back
			// together write it once.
			e.log.Debug("misfired firings skipped", "job", j.Code, "count", len(missed))
			if err := e.missed(ctx, j, tr, missed, now); err != nil {
				errs = append(errs, err)
			}
		}
		for _, t := range due {
			if _, _, err := e.fire(ctx, j, tr, t, BySchedule, now); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// FireInstanceID is the claim key of a scheduled firing: the job id and
// the firing's time in Unix milliseconds.
func FireInstanceID(jobID int64, t time.Time) string {
	return fmt.Sprintf("%d-%d", jobID, t.UnixMilli())
}

func manualInstanceID(jobID int64) string {
	var tag [8]byte
	_, _ = rand.Read(tag[:])
	return fmt.Sprintf("%d-m%s", jobID, hex.EncodeToString(tag[:]))
}

// fire claims one firing of j at t and starts its run. claimed is false
// when another replica claimed it first.
func (e *Engine) fire(ctx context.Context, j *ent.SysJob, tr Trigger, t time.Time, by string, now time.Time) (claimed bool, logID int64, err error) {
	fireID := FireInstanceID(j.ID, t)
	if by == ByManual {
		fireID = manualInstanceID(j.ID)
	}
	running, err := e.client.SysJobLog.Query().Where(sysjoblog.JobID(j.ID), sysjoblog.RunStatus(RunRunning)).Count(ctx)
	if err != nil {
		return false, 0, err
	}
	skip := ""
	switch {
	case j.ConcurrencyMode != ConcurrencyParallel && running > 0:
		skip = "the previous run was still running (SerialSkip)"
	case running >= maxParallel:
		skip = fmt.Sprintf("%d runs of the job were running (the limit)", maxParallel)
	}
	if skip != "" && by == ByManual {
		if j.ConcurrencyMode != ConcurrencyParallel {
			return false, 0, errAlreadyRunning
		}
		return false, 0, errRunLimit
	}
	c := e.client.SysJobLog.Create().SetJobID(j.ID).SetJobName(j.Name).SetFireInstanceID(fireID).
		SetFireTime(t).SetStartTime(now).SetInstance(e.instance).SetTriggeredBy(by)
	if skip != "" {
		c.SetRunStatus(RunSkipped).SetEndTime(now).SetElapsedMs(0).SetErrorMessage(skip)
	} else {
		c.SetRunStatus(RunRunning).SetLeaseUntil(now.Add(e.lease))
	}
	row, err := c.Save(ctx)
	if ent.IsConstraintError(err) {
		return false, 0, nil // another replica claimed the firing
	}
	if err != nil {
		return false, 0, err
	}
	// A manual run is no firing of the schedule: last_fire_time, which
	// every replica's cursor follows, moves with scheduled firings only.
	if by != ByManual {
		upd := e.client.SysJob.Update().Where(sysjob.ID(j.ID), sysjob.Or(sysjob.LastFireTimeIsNil(), sysjob.LastFireTimeLT(t))).
			SetLastFireTime(t)
		if next := tr.Next(now); !next.IsZero() {
			upd.SetNextFireTime(next)
		} else {
			upd.ClearNextFireTime()
		}
		if j.TriggerKind == TriggerOneShot {
			upd.SetStatus(StatusCompleted)
		}
		if _, err := upd.Save(ctx); err != nil {
			e.log.Warn("could not record the job's last firing", "job", j.Code, "error", err)
		}
	}
	if skip != "" {
		e.log.Info("job firing skipped", "job", j.Code, "fire_instance_id", fireID, "reason", skip)
		return true, row.ID, nil
	}
	e.launch(j, row)
	return true, row.ID, nil
}

// missed writes the Skipped row of the firings a Skip job missed while
// no replica ran: the newest one's fire instance id, triggeredBy missed.
func (e *Engine) missed(ctx context.Context, j *ent.SysJob, tr Trigger, missed []time.Time, now time.Time) error {
	t := missed[len(missed)-1]
	msg := fmt.Sprintf("%d firing(s) missed while no replica ran, the first at %s; skipped (misfire strategy Skip)",
		len(missed), missed[0].UTC().Format(time.RFC3339))
	_, err := e.client.SysJobLog.Create().SetJobID(j.ID).SetJobName(j.Name).SetFireInstanceID(FireInstanceID(j.ID, t)).
		SetFireTime(t).SetStartTime(now).SetInstance(e.instance).SetTriggeredBy(ByMissed).
		SetRunStatus(RunSkipped).SetEndTime(now).SetElapsedMs(0).SetErrorMessage(msg).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil // another replica wrote it
	}
	if err != nil {
		return err
	}
	upd := e.client.SysJob.Update().Where(sysjob.ID(j.ID), sysjob.Or(sysjob.LastFireTimeIsNil(), sysjob.LastFireTimeLT(t))).SetLastFireTime(t)
	if next := tr.Next(now); !next.IsZero() {
		upd.SetNextFireTime(next)
	}
	_, err = upd.Save(ctx)
	return err
}

var (
	errAlreadyRunning = errors.New("already running")
	errRunLimit       = errors.New("run limit")
)

// launch runs a claimed firing on its own goroutine.
func (e *Engine) launch(j *ent.SysJob, row *ent.SysJobLog) {
	ctx, cancel := context.WithCancelCause(e.ctx)
	e.mu.Lock()
	e.running[row.ID] = &runState{cancel: cancel, jobID: j.ID}
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer cancel(nil)
		runCtx := ctx
		if j.TimeoutSeconds > 0 {
			var stop context.CancelFunc
			runCtx, stop = context.WithTimeout(ctx, time.Duration(j.TimeoutSeconds)*time.Second)
			defer stop()
		}
		var attempt int
		out, traceID, err := e.traced(runCtx, j, row, &attempt)
		e.finish(j, row, runCtx, ctx, out, traceID, attempt, err)
		e.mu.Lock()
		delete(e.running, row.ID)
		e.mu.Unlock()
	}()
}

// traced is execute inside a span "job <code>" of its own trace, with the
// job's id, code and name and the run's log id; a failed run marks the span
// failed. Without a tracer it is execute. traceID is the run's trace when
// it was sampled ("" otherwise), for the run log.
func (e *Engine) traced(ctx context.Context, j *ent.SysJob, row *ent.SysJobLog, attempt *int) (out, traceID string, err error) {
	if e.tracer == nil {
		out, err = e.execute(ctx, j, row, attempt)
		return out, "", err
	}
	ctx, span := e.tracer.Start(ctx, "job "+j.Code, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.Int64("adminkernel.job.id", j.ID), attribute.String("adminkernel.job.code", j.Code),
			attribute.String("adminkernel.job.name", j.Name), attribute.Int64("adminkernel.job.run_id", row.ID)))
	defer span.End()
	if sc := span.SpanContext(); sc.IsValid() && sc.IsSampled() {
		traceID = sc.TraceID().String()
	}
	out, err = e.execute(ctx, j, row, attempt)
	tracing.RecordError(span, err)
	return out, traceID, err
}

// execute runs the job's handler, retrying a failure retryCount times
// within the run; *last is the index of the last attempt (0: the first).
func (e *Engine) execute(ctx context.Context, j *ent.SysJob, row *ent.SysJobLog, last *int) (string, error) {
	var out string
	var err error
	for attempt := 0; attempt <= max(j.RetryCount, 0); attempt++ {
		if attempt > 0 {
			wait := time.Duration(j.RetryIntervalSeconds) * time.Second
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return out, err
			case <-t.C:
			}
		}
		*last = attempt
		out, err = e.once(ctx, j, row)
		if err == nil || ctx.Err() != nil {
			return out, err
		}
		if errors.Is(err, errNoHandler) {
			return out, err
		}
	}
	return out, err
}

var errNoHandler = errors.New("the compiled handler is not registered")

func (e *Engine) once(ctx context.Context, j *ent.SysJob, row *ent.SysJobLog) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the handler panicked: %v", p)
		}
	}()
	switch j.HandlerKind {
	case HandlerCompiled:
		h, ok := e.handler(j.HandlerName)
		if !ok {
			if _, uerr := e.client.SysJob.UpdateOneID(j.ID).SetStatus(StatusPanic).Save(context.WithoutCancel(ctx)); uerr == nil {
				e.Changed()
			}
			return "", fmt.Errorf("%w: %q (the job is set to Panic)", errNoHandler, j.HandlerName)
		}
		param := ""
		if j.HandlerParam != nil {
			param = *j.HandlerParam
		}
		return h.Run(ctx, module.JobRun{JobID: j.ID, JobCode: j.Code, LogID: row.ID, Param: param, FireTime: row.FireTime,
			Log: e.log.With("job", j.Code, "run", row.ID)})
	case HandlerHTTP:
		headers, err := parseHeaders(j.HTTPHeaders)
		if err != nil {
			return "", err
		}
		return e.guard.Do(ctx, e.http, HTTPSpec{URL: deref(j.HTTPURL), Method: deref(j.HTTPMethod), Body: deref(j.HTTPBody), Headers: headers,
			SuccessStatuses: deref(j.HTTPSuccessStatuses)})
	case HandlerSQL:
		return e.runSQL(ctx, deref(j.SQL))
	}
	return "", fmt.Errorf("handler kind %d", j.HandlerKind)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// finish writes a run's end. runCtx is the run's context (with the
// timeout), ctx the one kill and shutdown cancel.
func (e *Engine) finish(j *ent.SysJob, row *ent.SysJobLog, runCtx, ctx context.Context, out, traceID string, attempt int, runErr error) {
	end := e.now()
	status, msg := RunSuccess, ""
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errKilled):
		status, msg = RunCancelled, "killed by an operator"
	case errors.Is(cause, errShutdown):
		status, msg = RunFailed, errShutdown.Error()
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		status, msg = RunTimeout, fmt.Sprintf("timed out after %d s", j.TimeoutSeconds)
	case runErr != nil:
		status, msg = RunFailed, runErr.Error()
	}
	wctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	upd := e.client.SysJobLog.Update().Where(sysjoblog.ID(row.ID), sysjoblog.RunStatus(RunRunning)).
		SetRunStatus(status).SetEndTime(end).SetElapsedMs(end.Sub(row.StartTime).Milliseconds()).ClearLeaseUntil().SetRetryIndex(attempt)
	if out != "" {
		upd.SetOutput(cleanText(out))
	}
	if msg != "" {
		upd.SetErrorMessage(cleanText(msg))
	}
	if traceID != "" {
		upd.SetTraceID(traceID)
	}
	n, err := upd.Save(wctx)
	if err != nil {
		e.log.Warn("could not write the end of a job run", "job", j.Code, "run", row.ID, "error", err)
		return
	}
	if n == 0 {
		e.log.Warn("a job run ended after its lease was reaped", "job", j.Code, "run", row.ID, "status", status)
		return
	}
	if j.HandlerKind == HandlerSQL {
		e.opLogSQL(wctx, j, row, status, msg, end.Sub(row.StartTime).Milliseconds())
	}
	ju := e.client.SysJob.UpdateOneID(j.ID).SetLastRunStatus(status).AddNumberOfRuns(1)
	if status == RunSuccess {
		ju.SetConsecutiveFailures(0)
	} else {
		ju.AddConsecutiveFailures(1).AddNumberOfErrors(1)
	}
	if saved, err := ju.Save(wctx); err == nil && status != RunSuccess && j.FailAlertThreshold > 0 && saved.ConsecutiveFailures == j.FailAlertThreshold {
		e.alert(wctx, j, saved.ConsecutiveFailures, msg)
	}
	e.log.Info("job run ended", "job", j.Code, "run", row.ID, "status", status, "elapsed_ms", end.Sub(row.StartTime).Milliseconds())
}

// opLogSQL records a Sql job's run in the operation log (every run,
// scheduled or manual: the statement ran with the kernel's database
// account): title, method JOB, path /sys/job/{id}/sql, the statement and
// the run's identity as parameters, the outcome and the error.
func (e *Engine) opLogSQL(ctx context.Context, j *ent.SysJob, row *ent.SysJobLog, status int, msg string, elapsed int64) {
	param, _ := json.Marshal(map[string]any{"jobId": j.ID, "code": j.Code, "runId": row.ID, "fireInstanceId": row.FireInstanceID,
		"triggeredBy": row.TriggeredBy, "runStatus": status, "sql": textclip.Runes(deref(j.SQL), 4000)})
	js := cleanText(string(param))
	r := oplog.Row{Time: time.Now(), Title: textclip.Runes("SQL job run: "+j.Name, 256), Method: "JOB",
		Path: fmt.Sprintf("/sys/job/%d/sql", j.ID), ParamJSON: &js, Success: status == RunSuccess, ElapsedMs: elapsed}
	if msg != "" {
		m := textclip.Runes(cleanText(msg), 2000)
		r.ExceptionMessage = &m
	}
	if err := oplog.EntInserter(e.client).Insert(ctx, []oplog.Row{r}); err != nil {
		e.log.Warn("could not write the operation log row of a Sql job run", "job", j.Code, "run", row.ID, "error", err)
	}
}

// Maintain renews the leases of this replica's runs, cancels those an
// operator killed (the database path of a kill: the request is a column
// of the run's row) and marks Failed the runs whose lease expired (their
// replica died).
func (e *Engine) Maintain(ctx context.Context, now time.Time) error {
	ids := e.Running()
	var errs []error
	if len(ids) > 0 {
		if now.Sub(e.lastRenew) >= e.lease/3 {
			if _, err := e.client.SysJobLog.Update().Where(sysjoblog.IDIn(ids...), sysjoblog.RunStatus(RunRunning)).
				SetLeaseUntil(now.Add(e.lease)).Save(ctx); err != nil {
				errs = append(errs, err)
			} else {
				e.lastRenew = now
			}
		}
		killed, err := e.client.SysJobLog.Query().Where(sysjoblog.IDIn(ids...), sysjoblog.KillRequested(true)).IDs(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		for _, id := range killed {
			e.cancelRun(id, errKilled)
		}
	}
	if now.Sub(e.lastReap) < reapEvery && !now.Before(e.lastReap) {
		return errors.Join(errs...)
	}
	e.lastReap = now
	n, err := e.client.SysJobLog.Update().Where(sysjoblog.RunStatus(RunRunning), sysjoblog.LeaseUntilLT(now)).
		SetRunStatus(RunFailed).SetEndTime(now).ClearLeaseUntil().
		SetErrorMessage("the lease expired: the replica running it stopped").Save(ctx)
	if err != nil {
		errs = append(errs, err)
	} else if n > 0 {
		e.log.Warn("job runs of a stopped replica marked Failed", "count", n)
	}
	return errors.Join(errs...)
}

// ensureSystemJobs seeds job 1 (wire contract §5.2) when no row has its
// id: a system job running the log retention daily at 03:30.
func (e *Engine) ensureSystemJobs(ctx context.Context) error {
	exists, err := e.client.SysJob.Query().Where(sysjob.ID(SystemJobID)).Exist(ctx)
	if err != nil || exists {
		return err
	}
	err = e.client.SysJob.Create().SetID(SystemJobID).SetCode(SystemJobCode).SetName("任务日志清理").
		SetHandlerKind(HandlerCompiled).SetHandlerName(HandlerLogRetention).
		SetTriggerKind(TriggerCron).SetCronExpression(SystemJobCron).
		SetMisfireStrategy(MisfireFireOnceNow).SetConcurrencyMode(ConcurrencySerialSkip).
		SetTimeoutSeconds(3600).SetIsSystem(true).SetStatus(StatusReady).
		SetRemark("清理超过 sys.job.logRetentionDays 天的任务、操作、登录与异常日志").Exec(ctx)
	if ent.IsConstraintError(err) {
		return nil // another replica seeded it
	}
	return err
}

// The seeded system job (wire contract §5.2).
const (
	SystemJobID   = 1
	SystemJobCode = "sys-job-log-cleanup"
	SystemJobCron = "0 30 3 * * ?"
)

// KeyAlertEmails is the sys_config key of the alert recipients.
const KeyAlertEmails = "sys.job.alertEmails"

// SuperAdminID is the seeded super-admin (wire contract §5.2): the
// receiver of the alert notices of jobs nobody created (system jobs).
const SuperAdminID = 1

// alert reports a job that failed failAlertThreshold times in a row: a
// WARN line naming the recipients of sys.job.alertEmails (the kernel has no
// mailer: the addresses are recorded and logged, docs/developers/jobs.md) and, with
// alertByNotice, a notice (type Message) to the job's creator, or to the
// super-admin for a job nobody created.
func (e *Engine) alert(ctx context.Context, j *ent.SysJob, failures int, msg string) {
	to := ""
	if j.AlertEmails != nil && *j.AlertEmails != "" {
		to = *j.AlertEmails // the job's own recipients
	} else if e.settings != nil {
		to, _ = e.settings.String(ctx, KeyAlertEmails)
	}
	e.log.Warn("job failed repeatedly", "job", j.Code, "consecutive_failures", failures, "alert_emails", to,
		"alert_by_notice", j.AlertByNotice, "last_error", textclip.Runes(msg, 512))
	if !j.AlertByNotice || e.notify == nil {
		return
	}
	receiver := int64(SuperAdminID)
	if j.CreateUserID != nil && *j.CreateUserID > 0 {
		receiver = *j.CreateUserID
	}
	title := textclip.Runes(fmt.Sprintf("Job %s failed %d times in a row", j.Name, failures), 128)
	// The error is a handler's text: made storable like run output (no
	// NUL, valid UTF-8; PostgreSQL refuses NUL).
	content := cleanText(fmt.Sprintf("Job %s (%s) failed %d times in a row. Last error: %s", j.Name, j.Code, failures, textclip.Runes(msg, 1024)))
	if err := e.notify(ctx, receiver, title, content); err != nil {
		e.log.Warn("the job alert notice was not published", "job", j.Code, "receiver", receiver, "error", err)
	}
}

// cleanText makes run output storable everywhere: valid UTF-8 without NUL
// (PostgreSQL text refuses it), at most maxOutput characters.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	return textclip.Runes(s, maxOutput)
}
