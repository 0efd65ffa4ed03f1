package job

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysjob"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

// Input is the contract's JobInput (POST /sys/job, PUT /sys/job/{id}: a
// full replace; code is immutable on update).
type Input struct {
	Code                 string  `json:"code"`
	Name                 string  `json:"name"`
	HandlerKind          int     `json:"handlerKind"`
	HandlerName          string  `json:"handlerName"`
	HandlerParam         *string `json:"handlerParam"`
	HTTPURL              *string `json:"httpUrl"`
	HTTPMethod           *string `json:"httpMethod"`
	HTTPBody             *string `json:"httpBody"`
	HTTPHeaders          *string `json:"httpHeaders"`
	SQL                  *string `json:"sql"`
	TriggerKind          int     `json:"triggerKind"`
	CronExpression       *string `json:"cronExpression"`
	IntervalSeconds      *int    `json:"intervalSeconds"`
	RunAt                *string `json:"runAt"`
	TimeZone             *string `json:"timeZone"`
	MisfireStrategy      int     `json:"misfireStrategy"`
	ConcurrencyMode      int     `json:"concurrencyMode"`
	TimeoutSeconds       int     `json:"timeoutSeconds"`
	RetryCount           int     `json:"retryCount"`
	RetryIntervalSeconds int     `json:"retryIntervalSeconds"`
	FailAlertThreshold   int     `json:"failAlertThreshold"`
	AlertByNotice        bool    `json:"alertByNotice"`
	Remark               *string `json:"remark"`
	StartTime            *string `json:"startTime"`
	EndTime              *string `json:"endTime"`
}

// Job is the contract's SysJob.
type Job struct {
	ID                   int64   `json:"id"`
	IsDelete             bool    `json:"isDelete"`
	CreateTime           string  `json:"createTime"`
	CreateUserID         *int64  `json:"createUserId"`
	UpdateTime           *string `json:"updateTime"`
	UpdateUserID         *int64  `json:"updateUserId"`
	Code                 string  `json:"code"`
	Name                 string  `json:"name"`
	HandlerKind          int     `json:"handlerKind"`
	HandlerName          string  `json:"handlerName"`
	HandlerParam         *string `json:"handlerParam"`
	HTTPURL              *string `json:"httpUrl"`
	HTTPMethod           *string `json:"httpMethod"`
	HTTPBody             *string `json:"httpBody"`
	HTTPHeaders          *string `json:"httpHeaders"`
	SQL                  *string `json:"sql"`
	TriggerKind          int     `json:"triggerKind"`
	CronExpression       *string `json:"cronExpression"`
	IntervalSeconds      *int    `json:"intervalSeconds"`
	RunAt                *string `json:"runAt"`
	TimeZone             *string `json:"timeZone"`
	MisfireStrategy      int     `json:"misfireStrategy"`
	ConcurrencyMode      int     `json:"concurrencyMode"`
	TimeoutSeconds       int     `json:"timeoutSeconds"`
	RetryCount           int     `json:"retryCount"`
	RetryIntervalSeconds int     `json:"retryIntervalSeconds"`
	FailAlertThreshold   int     `json:"failAlertThreshold"`
	AlertByNotice        bool    `json:"alertByNotice"`
	Remark               *string `json:"remark"`
	StartTime            *string `json:"startTime"`
	EndTime              *string `json:"endTime"`
	Status               int     `json:"status"`
	IsSystem             bool    `json:"isSystem"`
	NextFireTime         *string `json:"nextFireTime"`
	LastFireTime         *string `json:"lastFireTime"`
	LastRunStatus        *int    `json:"lastRunStatus"`
}

