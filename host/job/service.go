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
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

// Input is the contract's JobInput (POST /sys/job, PUT /sys/job/{id}: a
// full replace; code is used on create only). properties is the contract's
// property bag (an object of string values: Http url, method, headers,
// body, successStatuses; Sql sql; Compiled any keys, handed to the handler
// as its parameter). The kernel's earlier names (handlerParam, httpUrl,
// httpMethod, httpBody, httpHeaders, sql, runAt) are still accepted; when
// properties is present it wins.
type Input struct {
	Code        string                     `json:"code"`
	Name        string                     `json:"name"`
	HandlerKind int                        `json:"handlerKind"`
	HandlerName string                     `json:"handlerName"`
	Properties  map[string]json.RawMessage `json:"properties"`
	// The kernel's earlier names of the property bag.
	HandlerParam        *string `json:"handlerParam"`
	HTTPURL             *string `json:"httpUrl"`
	HTTPMethod          *string `json:"httpMethod"`
	HTTPBody            *string `json:"httpBody"`
	HTTPHeaders         *string `json:"httpHeaders"`
	HTTPSuccessStatuses *string `json:"httpSuccessStatuses"`
	SQL                 *string `json:"sql"`
	TriggerKind         int     `json:"triggerKind"`
	CronExpression      *string `json:"cronExpression"`
	IntervalSeconds     *int    `json:"intervalSeconds"`
	OneShotTime         *string `json:"oneShotTime"`
	// RunAt is the kernel's earlier name of oneShotTime.
	RunAt                *string `json:"runAt"`
	TimeZone             *string `json:"timeZone"`
	MisfireStrategy      int     `json:"misfireStrategy"`
	ConcurrencyMode      int     `json:"concurrencyMode"`
	TimeoutSeconds       int     `json:"timeoutSeconds"`
	RetryCount           int     `json:"retryCount"`
	RetryIntervalSeconds int     `json:"retryIntervalSeconds"`
	FailAlertThreshold   int     `json:"failAlertThreshold"`
	AlertByNotice        bool    `json:"alertByNotice"`
	AlertEmails          *string `json:"alertEmails"`
	Remark               *string `json:"remark"`
	StartTime            *string `json:"startTime"`
	EndTime              *string `json:"endTime"`
}

// Job is the contract's SysJob, with the kernel's extra fields (its
// earlier names of the same values among them). Header values are masked
// (MaskedValue) in propsJson and httpHeaders.
type Job struct {
	ID int64 `json:"id"`
	request.Audit
	Code                 string  `json:"code"`
	Name                 string  `json:"name"`
	HandlerKind          int     `json:"handlerKind"`
	HandlerName          string  `json:"handlerName"`
	PropsJSON            *string `json:"propsJson"`
	TriggerKind          int     `json:"triggerKind"`
	CronExpression       *string `json:"cronExpression"`
	IntervalSeconds      *int    `json:"intervalSeconds"`
	OneShotTime          *string `json:"oneShotTime"`
	StartTime            *string `json:"startTime"`
	EndTime              *string `json:"endTime"`
	MisfireStrategy      int     `json:"misfireStrategy"`
	ConcurrencyMode      int     `json:"concurrencyMode"`
	Status               int     `json:"status"`
	NextRunTime          *string `json:"nextRunTime"`
	LastRunTime          *string `json:"lastRunTime"`
	NumberOfRuns         int64   `json:"numberOfRuns"`
	NumberOfErrors       int64   `json:"numberOfErrors"`
	ConsecutiveErrors    int     `json:"consecutiveErrors"`
	TimeoutSeconds       int     `json:"timeoutSeconds"`
	RetryCount           int     `json:"retryCount"`
	RetryIntervalSeconds int     `json:"retryIntervalSeconds"`
	FailAlertThreshold   int     `json:"failAlertThreshold"`
	AlertByNotice        bool    `json:"alertByNotice"`
	AlertEmails          *string `json:"alertEmails"`
	IsSystem             bool    `json:"isSystem"`
	Remark               *string `json:"remark"`

	// The kernel's extras.
	TimeZone            *string `json:"timeZone"`
	LastRunStatus       *int    `json:"lastRunStatus"`
	HandlerParam        *string `json:"handlerParam"`
	HTTPURL             *string `json:"httpUrl"`
	HTTPMethod          *string `json:"httpMethod"`
	HTTPBody            *string `json:"httpBody"`
	HTTPHeaders         *string `json:"httpHeaders"`
	HTTPSuccessStatuses *string `json:"httpSuccessStatuses"`
	SQL                 *string `json:"sql"`
	RunAt               *string `json:"runAt"`
	NextFireTime        *string `json:"nextFireTime"`
	LastFireTime        *string `json:"lastFireTime"`
}

