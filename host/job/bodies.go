package job

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysjob"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/request"
)

// The contract's job bodies (wire contract §4.11 "Job bodies"): JobInput
// carries the handler's settings as properties, an object of string values
// the kernel stores as the job's property bag (propsJson on every read).
// The kernel keeps its columns (http_url, http_headers, sql, handler_param,
// ...), which older binaries read during a rolling upgrade: properties are
// read into them, and propsJson is built from them.

// Built-in handler names of the Http and Sql kinds: a JobInput sends an
// empty handlerName for them and the kernel fills these.
const (
	BuiltinHTTPHandler = "kernel.http"
	BuiltinSQLHandler  = "kernel.sql"
)

// MaskedValue replaces every header value on a read. An update sending a
// header whose value is still MaskedValue keeps the stored value.
const MaskedValue = "********"

// Property keys of the Http and Sql kinds.
const (
	propURL             = "url"
	propMethod          = "method"
	propHeaders         = "headers"
	propBody            = "body"
	propSuccessStatuses = "successStatuses"
	propSQL             = "sql"
)

const (
	maxProps        = 64
	maxPropKeyLen   = 128
	maxAlertEmails  = 1024
	maxStatusesLen  = 256
	maxStatusRanges = 32
)

// readProperties reads the properties object: string values as they are,
// numbers and booleans as their JSON text, null leaves the key out. A
// nested object or array is 48002 naming the key.
func readProperties(raw map[string]json.RawMessage) (map[string]string, error) {
	if len(raw) > maxProps {
		return nil, request.Invalid("properties")
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if strings.TrimSpace(k) == "" || len([]rune(k)) > maxPropKeyLen || strings.ContainsRune(k, 0) {
			return nil, request.Invalid("properties")
		}
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0 || string(v) == "null":
			continue
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, request.Invalid("properties." + k)
			}
			out[k] = s
		case v[0] == '{' || v[0] == '[':
			return nil, request.Invalid("properties." + k)
		default: // a number, true or false
			out[k] = string(v)
		}
	}
	return out, nil
}

// propPtr is the value of key in p (nil when absent).
func propPtr(p map[string]string, key string) *string {
	if v, ok := p[key]; ok {
		return &v
	}
	return nil
}

// marshalStrings is the JSON text of a string map (keys sorted).
func marshalStrings(m map[string]string) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// maskHeaders returns the headers JSON with every value MaskedValue (nil
// when there are none; the text as stored when it does not parse).
func maskHeaders(s *string) *string {
	h, err := parseHeaders(s)
	if err != nil || h == nil {
		if err != nil {
			m := MaskedValue
			return &m
		}
		return nil
	}
	for k := range h {
		h[k] = MaskedValue
	}
	out := marshalStrings(h)
	return &out
}

// mergeHeaders keeps, for every header of next whose value is still
// MaskedValue, the value stored under that name (exact, else
// case-insensitive); a changed value replaces it and a header left out is
// gone. It returns next re-encoded.
func mergeHeaders(next, stored *string) (*string, error) {
	h, err := parseHeaders(next)
	if err != nil || h == nil {
		return next, err
	}
	old, _ := parseHeaders(stored)
	changed := false
	for k, v := range h {
		if v != MaskedValue {
			continue
		}
		if sv, ok := old[k]; ok {
			h[k], changed = sv, true
			continue
		}
		for ok, sv := range old {
			if strings.EqualFold(ok, k) {
				h[k], changed = sv, true
				break
			}
		}
	}
	if !changed {
		return next, nil
	}
	out := marshalStrings(h)
	return &out, nil
}

// statusRange is an inclusive range of HTTP status codes.
type statusRange struct{ lo, hi int }