// Log is the contract's SysJobLog.
type Log struct {
	ID             int64   `json:"id"`
	JobID          int64   `json:"jobId"`
	JobName        string  `json:"jobName"`
	FireInstanceID string  `json:"fireInstanceId"`
	RunStatus      int     `json:"runStatus"`
	FireTime       string  `json:"fireTime"`
	StartTime      string  `json:"startTime"`
	EndTime        *string `json:"endTime"`
	ElapsedMs      *int64  `json:"elapsedMs"`
	Output         *string `json:"output"`
	ErrorMessage   *string `json:"errorMessage"`
	Instance       string  `json:"instance"`
	TriggeredBy    string  `json:"triggeredBy"`
	// TraceID is the run's trace when tracing sampled it (null otherwise).
	TraceID *string `json:"traceId"`
}

// Filter is the query of GET /sys/job/page.
type Filter struct {
	Name        string
	Status      *int64
	HandlerKind *int64
}

// LogFilter is the query of GET /sys/job/log/page.
type LogFilter struct {
	JobID          *int64
	RunStatus      *int64
	StartFrom      *time.Time
	StartTo        *time.Time
	FireInstanceID string
}

// IDs is the body of POST /sys/job/batch-delete.
type IDs struct {
	IDs []request.Int64 `json:"ids"`
}

// ClearInput is the body of POST /sys/job/log/clear.
type ClearInput struct {
	// BeforeDays keeps the runs that started in the last n days (absent:
	// every ended run).
	BeforeDays *int `json:"beforeDays"`
	// JobID limits the clearing to one job.
	JobID *request.Int64 `json:"jobId"`
}

// HandlerList is the answer of GET /sys/job/handlers.
type HandlerList struct {
	Handlers   []module.JobHandler `json:"handlers"`
	SQLEnabled bool                `json:"sqlEnabled"`
}

// Dashboard is the answer of GET /sys/job/dashboard.
type Dashboard struct {
	JobTotal  int `json:"jobTotal"`
	JobReady  int `json:"jobReady"`
	JobPaused int `json:"jobPaused"`
	JobOther  int `json:"jobOther"`
	Running   int `json:"running"`
	// The run counts of the last 24 hours by status.
	Last24h      map[string]int `json:"last24h"`
	RecentFailed []Log          `json:"recentFailed"`
}

// Service is the /sys/job operations over the engine.
type Service struct {
	client *ent.Client
	engine *Engine
	events *events.Bus
	now    func() time.Time
}

// NewService returns the operations of e.
func NewService(client *ent.Client, e *Engine, bus *events.Bus) *Service {
	return &Service{client: client, engine: e, events: bus, now: e.now}
}

const (
	maxCodeLen   = 64
	maxNameLen   = 128
	maxRemarkLen = 512
	maxURLLen    = 2048
	maxTextLen   = 64 << 10
)

var codePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

var timeLayouts = []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", time.RFC3339Nano}

// parseTime reads a date-time of the body in loc (RFC 3339 keeps its
// offset).
func parseTime(field string, s *string, loc *time.Location) (*time.Time, error) {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, strings.TrimSpace(*s), loc); err == nil {
			if y := t.UTC().Year(); y < 1970 || y > 9999 {
				break
			}
			return &t, nil
		}
	}
	return nil, request.Invalid(field)
}

func invalidProps(field string) *errcode.Error {
	return errcode.New(errcode.JobPropsInvalid).With("field", field)
}

func optText(field string, s *string, limit int) (*string, error) {
	if s == nil {
		return nil, nil
	}
	v := strings.TrimSpace(*s)
	if v == "" {
		return nil, nil
	}
	if len([]rune(v)) > limit || strings.ContainsRune(v, 0) {
		return nil, request.Invalid(field)
	}
	return &v, nil
}

// checked is a validated Input.
type checked struct {
	in               Input
	param, url, meth *string
	body, headers    *string
	sql, cron, tz    *string
	remark           *string
	interval         *int
	runAt            *time.Time
	start, end       *time.Time
}