// FireMode of a run log row (the contract's JobFireMode).
const (
	FireSchedule      = 1
	FireManual        = 2
	FireMisfire       = 3
	FireMissedSkipped = 4
)

// fireModes maps the stored triggeredBy to the contract's fireMode.
var fireModes = map[string]int{BySchedule: FireSchedule, ByManual: FireManual, ByMisfire: FireMisfire, ByMissed: FireMissedSkipped}

// Log is the contract's SysJobLog, with the kernel's extra fields (its
// earlier names of the same values among them). endTime is empty while the
// run runs.
type Log struct {
	ID             int64   `json:"id"`
	JobID          int64   `json:"jobId"`
	JobName        string  `json:"jobName"`
	FireInstanceID string  `json:"fireInstanceId"`
	RetryIndex     int     `json:"retryIndex"`
	FireMode       int     `json:"fireMode"`
	ScheduledTime  string  `json:"scheduledTime"`
	StartTime      string  `json:"startTime"`
	EndTime        *string `json:"endTime"`
	RunStatus      int     `json:"runStatus"`
	ElapsedMs      int64   `json:"elapsedMs"`
	NodeName       string  `json:"nodeName"`
	KillRequested  bool    `json:"killRequested"`
	MessageText    *string `json:"messageText"`
	ErrorText      *string `json:"errorText"`
	CreateTime     string  `json:"createTime"`

	// The kernel's extras.
	FireTime     string  `json:"fireTime"`
	Output       *string `json:"output"`
	ErrorMessage *string `json:"errorMessage"`
	Instance     string  `json:"instance"`
	TriggeredBy  string  `json:"triggeredBy"`
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

// HandlerList is the answer of GET /sys/job/handlers: the compiled
// handlers' names (the contract) and, as the kernel's extra, their
// descriptions and parameter schemas.
type HandlerList struct {
	Handlers   []string            `json:"handlers"`
	SQLEnabled bool                `json:"sqlEnabled"`
	Details    []module.JobHandler `json:"details"`
}

// TrendPoint is one day of the dashboard's trend.
type TrendPoint struct {
	Date    string `json:"date"`
	Success int    `json:"success"`
	Failed  int    `json:"failed"`
}

// Upcoming is a job's next firing on the dashboard.
type Upcoming struct {
	JobID       int64  `json:"jobId"`
	Name        string `json:"name"`
	NextRunTime string `json:"nextRunTime"`
}

// Node is a replica on the dashboard.
type Node struct {
	NodeName      string `json:"nodeName"`
	HostName      string `json:"hostName"`
	IsLeader      bool   `json:"isLeader"`
	LastHeartbeat string `json:"lastHeartbeat"`
	WorkerID      int64  `json:"workerId"`
	PID           int    `json:"pid"`
}

// Dashboard is the answer of GET /sys/job/dashboard: the contract's
// JobDashboard, then the kernel's extras.
type Dashboard struct {
	TodaySuccess int            `json:"todaySuccess"`
	TodayFailed  int            `json:"todayFailed"`
	Running      int            `json:"running"`
	TotalJobs    int            `json:"totalJobs"`
	StatusCounts map[string]int `json:"statusCounts"`
	Trend        []TrendPoint   `json:"trend"`
	Upcoming     []Upcoming     `json:"upcoming"`
	Nodes        []Node         `json:"nodes"`

	JobTotal  int `json:"jobTotal"`
	JobReady  int `json:"jobReady"`
	JobPaused int `json:"jobPaused"`
	JobOther  int `json:"jobOther"`
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
	statuses         *string
	sql, cron, tz    *string
	remark, emails   *string
	interval         *int
	runAt            *time.Time
	start, end       *time.Time
}

// minInterval is the shortest interval of an Interval job (47004 below).
const minInterval = 5

// propsSource is where validate reads the property bag from: properties
// (the contract) or the kernel's earlier fields.
type propsSource struct {
	props map[string]string // nil: the earlier fields
}

// get returns the property key (contract) or the earlier field, and the
// field name to report.
func (p propsSource) get(key string, legacy *string, legacyName string) (*string, string) {
	if p.props != nil {
		return propPtr(p.props, key), "properties." + key
	}
	return legacy, legacyName
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
	if c.emails, err = checkAlertEmails(in.AlertEmails); err != nil {
		return c, err
	}
	var src propsSource
	if in.Properties != nil {
		if src.props, err = readProperties(in.Properties); err != nil {
			return c, err
		}
	}
	switch in.HandlerKind {
	case HandlerCompiled:
		c.in.HandlerName = strings.TrimSpace(in.HandlerName)
		if _, ok := s.engine.handler(c.in.HandlerName); !ok {
			return c, errcode.New(errcode.JobHandlerNotFound).With("handlerName", textclipName(c.in.HandlerName))
		}
		if src.props != nil {
			if len(src.props) > 0 {
				param := marshalStrings(src.props)
				if len(param) > maxTextLen {
					return c, request.Invalid("properties")
				}
				c.param = &param
			}
		} else {
			if c.param, err = optText("handlerParam", in.HandlerParam, maxTextLen); err != nil {
				return c, err
			}
			if c.param != nil && !json.Valid([]byte(*c.param)) {
				return c, invalidProps("handlerParam")
			}
		}
	case HandlerHTTP:
		c.in.HandlerName = BuiltinHTTPHandler
		v, field := src.get(propURL, in.HTTPURL, "httpUrl")
		if c.url, err = optText(field, v, maxURLLen); err != nil {
			return c, err
		}
		if c.url == nil {
			return c, invalidProps(field)
		}
		if _, err := s.engine.guard.CheckURL(*c.url); err != nil {
			return c, errcode.New(errcode.JobHttpUrlBlocked).Wrap(err)
		}
		m := http.MethodGet
		v, field = src.get(propMethod, in.HTTPMethod, "httpMethod")
		if v != nil && strings.TrimSpace(*v) != "" {
			m = strings.ToUpper(strings.TrimSpace(*v))
		}
		if !httpMethods[m] {
			return c, invalidProps(field)
		}
		c.meth = &m
		v, field = src.get(propBody, in.HTTPBody, "httpBody")
		if c.body, err = optText(field, v, maxTextLen); err != nil {
			return c, err
		}
		v, field = src.get(propHeaders, in.HTTPHeaders, "httpHeaders")
		if c.headers, err = optText(field, v, maxTextLen); err != nil {
			return c, err
		}
		if _, err := parseHeaders(c.headers); err != nil {
			return c, invalidProps(field)
		}
		v, field = src.get(propSuccessStatuses, in.HTTPSuccessStatuses, "httpSuccessStatuses")
		if c.statuses, err = optText(field, v, maxStatusesLen); err != nil {
			return c, err
		}
		if c.statuses != nil {
			if _, err := parseStatuses(*c.statuses); err != nil {
				return c, invalidProps(field)
			}
		}
	case HandlerSQL:
		c.in.HandlerName = BuiltinSQLHandler
		if !s.engine.SQLEnabled() {
			return c, errcode.New(errcode.JobSqlDisabled)
		}
		v, field := src.get(propSQL, in.SQL, "sql")
		if c.sql, err = optText(field, v, maxTextLen); err != nil {
			return c, err
		}
		if c.sql == nil {
			return c, invalidProps(field)
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
		if in.IntervalSeconds == nil || *in.IntervalSeconds < minInterval || *in.IntervalSeconds > 366*86400 {
			return c, errcode.New(errcode.JobTriggerInvalid).With("field", "intervalSeconds")
		}
		c.interval = in.IntervalSeconds
	case TriggerOneShot:
		at, field := in.OneShotTime, "oneShotTime"
		if at == nil || strings.TrimSpace(*at) == "" {
			if in.RunAt != nil && strings.TrimSpace(*in.RunAt) != "" {
				at, field = in.RunAt, "runAt"
			}
		}
		if c.runAt, err = parseTime(field, at, loc); err != nil {
			return c, err
		}
		if c.runAt == nil || !c.runAt.After(s.now()) {
			return c, errcode.New(errcode.JobTriggerInvalid).With("field", field)
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
	setOrClear(c.statuses, m.SetHTTPSuccessStatuses, m.ClearHTTPSuccessStatuses)
	setOrClear(c.emails, m.SetAlertEmails, m.ClearAlertEmails)
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
	// A header still masked keeps its stored value.
	if c.in.HandlerKind == HandlerHTTP && j.HandlerKind == HandlerHTTP {
		if c.headers, err = mergeHeaders(c.headers, j.HTTPHeaders); err != nil {
			return invalidProps("headers")
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
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
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

// Run is POST /sys/job/{id}/run: RunNow, answering true (the contract);
// the run's row is in log/page (fireMode 2 Manual).
func (s *Service) Run(ctx context.Context, userID, id int64) (bool, error) {
	if _, err := s.RunNow(ctx, userID, id); err != nil {
		return false, err
	}
	return true, nil
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
	details := s.engine.Handlers()
	names := make([]string, len(details))
	for i, h := range details {
		names[i] = h.Name
	}
	return HandlerList{Handlers: names, SQLEnabled: s.engine.SQLEnabled(), Details: details}, nil
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
	if err := s.dashboardContract(ctx, &d); err != nil {
		return Dashboard{}, err
	}
	return d, nil
}

func toJob(r *ent.SysJob) Job {
	headers := maskHeaders(r.HTTPHeaders)
	return Job{
		ID: r.ID, Audit: request.AuditOf(r.IsDelete, r.CreateTime, r.CreateUserID, r.UpdateTime, r.UpdateUserID),
		Code: r.Code, Name: r.Name, HandlerKind: r.HandlerKind, HandlerName: builtinName(r.HandlerKind, r.HandlerName),
		PropsJSON: propsJSON(r), TriggerKind: r.TriggerKind, CronExpression: r.CronExpression, IntervalSeconds: r.IntervalSeconds,
		OneShotTime: request.EntityTimePtr(r.RunAt), StartTime: request.EntityTimePtr(r.StartTime), EndTime: request.EntityTimePtr(r.EndTime),
		MisfireStrategy: r.MisfireStrategy, ConcurrencyMode: r.ConcurrencyMode, Status: r.Status,
		NextRunTime: request.EntityTimePtr(r.NextFireTime), LastRunTime: request.EntityTimePtr(r.LastFireTime),
		NumberOfRuns: r.NumberOfRuns, NumberOfErrors: r.NumberOfErrors, ConsecutiveErrors: r.ConsecutiveFailures,
		TimeoutSeconds: r.TimeoutSeconds, RetryCount: r.RetryCount, RetryIntervalSeconds: r.RetryIntervalSeconds,
		FailAlertThreshold: r.FailAlertThreshold, AlertByNotice: r.AlertByNotice, AlertEmails: r.AlertEmails,
		IsSystem: r.IsSystem, Remark: r.Remark,
		TimeZone: r.TimeZone, LastRunStatus: r.LastRunStatus, HandlerParam: r.HandlerParam,
		HTTPURL: r.HTTPURL, HTTPMethod: r.HTTPMethod, HTTPBody: r.HTTPBody, HTTPHeaders: headers,
		HTTPSuccessStatuses: r.HTTPSuccessStatuses, SQL: r.SQL, RunAt: request.EntityTimePtr(r.RunAt),
		NextFireTime: request.EntityTimePtr(r.NextFireTime), LastFireTime: request.EntityTimePtr(r.LastFireTime),
	}
}

func toLog(r *ent.SysJobLog) Log {
	var elapsed int64
	if r.ElapsedMs != nil {
		elapsed = *r.ElapsedMs
	}
	fire := r.FireTime.Local().Format(time.RFC3339Nano)
	start := request.EntityTime(r.StartTime)
	mode := fireModes[r.TriggeredBy]
	if mode == 0 {
		mode = FireSchedule
	}
	return Log{
		ID: r.ID, JobID: r.JobID, JobName: r.JobName, FireInstanceID: r.FireInstanceID, RetryIndex: r.RetryIndex,
		FireMode: mode, ScheduledTime: request.EntityTime(r.FireTime), StartTime: start, EndTime: request.EntityTimePtr(r.EndTime), RunStatus: r.RunStatus,
		ElapsedMs: elapsed, NodeName: r.Instance, KillRequested: r.KillRequested,
		MessageText: r.Output, ErrorText: r.ErrorMessage, CreateTime: start,
		FireTime: fire, Output: r.Output, ErrorMessage: r.ErrorMessage, Instance: r.Instance, TriggeredBy: r.TriggeredBy, TraceID: r.TraceID,
	}
}