// parseStatuses reads successStatuses: comma-separated codes and ranges
// ("200-299,304"), each within 100-599. Empty: nil (2xx and 3xx succeed,
// as before the setting).
func parseStatuses(s string) ([]statusRange, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxStatusRanges {
		return nil, fmt.Errorf("at most %d status ranges", maxStatusRanges)
	}
	out := make([]statusRange, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		lo, hi, isRange := strings.Cut(p, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("status %q is not a number", p)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("status range %q", p)
			}
		}
		if a < 100 || b > 599 || a > b {
			return nil, fmt.Errorf("status range %q is outside 100-599", p)
		}
		out = append(out, statusRange{a, b})
	}
	return out, nil
}

// statusOK reports whether code succeeds under ranges (nil: below 400).
func statusOK(ranges []statusRange, code int) bool {
	if ranges == nil {
		return code < 400
	}
	for _, r := range ranges {
		if code >= r.lo && code <= r.hi {
			return true
		}
	}
	return false
}

// checkAlertEmails normalises alertEmails: comma- (or semicolon-)
// separated addresses, each with one @ and no space; nil when empty.
func checkAlertEmails(s *string) (*string, error) {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil, nil
	}
	if len(*s) > maxAlertEmails {
		return nil, request.Invalid("alertEmails")
	}
	var list []string
	for _, a := range strings.FieldsFunc(*s, func(r rune) bool { return r == ',' || r == ';' }) {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		local, domain, ok := strings.Cut(a, "@")
		if !ok || local == "" || domain == "" || strings.ContainsAny(a, " \t\r\n\x00<>\"") || strings.Contains(domain, "@") || len(a) > 254 {
			return nil, request.Invalid("alertEmails")
		}
		list = append(list, a)
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := strings.Join(list, ",")
	return &out, nil
}

// propsJSON is the property bag of a saved job as the contract's propsJson:
// Http url, method, headers (values masked), body and successStatuses;
// Sql sql; Compiled the handler parameter's keys with string values. nil
// when there is nothing to show.
func propsJSON(r *ent.SysJob) *string {
	p := map[string]string{}
	switch r.HandlerKind {
	case HandlerHTTP:
		put := func(k string, v *string) {
			if v != nil {
				p[k] = *v
			}
		}
		put(propURL, r.HTTPURL)
		put(propMethod, r.HTTPMethod)
		put(propHeaders, maskHeaders(r.HTTPHeaders))
		put(propBody, r.HTTPBody)
		put(propSuccessStatuses, r.HTTPSuccessStatuses)
	case HandlerSQL:
		if r.SQL != nil {
			p[propSQL] = *r.SQL
		}
	default:
		if r.HandlerParam == nil {
			return nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(*r.HandlerParam), &obj); err != nil || obj == nil {
			return nil
		}
		for k, v := range obj {
			var s string
			switch {
			case string(v) == "null":
				continue
			case json.Unmarshal(v, &s) == nil:
				p[k] = s
			default:
				p[k] = string(v)
			}
		}
	}
	if len(p) == 0 {
		return nil
	}
	out := marshalStrings(p)
	return &out
}

// builtinName is the handler name shown for a job: the stored one, or the
// built-in name of the Http and Sql kinds for rows saved without it.
func builtinName(kind int, stored string) string {
	switch kind {
	case HandlerHTTP:
		return BuiltinHTTPHandler
	case HandlerSQL:
		return BuiltinSQLHandler
	}
	return stored
}

// statusNames are the keys of the dashboard's statusCounts.
var statusNames = map[int]string{StatusReady: "Ready", StatusPaused: "Paused", StatusCompleted: "Completed", StatusPanic: "Panic"}

// Dashboard sizes.
const (
	trendDays     = 7
	upcomingCount = 10
	nodeRowsRead  = 500
)

// dayCounts returns the Success and the failed (Failed, Timeout) runs
// that started in [from, to).
func (s *Service) dayCounts(ctx context.Context, from, to time.Time) (success, failed int, err error) {
	var rows []struct {
		RunStatus int `json:"run_status"`
		Count     int `json:"count"`
	}
	if err := s.client.SysJobLog.Query().Where(sysjoblog.StartTimeGTE(from), sysjoblog.StartTimeLT(to)).
		GroupBy(sysjoblog.FieldRunStatus).Aggregate(ent.Count()).Scan(ctx, &rows); err != nil {
		return 0, 0, err
	}
	for _, r := range rows {
		switch r.RunStatus {
		case RunSuccess:
			success += r.Count
		case RunFailed, RunTimeout:
			failed += r.Count
		}
	}
	return success, failed, nil
}