// validate checks an Input (47003-47011, 48002).
func (s *Service) validate(in Input) (checked, error) {
	c := checked{in: in}
	var err error
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || len([]rune(in.Name)) > maxNameLen {
		return c, request.Invalid("name")
	}
	c.in.Name = in.Name
	if c.tz, err = optText("timeZone", in.TimeZone, 64); err != nil {
		return c, err
	}
	loc, err := location(c.tz)
	if err != nil {
		return c, invalidProps("timeZone")
	}
	if c.remark, err = optText("remark", in.Remark, maxRemarkLen); err != nil {
		return c, err
	}
	if c.param, err = optText("handlerParam", in.HandlerParam, maxTextLen); err != nil {
		return c, err
	}
	if c.param != nil && !json.Valid([]byte(*c.param)) {
		return c, invalidProps("handlerParam")
	}
	switch in.HandlerKind {
	case HandlerCompiled:
		c.in.HandlerName = strings.TrimSpace(in.HandlerName)
		if _, ok := s.engine.handler(c.in.HandlerName); !ok {
			return c, errcode.New(errcode.JobHandlerNotFound).With("handlerName", textclipName(c.in.HandlerName))
		}
	case HandlerHTTP:
		c.in.HandlerName = ""
		if c.url, err = optText("httpUrl", in.HTTPURL, maxURLLen); err != nil {
			return c, err
		}
		if c.url == nil {
			return c, invalidProps("httpUrl")
		}
		if _, err := s.engine.guard.CheckURL(*c.url); err != nil {
			return c, errcode.New(errcode.JobHttpUrlBlocked).Wrap(err)
		}
		m := http.MethodGet
		if in.HTTPMethod != nil && strings.TrimSpace(*in.HTTPMethod) != "" {
			m = strings.ToUpper(strings.TrimSpace(*in.HTTPMethod))
		}
		if !httpMethods[m] {
			return c, invalidProps("httpMethod")
		}
		c.meth = &m
		if c.body, err = optText("httpBody", in.HTTPBody, maxTextLen); err != nil {
			return c, err
		}
		if c.headers, err = optText("httpHeaders", in.HTTPHeaders, maxTextLen); err != nil {
			return c, err
		}
		if _, err := parseHeaders(c.headers); err != nil {
			return c, invalidProps("httpHeaders")
		}
	case HandlerSQL:
		c.in.HandlerName = ""
		if !s.engine.SQLEnabled() {
			return c, errcode.New(errcode.JobSqlDisabled)
		}
		if c.sql, err = optText("sql", in.SQL, maxTextLen); err != nil {
			return c, err
		}
		if c.sql == nil {
			return c, invalidProps("sql")
		}
	default:
		return c, invalidProps("handlerKind")
	}
	if c.start, err = parseTime("startTime", in.StartTime, loc); err != nil {
		return c, err
	}
	if c.end, err = parseTime("endTime", in.EndTime, loc); err != nil {
		return c, err
	}
	if c.start != nil && c.end != nil && !c.end.After(*c.start) {
		return c, errcode.New(errcode.JobTriggerInvalid).With("field", "endTime")
	}
	switch in.TriggerKind {
	case TriggerCron:
		if c.cron, err = optText("cronExpression", in.CronExpression, maxCronLen); err != nil || c.cron == nil {
			return c, errcode.New(errcode.JobCronInvalid)
		}
		if _, err := ParseCron(*c.cron, loc); err != nil {
			return c, errcode.New(errcode.JobCronInvalid).Wrap(err)
		}
	case TriggerInterval:
		if in.IntervalSeconds == nil || *in.IntervalSeconds < 1 || *in.IntervalSeconds > 366*86400 {
			return c, errcode.New(errcode.JobTriggerInvalid).With("field", "intervalSeconds")
		}
		c.interval = in.IntervalSeconds
	case TriggerOneShot:
		if c.runAt, err = parseTime("runAt", in.RunAt, loc); err != nil {
			return c, err
		}
		if c.runAt == nil || !c.runAt.After(s.now()) {
			return c, errcode.New(errcode.JobTriggerInvalid).With("field", "runAt")
		}
	default:
		return c, errcode.New(errcode.JobTriggerInvalid).With("field", "triggerKind")
	}
	if in.MisfireStrategy == 0 {
		c.in.MisfireStrategy = MisfireSkip
	} else if in.MisfireStrategy != MisfireSkip && in.MisfireStrategy != MisfireFireOnceNow {
		return c, invalidProps("misfireStrategy")
	}
	if in.ConcurrencyMode == 0 {
		c.in.ConcurrencyMode = ConcurrencySerialSkip
	} else if in.ConcurrencyMode != ConcurrencySerialSkip && in.ConcurrencyMode != ConcurrencyParallel {
		return c, invalidProps("concurrencyMode")
	}
	switch {
	case in.TimeoutSeconds < 0 || in.TimeoutSeconds > 7*86400:
		return c, invalidProps("timeoutSeconds")
	case in.RetryCount < 0 || in.RetryCount > 10:
		return c, invalidProps("retryCount")
	case in.RetryIntervalSeconds < 0 || in.RetryIntervalSeconds > 86400:
		return c, invalidProps("retryIntervalSeconds")
	case in.FailAlertThreshold < 0 || in.FailAlertThreshold > 1000:
		return c, invalidProps("failAlertThreshold")
	}
	return c, nil
}

func textclipName(s string) string {
	if r := []rune(s); len(r) > 128 {
		return string(r[:128])
	}
	return s
}

// nextFire is the first firing of the saved job after now (nil: none).
func nextFire(j *ent.SysJob, now time.Time) *time.Time {
	tr, err := TriggerOf(j)
	if err != nil {
		return nil
	}
	from := now
	if j.ScheduleAnchor.After(from) {
		from = j.ScheduleAnchor
	}
	if n := tr.Next(from); !n.IsZero() {
		return &n
	}
	return nil
}

// Add creates a job (Ready) and returns its id.
func (s *Service) Add(ctx context.Context, userID int64, in Input) (int64, error) {
	code := strings.TrimSpace(in.Code)
	if !codePattern.MatchString(code) {
		return 0, request.Invalid("code")
	}
	c, err := s.validate(in)
	if err != nil {
		return 0, err
	}
	now := s.now()
	taken, err := s.client.SysJob.Query().Where(sysjob.Code(code), sysjob.DeleteKey(0)).Exist(ctx)
	if err != nil {
		return 0, err
	}
	if taken {
		return 0, errcode.New(errcode.JobCodeExists)
	}
	cr := s.client.SysJob.Create().SetCode(code).SetCreateUserID(userID).SetScheduleAnchor(now).SetStatus(StatusReady)
	setFields(cr.Mutation(), c)
	j, err := cr.Save(ctx)
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.JobCodeExists)
	}
	if err != nil {
		return 0, err
	}
	if n := nextFire(j, now); n != nil {
		_ = s.client.SysJob.UpdateOneID(j.ID).SetNextFireTime(*n).Exec(ctx)
	}
	s.engine.Changed()
	return j.ID, nil
}

// setFields writes the validated input on a create or update.
func setFields(m *ent.SysJobMutation, c checked) {
	in := c.in
	m.SetName(in.Name)
	m.SetHandlerKind(in.HandlerKind)
	m.SetHandlerName(in.HandlerName)
	setOrClear(c.param, m.SetHandlerParam, m.ClearHandlerParam)
	setOrClear(c.url, m.SetHTTPURL, m.ClearHTTPURL)
	setOrClear(c.meth, m.SetHTTPMethod, m.ClearHTTPMethod)
	setOrClear(c.body, m.SetHTTPBody, m.ClearHTTPBody)
	setOrClear(c.headers, m.SetHTTPHeaders, m.ClearHTTPHeaders)
	setOrClear(c.sql, m.SetSQL, m.ClearSQL)
	m.SetTriggerKind(in.TriggerKind)
	setOrClear(c.cron, m.SetCronExpression, m.ClearCronExpression)
	setOrClear(c.interval, m.SetIntervalSeconds, m.ClearIntervalSeconds)
	setOrClear(c.runAt, m.SetRunAt, m.ClearRunAt)
	setOrClear(c.tz, m.SetTimeZone, m.ClearTimeZone)
	m.SetMisfireStrategy(in.MisfireStrategy)
	m.SetConcurrencyMode(in.ConcurrencyMode)
	m.SetTimeoutSeconds(in.TimeoutSeconds)
	m.SetRetryCount(in.RetryCount)
	m.SetRetryIntervalSeconds(in.RetryIntervalSeconds)
	m.SetFailAlertThreshold(in.FailAlertThreshold)
	m.SetAlertByNotice(in.AlertByNotice)
	setOrClear(c.remark, m.SetRemark, m.ClearRemark)
	setOrClear(c.start, m.SetStartTime, m.ClearStartTime)
	setOrClear(c.end, m.SetEndTime, m.ClearEndTime)
}