// dashboardContract fills the contract's JobDashboard fields: today's
// successes and failures (Failed and Timeout) since local midnight, the
// jobs by status, a trend of the last seven days (today included), the
// next firings of Ready jobs, and the replicas: this one and every other
// that ran a job in the last 24 hours (the kernel has no leader, every
// replica schedules and each firing is claimed, so isLeader is false).
func (s *Service) dashboardContract(ctx context.Context, d *Dashboard) error {
	now := s.now()
	d.TotalJobs = d.JobTotal
	var byStatus []struct {
		Status int `json:"status"`
		Count  int `json:"count"`
	}
	if err := s.client.SysJob.Query().Where(sysjob.IsDelete(false)).GroupBy(sysjob.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &byStatus); err != nil {
		return err
	}
	d.StatusCounts = map[string]int{}
	for _, name := range statusNames {
		d.StatusCounts[name] = 0
	}
	for _, r := range byStatus {
		if name, ok := statusNames[r.Status]; ok {
			d.StatusCounts[name] += r.Count
		}
	}
	local := now.Local()
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, local.Location())
	d.Trend = make([]TrendPoint, 0, trendDays)
	for i := trendDays - 1; i >= 0; i-- {
		from := today.AddDate(0, 0, -i)
		ok, failed, err := s.dayCounts(ctx, from, from.AddDate(0, 0, 1))
		if err != nil {
			return err
		}
		d.Trend = append(d.Trend, TrendPoint{Date: from.Format("2006-01-02"), Success: ok, Failed: failed})
		if i == 0 {
			d.TodaySuccess, d.TodayFailed = ok, failed
		}
	}
	next, err := s.client.SysJob.Query().Where(sysjob.IsDelete(false), sysjob.Status(StatusReady), sysjob.NextFireTimeNotNil()).
		Order(ent.Asc(sysjob.FieldNextFireTime), ent.Asc(sysjob.FieldID)).Limit(upcomingCount).All(ctx)
	if err != nil {
		return err
	}
	d.Upcoming = make([]Upcoming, 0, len(next))
	for _, j := range next {
		d.Upcoming = append(d.Upcoming, Upcoming{JobID: j.ID, Name: j.Name, NextRunTime: request.EntityTime(*j.NextFireTime)})
	}
	self := s.engine.Instance()
	d.Nodes = []Node{nodeOf(self, now)}
	rows, err := s.client.SysJobLog.Query().Where(sysjoblog.StartTimeGTE(now.Add(-24*time.Hour)), sysjoblog.InstanceNEQ(self)).
		Order(ent.Desc(sysjoblog.FieldStartTime)).Limit(nodeRowsRead).Select(sysjoblog.FieldInstance, sysjoblog.FieldStartTime).All(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{self: true}
	for _, r := range rows {
		if !seen[r.Instance] {
			seen[r.Instance] = true
			d.Nodes = append(d.Nodes, nodeOf(r.Instance, r.StartTime))
		}
	}
	return nil
}

// nodeOf reads a run log instance name ("host:pid:tag") as a node.
func nodeOf(instance string, seen time.Time) Node {
	n := Node{NodeName: instance, HostName: instance, LastHeartbeat: request.EntityTime(seen)}
	if i := strings.LastIndexByte(instance, ':'); i > 0 {
		rest := instance[:i]
		if j := strings.LastIndexByte(rest, ':'); j > 0 {
			if pid, err := strconv.Atoi(rest[j+1:]); err == nil {
				n.HostName, n.PID = rest[:j], pid
			}
		}
	}
	return n
}