func setOrClear[T any](v *T, set func(T), clear func()) {
	if v != nil {
		set(*v)
	} else {
		clear()
	}
}

func (s *Service) live(ctx context.Context, id int64) (*ent.SysJob, error) {
	j, err := s.client.SysJob.Query().Where(sysjob.ID(id), sysjob.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.JobNotFound)
	}
	return j, err
}

// Update replaces a job (code is immutable; a system job keeps its
// handler, 47014, and the bounds of checkSystem, 47015-47016). The
// schedule restarts from now.
func (s *Service) Update(ctx context.Context, userID, id int64, in Input) error {
	j, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	c, err := s.validate(in)
	if err != nil {
		return err
	}
	if j.IsSystem && (c.in.HandlerKind != j.HandlerKind || c.in.HandlerName != j.HandlerName) {
		return errcode.New(errcode.JobProtected)
	}
	if j.IsSystem {
		if err := s.checkSystem(ctx, c); err != nil {
			return err
		}
	}
	now := s.now()
	u := s.client.SysJob.UpdateOneID(id).Where(sysjob.IsDelete(false)).SetUpdateUserID(userID).SetScheduleAnchor(now)
	setFields(u.Mutation(), c)
	if j.Status == StatusPanic || (j.Status == StatusCompleted && c.in.TriggerKind == TriggerOneShot) {
		u.SetStatus(StatusReady)
	}
	saved, err := u.Save(ctx)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.JobNotFound)
	}
	if err != nil {
		return err
	}
	if n := nextFire(saved, now); n != nil {
		err = s.client.SysJob.UpdateOneID(id).SetNextFireTime(*n).Exec(ctx)
	} else {
		err = s.client.SysJob.UpdateOneID(id).ClearNextFireTime().Exec(ctx)
	}
	s.engine.Changed()
	return err
}

// Delete soft-deletes a job (47014 for a system job). Its running runs
// go on; their log rows stay.
func (s *Service) Delete(ctx context.Context, userID, id int64) error {
	return s.BatchDelete(ctx, userID, IDs{IDs: []request.Int64{request.Int64(id)}})
}

// BatchDelete soft-deletes jobs, all or none (47014 when one is a system
// job; unknown ids are ignored).
func (s *Service) BatchDelete(ctx context.Context, userID int64, in IDs) error {
	if len(in.IDs) == 0 || len(in.IDs) > 1000 {
		return request.Invalid("ids")
	}
	ids := make([]int64, len(in.IDs))
	for i, id := range in.IDs {
		ids[i] = int64(id)
	}
	err := withTx(ctx, s.client, func(tx *ent.Tx) error {
		jobs, err := tx.SysJob.Query().Where(sysjob.IDIn(ids...), sysjob.IsDelete(false)).All(ctx)
		if err != nil {
			return err
		}
		if len(jobs) == 0 && len(ids) == 1 {
			return errcode.New(errcode.JobNotFound)
		}
		for _, j := range jobs {
			if j.IsSystem {
				return errcode.New(errcode.JobProtected)
			}
		}
		for _, j := range jobs {
			if err := tx.SysJob.UpdateOneID(j.ID).SetIsDelete(true).SetDeleteKey(j.ID).SetUpdateUserID(userID).
				SetStatus(StatusPaused).ClearNextFireTime().Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	s.engine.Changed()
	return err
}

// SetEnabled pauses or resumes a job (PUT /sys/job/{id}/enabled). Resuming
// a completed one-shot job whose time has passed is 47010.
func (s *Service) SetEnabled(ctx context.Context, id int64, enabled bool) error {
	j, err := s.live(ctx, id)
	if err != nil {
		return err
	}
	now := s.now()
	u := s.client.SysJob.UpdateOneID(id)
	if enabled {
		if j.TriggerKind == TriggerOneShot && (j.RunAt == nil || !j.RunAt.After(now)) {
			return errcode.New(errcode.JobStatusConflict)
		}
		if j.Status == StatusReady {
			return nil
		}
		// No firing of the paused time is owed: the schedule restarts now.
		u.SetStatus(StatusReady).SetScheduleAnchor(now)
		j.ScheduleAnchor = now
		if n := nextFire(j, now); n != nil {
			u.SetNextFireTime(*n)
		}
	} else {
		if j.Status == StatusPaused {
			return nil
		}
		u.SetStatus(StatusPaused).ClearNextFireTime()
	}
	if err := u.Exec(ctx); err != nil {
		return err
	}
	s.engine.Changed()
	return nil
}

// RunNow runs a job once, now, on this replica (triggeredBy manual) and
// returns the run's log id. 47006 when a SerialSkip job is running, 47013
// past the parallel limit.
func (s *Service) RunNow(ctx context.Context, _ int64, id int64) (int64, error) {
	j, err := s.live(ctx, id)
	if err != nil {
		return 0, err
	}
	if j.HandlerKind == HandlerSQL && !s.engine.SQLEnabled() {
		return 0, errcode.New(errcode.JobSqlDisabled)
	}
	if j.HandlerKind == HandlerCompiled {
		if _, ok := s.engine.handler(j.HandlerName); !ok {
			return 0, errcode.New(errcode.JobHandlerNotFound)
		}
	}
	tr, _ := TriggerOf(j)
	now := s.now()
	_, logID, err := s.engine.fire(ctx, j, tr, now, ByManual, now)
	switch {
	case errors.Is(err, errAlreadyRunning):
		return 0, errcode.New(errcode.JobAlreadyRunning)
	case errors.Is(err, errRunLimit):
		return 0, errcode.New(errcode.JobRunLimitReached)
	}
	return logID, err
}

// Kill asks the replica running a run to cancel it (47012 unknown run,
// 47007 not running). The request is recorded on the row (the runner
// polls it) and published on the kernel's bus (Redis pub/sub to the other
// replicas when configured).
func (s *Service) Kill(ctx context.Context, logID int64) (bool, error) {
	row, err := s.client.SysJobLog.Get(ctx, logID)
	if ent.IsNotFound(err) {
		return false, errcode.New(errcode.JobLogNotFound)
	}
	if err != nil {
		return false, err
	}
	if row.RunStatus != RunRunning {
		return false, errcode.New(errcode.JobRunNotAlive)
	}
	n, err := s.client.SysJobLog.Update().Where(sysjoblog.ID(logID), sysjoblog.RunStatus(RunRunning)).SetKillRequested(true).Save(ctx)
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, errcode.New(errcode.JobRunNotAlive)
	}
	if !s.engine.cancelRun(logID, errKilled) {
		s.events.Publish(events.JobKillRequested{LogID: logID})
	}
	return true, nil
}

// Handlers lists the compiled handlers and whether Sql jobs are enabled.
func (s *Service) Handlers(context.Context) (HandlerList, error) {
	return HandlerList{Handlers: s.engine.Handlers(), SQLEnabled: s.engine.SQLEnabled()}, nil
}

// PreviewCron lists the next occurrences of an expression (47003 when it
// does not parse).
func (s *Service) PreviewCron(_ context.Context, in PreviewInput) (PreviewOutput, error) {
	count := 5
	if in.Count != nil {
		if *in.Count < 1 || *in.Count > 50 {
			return PreviewOutput{}, request.Invalid("count")
		}
		count = *in.Count
	}
	tz, err := optText("timeZone", in.TimeZone, 64)
	if err != nil {
		return PreviewOutput{}, err
	}
	loc, err := location(tz)
	if err != nil {
		return PreviewOutput{}, invalidProps("timeZone")
	}
	from := s.now()
	if t, err := parseTime("from", in.From, loc); err != nil {
		return PreviewOutput{}, err
	} else if t != nil {
		from = *t
	}
	out, err := Preview(in.Cron, loc, from, count)
	if err != nil {
		return PreviewOutput{}, errcode.New(errcode.JobCronInvalid).Wrap(err)
	}
	return out, nil
}

// Clear deletes ended runs (never Running ones): those that started more
// than beforeDays days ago (all when absent), of one job when jobId is
// given. It returns how many were deleted.
func (s *Service) Clear(ctx context.Context, _ int64, in ClearInput) (int, error) {
	d := s.client.SysJobLog.Delete().Where(sysjoblog.RunStatusNEQ(RunRunning))
	if in.BeforeDays != nil {
		if *in.BeforeDays < 0 || *in.BeforeDays > 36500 {
			return 0, request.Invalid("beforeDays")
		}
		d.Where(sysjoblog.StartTimeLT(s.now().AddDate(0, 0, -*in.BeforeDays)))
	}
	if in.JobID != nil {
		d.Where(sysjoblog.JobID(int64(*in.JobID)))
	}
	return d.Exec(ctx)
}

// Page lists live jobs, newest first.
func (s *Service) Page(ctx context.Context, f Filter, p request.Page) ([]Job, int, error) {
	q := s.client.SysJob.Query().Where(sysjob.IsDelete(false))
	if v := strings.TrimSpace(f.Name); v != "" {
		q.Where(sysjob.Or(sysjob.NameContainsFold(v), sysjob.CodeContainsFold(v)))
	}
	if f.Status != nil {
		q.Where(sysjob.Status(int(*f.Status)))
	}
	if f.HandlerKind != nil {
		q.Where(sysjob.HandlerKind(int(*f.HandlerKind)))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Order(ent.Desc(sysjob.FieldID)).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Job, len(rows))
	for i, r := range rows {
		out[i] = toJob(r)
	}
	return out, total, nil
}

// LogPage lists runs, newest first.
func (s *Service) LogPage(ctx context.Context, f LogFilter, p request.Page) ([]Log, int, error) {
	q := s.client.SysJobLog.Query()
	if f.JobID != nil {
		q.Where(sysjoblog.JobID(*f.JobID))
	}
	if f.RunStatus != nil {
		q.Where(sysjoblog.RunStatus(int(*f.RunStatus)))
	}
	if f.StartFrom != nil {
		q.Where(sysjoblog.StartTimeGTE(*f.StartFrom))
	}
	if f.StartTo != nil {
		q.Where(sysjoblog.StartTimeLTE(*f.StartTo))
	}
	if v := strings.TrimSpace(f.FireInstanceID); v != "" {
		q.Where(sysjoblog.FireInstanceID(v))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Order(ent.Desc(sysjoblog.FieldStartTime), ent.Desc(sysjoblog.FieldID)).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Log, len(rows))
	for i, r := range rows {
		out[i] = toLog(r)
	}
	return out, total, nil
}

// runStatusNames names the RunStatus values in the dashboard.
var runStatusNames = map[int]string{RunRunning: "running", RunSuccess: "success", RunFailed: "failed", RunTimeout: "timeout", RunCancelled: "cancelled", RunSkipped: "skipped"}

// Dashboard counts jobs by status and the runs of the last 24 hours.
func (s *Service) Dashboard(ctx context.Context) (Dashboard, error) {
	var byStatus []struct {
		Status int `json:"status"`
		Count  int `json:"count"`
	}
	if err := s.client.SysJob.Query().Where(sysjob.IsDelete(false)).GroupBy(sysjob.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &byStatus); err != nil {
		return Dashboard{}, err
	}
	d := Dashboard{Last24h: map[string]int{}}
	for _, name := range runStatusNames {
		d.Last24h[name] = 0
	}
	for _, r := range byStatus {
		d.JobTotal += r.Count
		switch r.Status {
		case StatusReady:
			d.JobReady = r.Count
		case StatusPaused:
			d.JobPaused = r.Count
		default:
			d.JobOther += r.Count
		}
	}
	var byRun []struct {
		RunStatus int `json:"run_status"`
		Count     int `json:"count"`
	}
	if err := s.client.SysJobLog.Query().Where(sysjoblog.StartTimeGTE(s.now().Add(-24*time.Hour))).
		GroupBy(sysjoblog.FieldRunStatus).Aggregate(ent.Count()).Scan(ctx, &byRun); err != nil {
		return Dashboard{}, err
	}
	for _, r := range byRun {
		if name, ok := runStatusNames[r.RunStatus]; ok {
			d.Last24h[name] = r.Count
		}
	}
	running, err := s.client.SysJobLog.Query().Where(sysjoblog.RunStatus(RunRunning)).Count(ctx)
	if err != nil {
		return Dashboard{}, err
	}
	d.Running = running
	failed, err := s.client.SysJobLog.Query().Where(sysjoblog.RunStatusIn(RunFailed, RunTimeout)).
		Order(ent.Desc(sysjoblog.FieldStartTime)).Limit(10).All(ctx)
	if err != nil {
		return Dashboard{}, err
	}
	d.RecentFailed = make([]Log, len(failed))
	for i, r := range failed {
		d.RecentFailed[i] = toLog(r)
	}
	return d, nil
}

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := request.EntityTime(*t)
	return &s
}

func toJob(r *ent.SysJob) Job {
	return Job{
		ID: r.ID, IsDelete: r.IsDelete, CreateTime: request.EntityTime(r.CreateTime), CreateUserID: r.CreateUserID,
		UpdateTime: timePtr(r.UpdateTime), UpdateUserID: r.UpdateUserID,
		Code: r.Code, Name: r.Name, HandlerKind: r.HandlerKind, HandlerName: r.HandlerName, HandlerParam: r.HandlerParam,
		HTTPURL: r.HTTPURL, HTTPMethod: r.HTTPMethod, HTTPBody: r.HTTPBody, HTTPHeaders: r.HTTPHeaders, SQL: r.SQL,
		TriggerKind: r.TriggerKind, CronExpression: r.CronExpression, IntervalSeconds: r.IntervalSeconds,
		RunAt: timePtr(r.RunAt), TimeZone: r.TimeZone, MisfireStrategy: r.MisfireStrategy, ConcurrencyMode: r.ConcurrencyMode,
		TimeoutSeconds: r.TimeoutSeconds, RetryCount: r.RetryCount, RetryIntervalSeconds: r.RetryIntervalSeconds,
		FailAlertThreshold: r.FailAlertThreshold, AlertByNotice: r.AlertByNotice, Remark: r.Remark,
		StartTime: timePtr(r.StartTime), EndTime: timePtr(r.EndTime), Status: r.Status, IsSystem: r.IsSystem,
		NextFireTime: timePtr(r.NextFireTime), LastFireTime: timePtr(r.LastFireTime), LastRunStatus: r.LastRunStatus,
	}
}

func toLog(r *ent.SysJobLog) Log {
	return Log{
		ID: r.ID, JobID: r.JobID, JobName: r.JobName, FireInstanceID: r.FireInstanceID, RunStatus: r.RunStatus,
		FireTime: r.FireTime.Local().Format(time.RFC3339Nano), StartTime: request.EntityTime(r.StartTime), EndTime: timePtr(r.EndTime),
		ElapsedMs: r.ElapsedMs, Output: r.Output, ErrorMessage: r.ErrorMessage, Instance: r.Instance, TriggeredBy: r.TriggeredBy, TraceID: r.TraceID,
	}
}
