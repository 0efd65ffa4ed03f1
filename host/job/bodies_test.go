//go:build !unit

package job_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/module"
)

// The fixtures of this file are written from the wire contract, §4.11
// "Job bodies": the JobInput keys exactly as listed there, and the keys
// every SysJob, SysJobLog, handlers and dashboard answer must carry.

// contractInput is a JobInput with every key of the contract, for one
// kind and trigger; kv overrides keys (nil removes one).
func contractInput(code string, kind int, handlerName string, props map[string]string, kv ...any) map[string]any {
	in := map[string]any{
		"code": code, "name": "contract " + code, "handlerKind": kind, "handlerName": handlerName,
		"properties": props, "triggerKind": job.TriggerCron, "cronExpression": "0 0 3 * * ?",
		"intervalSeconds": nil, "oneShotTime": nil, "startTime": nil, "endTime": nil,
		"misfireStrategy": job.MisfireSkip, "concurrencyMode": job.ConcurrencySerialSkip, "timeoutSeconds": 0,
		"retryCount": 0, "retryIntervalSeconds": 0, "failAlertThreshold": 0, "alertByNotice": false,
		"alertEmails": nil, "remark": nil,
	}
	for i := 0; i < len(kv); i += 2 {
		in[kv[i].(string)] = kv[i+1]
	}
	return in
}

// The keys of the contract's answers.
var (
	sysJobKeys = []string{"id", "code", "name", "handlerKind", "handlerName", "propsJson", "triggerKind", "cronExpression",
		"intervalSeconds", "oneShotTime", "startTime", "endTime", "misfireStrategy", "concurrencyMode", "status", "nextRunTime",
		"lastRunTime", "numberOfRuns", "numberOfErrors", "consecutiveErrors", "timeoutSeconds", "retryCount",
		"retryIntervalSeconds", "failAlertThreshold", "alertByNotice", "alertEmails", "isSystem", "remark", "createTime"}
	sysJobLogKeys = []string{"id", "jobId", "jobName", "fireInstanceId", "retryIndex", "fireMode", "scheduledTime", "startTime",
		"endTime", "runStatus", "elapsedMs", "nodeName", "killRequested", "messageText", "errorText", "createTime"}
	dashboardKeys = []string{"todaySuccess", "todayFailed", "running", "totalJobs", "statusCounts", "trend", "upcoming", "nodes"}
	trendKeys     = []string{"date", "success", "failed"}
	upcomingKeys  = []string{"jobId", "name", "nextRunTime"}
	nodeKeys      = []string{"nodeName", "hostName", "isLeader", "lastHeartbeat", "workerId", "pid"}
)

func hasKeys(t *testing.T, what string, m map[string]any, keys []string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q: %v", what, k, m)
		}
	}
}

// jobRow reads a job of the page as raw JSON.
func jobRow(t *testing.T, k *kerneltest.Kernel, tok string, id int64) map[string]any {
	t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	k.Do("GET", base+"/page?Size=100", tok, nil).Expect(t, "page", 200, 0).Decode(t, &page)
	for _, r := range page.Items {
		if n, _ := r["id"].(float64); int64(n) == id {
			hasKeys(t, fmt.Sprintf("SysJob %d", id), r, sysJobKeys)
			return r
		}
	}
	t.Fatalf("job %d not on the page", id)
	return nil
}

// propsOf parses a row's propsJson.
func propsOf(t *testing.T, row map[string]any) map[string]string {
	t.Helper()
	s, ok := row["propsJson"].(string)
	if !ok {
		t.Fatalf("propsJson = %v, want a JSON string", row["propsJson"])
	}
	var p map[string]string
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatalf("propsJson %q is not an object of strings: %v", s, err)
	}
	return p
}

func headersOf(t *testing.T, s string) map[string]string {
	t.Helper()
	var h map[string]string
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		t.Fatalf("headers %q: %v", s, err)
	}
	return h
}

// runTrue posts a run and checks the data is exactly true.
func runTrue(t *testing.T, k *kerneltest.Kernel, tok string, id int64) {
	t.Helper()
	r := k.Do("POST", fmt.Sprintf("%s/%d/run", base, id), tok, nil).Expect(t, "run", 200, 0)
	if strings.TrimSpace(string(r.Data)) != "true" {
		t.Fatalf("run data = %s, want true", r.Data)
	}
}

// logRows reads a job's log page as raw JSON, newest first.
func logRows(t *testing.T, k *kerneltest.Kernel, tok string, jobID int64) []map[string]any {
	t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	k.Do("GET", fmt.Sprintf("%s/log/page?JobId=%d&Size=50", base, jobID), tok, nil).Expect(t, "log page", 200, 0).Decode(t, &page)
	for i, r := range page.Items {
		hasKeys(t, fmt.Sprintf("SysJobLog %d", i), r, sysJobLogKeys)
	}
	return page.Items
}

// endedRun waits for the newest run of a job to end and returns it.
func endedRun(t *testing.T, k *kerneltest.Kernel, tok string, jobID int64) map[string]any {
	t.Helper()
	var row map[string]any
	poll.Until(t, 10*time.Second, fmt.Sprintf("the run of job %d ends", jobID), func() bool {
		rows := logRows(t, k, tok, jobID)
		if len(rows) == 0 {
			return false
		}
		row = rows[0]
		return row["endTime"] != nil
	})
	return row
}

// headerServer records the headers of the requests it gets.
type headerServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newHeaderServer(t *testing.T) *headerServer {
	s := &headerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Clone())
		s.mu.Unlock()
		if r.URL.Path == "/moved" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte("pong"))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *headerServer) last() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return nil
	}
	return s.seen[len(s.seen)-1]
}

// TestJobBodiesContract creates a job of each kind with the contract's
// JobInput, reads it back from the page, updates masked headers, runs
// jobs (true), and checks the log, dashboard and handlers shapes.
func TestJobBodiesContract(t *testing.T) {
	srv := newHeaderServer(t)
	k, tok := startKernel(t, "Service__Job__HttpAllowedHosts__0=127.0.0.1", "Service__Outbound__AllowedRanges__0=127.0.0.1/32")

	// handlers: names as plain strings, and the SQL switch (off).
	var hl map[string]any
	k.Do("GET", base+"/handlers", tok, nil).Expect(t, "handlers", 200, 0).Decode(t, &hl)
	names, ok := hl["handlers"].([]any)
	if !ok || len(names) == 0 || hl["sqlEnabled"] != false {
		t.Fatalf("handlers = %v", hl)
	}
	for _, n := range names {
		if _, ok := n.(string); !ok {
			t.Fatalf("handler %v is not a string", n)
		}
	}

	// Compiled: any keys, handed to the handler as its parameter.
	var compiledID int64
	compiled := contractInput("c-compiled", job.HandlerCompiled, "test.echo", map[string]string{"who": "ops", "x": "1"},
		"failAlertThreshold", 3, "alertEmails", "ops@example.com, dev@example.com", "remark", "from the contract")
	k.Do("POST", base, tok, compiled).Expect(t, "add compiled", 200, 0).Decode(t, &compiledID)
	row := jobRow(t, k, tok, compiledID)
	if p := propsOf(t, row); p["who"] != "ops" || p["x"] != "1" || len(p) != 2 {
		t.Errorf("compiled propsJson = %v", p)
	}
	if row["handlerName"] != "test.echo" || row["alertEmails"] != "ops@example.com,dev@example.com" || row["remark"] != "from the contract" ||
		row["status"] != float64(job.StatusReady) || row["isSystem"] != false || row["nextRunTime"] == nil || row["numberOfRuns"] != float64(0) {
		t.Errorf("compiled row = %v", row)
	}
	runTrue(t, k, tok, compiledID)
	l := endedRun(t, k, tok, compiledID)
	if l["runStatus"] != float64(job.RunSuccess) || l["messageText"] != `param={"who":"ops","x":"1"}` || l["fireMode"] != float64(job.FireManual) ||
		l["retryIndex"] != float64(0) || l["killRequested"] != false || l["nodeName"] == "" || l["jobName"] != "contract c-compiled" ||
		l["errorText"] != nil || l["scheduledTime"] == nil || l["createTime"] == nil {
		t.Errorf("compiled run = %v", l)
	}
	poll.Until(t, 5*time.Second, "the counters after a success", func() bool {
		row = jobRow(t, k, tok, compiledID)
		return row["numberOfRuns"] == float64(1) && row["numberOfErrors"] == float64(0) && row["consecutiveErrors"] == float64(0) && row["lastRunTime"] == nil
	})

	// Http: url, method, headers (a JSON string), body, successStatuses;
	// the handler name empty, filled by the kernel.
	var httpID int64
	headers := `{"Authorization":"Bearer s3cret","X-Trace":"t1"}`
	httpProps := map[string]string{"url": srv.URL + "/moved", "method": "POST", "headers": headers, "body": `{"a":1}`, "successStatuses": "200-299,304"}
	k.Do("POST", base, tok, contractInput("c-http", job.HandlerHTTP, "", httpProps)).Expect(t, "add http", 200, 0).Decode(t, &httpID)
	row = jobRow(t, k, tok, httpID)
	p := propsOf(t, row)
	if row["handlerName"] != job.BuiltinHTTPHandler || p["url"] != srv.URL+"/moved" || p["method"] != "POST" || p["body"] != `{"a":1}` || p["successStatuses"] != "200-299,304" {
		t.Errorf("http row = %v props %v", row, p)
	}
	if h := headersOf(t, p["headers"]); len(h) != 2 || h["Authorization"] != job.MaskedValue || h["X-Trace"] != job.MaskedValue {
		t.Errorf("headers on read = %v, want every value masked", h)
	}
	if strings.Contains(fmt.Sprint(row), "s3cret") {
		t.Errorf("the secret is in the read: %v", row)
	}
	runTrue(t, k, tok, httpID)
	if l := endedRun(t, k, tok, httpID); l["runStatus"] != float64(job.RunSuccess) {
		t.Fatalf("http run (304 in successStatuses) = %v", l)
	}
	if got := srv.last(); got.Get("Authorization") != "Bearer s3cret" || got.Get("X-Trace") != "t1" {
		t.Fatalf("headers sent = %v", got)
	}

	// Update with the masked value kept, one changed, one added.
	p["headers"] = `{"Authorization":"********","X-Trace":"t2","X-New":"n"}`
	k.Do("PUT", fmt.Sprintf("%s/%d", base, httpID), tok, contractInput("ignored", job.HandlerHTTP, "", p)).Expect(t, "update kept/changed", 200, 0)
	stored := headersOf(t, *k.Ent().SysJob.GetX(context.Background(), httpID).HTTPHeaders)
	if len(stored) != 3 || stored["Authorization"] != "Bearer s3cret" || stored["X-Trace"] != "t2" || stored["X-New"] != "n" {
		t.Fatalf("stored after the update = %v", stored)
	}
	runTrue(t, k, tok, httpID)
	poll.Until(t, 10*time.Second, "the second http run", func() bool { return srv.last().Get("X-New") == "n" })
	if got := srv.last(); got.Get("Authorization") != "Bearer s3cret" || got.Get("X-Trace") != "t2" {
		t.Fatalf("headers sent after the update = %v", got)
	}
	endedRun(t, k, tok, httpID)
	// Left out: removed.
	p["headers"] = `{"X-Trace":"********"}`
	k.Do("PUT", fmt.Sprintf("%s/%d", base, httpID), tok, contractInput("ignored", job.HandlerHTTP, "", p)).Expect(t, "update removed", 200, 0)
	stored = headersOf(t, *k.Ent().SysJob.GetX(context.Background(), httpID).HTTPHeaders)
	if len(stored) != 1 || stored["X-Trace"] != "t2" {
		t.Fatalf("stored after leaving headers out = %v", stored)
	}
	if row = jobRow(t, k, tok, httpID); row["code"] != "c-http" {
		t.Errorf("an update changed the code: %v", row["code"])
	}
	// A status outside successStatuses fails the run.
	p["successStatuses"] = "200"
	k.Do("PUT", fmt.Sprintf("%s/%d", base, httpID), tok, contractInput("ignored", job.HandlerHTTP, "", p)).Expect(t, "update statuses", 200, 0)
	runTrue(t, k, tok, httpID)
	if l := endedRun(t, k, tok, httpID); l["runStatus"] != float64(job.RunFailed) || !strings.Contains(fmt.Sprint(l["errorText"]), "304") {
		t.Fatalf("a 304 outside successStatuses 200: %v", l)
	}
	poll.Until(t, 5*time.Second, "the http counters (3 runs, 1 error)", func() bool {
		row = jobRow(t, k, tok, httpID)
		return row["numberOfRuns"] == float64(3) && row["numberOfErrors"] == float64(1) && row["consecutiveErrors"] == float64(1)
	})

	// The operation log keeps the requests, not the header values.
	var ops struct {
		Items []map[string]any `json:"items"`
	}
	poll.Until(t, 5*time.Second, "the op log rows of the http job", func() bool {
		k.Do("GET", "/api/v1/sys/log/op/page?Size=100", tok, nil).Expect(t, "op log", 200, 0).Decode(t, &ops)
		return strings.Contains(fmt.Sprint(ops.Items), "c-http")
	})
	if strings.Contains(fmt.Sprint(ops.Items), "s3cret") {
		t.Fatal("a header value is in the operation log")
	}

	// Sql with the switch off: 47008.
	k.Do("POST", base, tok, contractInput("c-sql", job.HandlerSQL, "", map[string]string{"sql": "SELECT 1"})).
		ExpectCode(t, "sql with the switch off", errcode.JobSqlDisabled)

	// OneShot: oneShotTime.
	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	var oneID int64
	k.Do("POST", base, tok, contractInput("c-once", job.HandlerCompiled, "test.echo", nil,
		"triggerKind", job.TriggerOneShot, "cronExpression", nil, "oneShotTime", at.Format(time.RFC3339))).Expect(t, "add one-shot", 200, 0).Decode(t, &oneID)
	row = jobRow(t, k, tok, oneID)
	// Entity times are local wall-clock ISO-8601 (request.EntityTime).
	got, err := time.ParseInLocation("2006-01-02T15:04:05", fmt.Sprint(row["oneShotTime"]), time.Local)
	if err != nil || !got.Equal(at) || row["nextRunTime"] == nil || row["propsJson"] != nil {
		t.Errorf("one-shot row: oneShotTime %v (%v), want %s; %v", row["oneShotTime"], err, at, row)
	}

	// Bad input: clear envelope errors.
	for _, tc := range []struct {
		what string
		body map[string]any
		code errcode.Code
	}{
		{"properties not an object", with(contractInput("b1", job.HandlerCompiled, "test.echo", nil), "properties", "x=1"), errcode.RequestInvalid},
		{"a nested property", with(contractInput("b2", job.HandlerCompiled, "test.echo", nil), "properties", map[string]any{"x": map[string]any{"y": 1}}), errcode.RequestInvalid},
		{"interval below 5", contractInput("b3", job.HandlerCompiled, "test.echo", nil, "triggerKind", job.TriggerInterval, "cronExpression", nil, "intervalSeconds", 4), errcode.JobTriggerInvalid},
		{"bad success statuses", contractInput("b4", job.HandlerHTTP, "", map[string]string{"url": srv.URL, "successStatuses": "ok"}), errcode.JobPropsInvalid},
		{"no url", contractInput("b5", job.HandlerHTTP, "", map[string]string{"method": "GET"}), errcode.JobPropsInvalid},
		{"headers not an object", contractInput("b6", job.HandlerHTTP, "", map[string]string{"url": srv.URL, "headers": "Authorization: x"}), errcode.JobPropsInvalid},
		{"bad method", contractInput("b7", job.HandlerHTTP, "", map[string]string{"url": srv.URL, "method": "TRACE"}), errcode.JobPropsInvalid},
		{"a blocked url", contractInput("b8", job.HandlerHTTP, "", map[string]string{"url": "http://10.1.2.3/"}), errcode.JobHttpUrlBlocked},
		{"bad alert e-mails", contractInput("b9", job.HandlerCompiled, "test.echo", nil, "alertEmails", "not an address"), errcode.RequestInvalid},
		{"one-shot in the past", contractInput("b10", job.HandlerCompiled, "test.echo", nil, "triggerKind", job.TriggerOneShot, "cronExpression", nil, "oneShotTime", "2001-01-01T00:00:00Z"), errcode.JobTriggerInvalid},
	} {
		k.Do("POST", base, tok, tc.body).ExpectCode(t, tc.what, tc.code)
	}

	// The system job edited the contract's way: its days as a string
	// property, still held to the floor.
	sys := contractInput(job.SystemJobCode, job.HandlerCompiled, job.HandlerLogRetention, map[string]string{"days": "20"},
		"cronExpression", job.SystemJobCron, "misfireStrategy", job.MisfireFireOnceNow, "timeoutSeconds", 3600)
	k.Do("PUT", fmt.Sprintf("%s/%d", base, job.SystemJobID), tok, sys).ExpectCode(t, "system job days below the floor", errcode.JobRetentionBelowFloor)
	sys["properties"] = map[string]string{"days": "45"}
	k.Do("PUT", fmt.Sprintf("%s/%d", base, job.SystemJobID), tok, sys).Expect(t, "system job days 45", 200, 0)
	if p := propsOf(t, jobRow(t, k, tok, job.SystemJobID)); p["days"] != "45" {
		t.Errorf("system job props = %v", p)
	}

	// The dashboard, exactly as the contract gives it.
	var d map[string]any
	k.Do("GET", base+"/dashboard", tok, nil).Expect(t, "dashboard", 200, 0).Decode(t, &d)
	hasKeys(t, "JobDashboard", d, dashboardKeys)
	sc, _ := d["statusCounts"].(map[string]any)
	hasKeys(t, "statusCounts", sc, []string{"Ready", "Paused", "Completed", "Panic"})
	if d["totalJobs"] != float64(4) || sc["Ready"] != float64(4) || d["todaySuccess"] != float64(3) || d["todayFailed"] != float64(1) || d["running"] != float64(0) {
		t.Errorf("dashboard counts = %v", d)
	}
	trend, _ := d["trend"].([]any)
	if len(trend) != 7 {
		t.Fatalf("trend has %d days, want 7", len(trend))
	}
	for _, p := range trend {
		hasKeys(t, "trend point", p.(map[string]any), trendKeys)
	}
	if last := trend[6].(map[string]any); last["date"] != time.Now().Format("2006-01-02") || last["success"] != float64(3) || last["failed"] != float64(1) {
		t.Errorf("today in the trend = %v", last)
	}
	upcoming, _ := d["upcoming"].([]any)
	if len(upcoming) == 0 {
		t.Fatal("no upcoming firing")
	}
	for _, u := range upcoming {
		hasKeys(t, "upcoming", u.(map[string]any), upcomingKeys)
	}
	nodes, _ := d["nodes"].([]any)
	if len(nodes) != 1 {
		t.Fatalf("nodes = %v, want this replica", nodes)
	}
	hasKeys(t, "node", nodes[0].(map[string]any), nodeKeys)
	if n := nodes[0].(map[string]any); n["isLeader"] != false || n["nodeName"] == "" || n["pid"] == float64(0) {
		t.Errorf("node = %v", n)
	}
}

// TestSQLJobContract: with the switch on, a Sql job made of the contract's
// body reads back, runs (true) read-only and within the row cap, and is
// op-logged when created and run.
func TestSQLJobContract(t *testing.T) {
	k, tok := startKernel(t, "Service__Job__SqlEnabled=true")
	var hl struct {
		Handlers   []string `json:"handlers"`
		SQLEnabled bool     `json:"sqlEnabled"`
	}
	k.Do("GET", base+"/handlers", tok, nil).Expect(t, "handlers", 200, 0).Decode(t, &hl)
	if !hl.SQLEnabled {
		t.Fatal("sqlEnabled false with the switch on")
	}
	var id int64
	// 30 rows from the menu table: more than the cap of 20.
	stmt := "SELECT id FROM sys_menu ORDER BY id"
	k.Do("POST", base, tok, contractInput("c-sql", job.HandlerSQL, "", map[string]string{"sql": stmt})).Expect(t, "add sql", 200, 0).Decode(t, &id)
	row := jobRow(t, k, tok, id)
	if p := propsOf(t, row); p["sql"] != stmt || row["handlerName"] != job.BuiltinSQLHandler {
		t.Fatalf("sql row = %v", row)
	}
	runTrue(t, k, tok, id)
	l := endedRun(t, k, tok, id)
	if l["runStatus"] != float64(job.RunSuccess) || !strings.Contains(fmt.Sprint(l["messageText"]), "more than 20 rows") {
		t.Fatalf("sql run over the row cap = %v", l)
	}
	// Writes are refused (read-only), nothing changes.
	var wid int64
	k.Do("POST", base, tok, contractInput("c-sql-w", job.HandlerSQL, "", map[string]string{"sql": "DELETE FROM sys_config"})).Expect(t, "add write", 200, 0).Decode(t, &wid)
	before := k.Ent().SysConfig.Query().CountX(context.Background())
	runTrue(t, k, tok, wid)
	if l := endedRun(t, k, tok, wid); l["runStatus"] != float64(job.RunFailed) {
		t.Fatalf("a write in a Sql job = %v", l)
	}
	if after := k.Ent().SysConfig.Query().CountX(context.Background()); after != before || before == 0 {
		t.Fatalf("config rows %d before, %d after a refused write", before, after)
	}
	// The operation log records the creation (with the statement) and the runs.
	var ops struct {
		Items []struct {
			Path      string  `json:"path"`
			ParamJSON *string `json:"paramJson"`
		} `json:"items"`
	}
	poll.Until(t, 5*time.Second, "the op log rows", func() bool {
		k.Do("GET", "/api/v1/sys/log/op/page?Size=100", tok, nil).Expect(t, "op log", 200, 0).Decode(t, &ops)
		created, ran, sqlRuns := false, 0, 0
		for _, o := range ops.Items {
			created = created || o.Path == "/api/v1/sys/job" && o.ParamJSON != nil && strings.Contains(*o.ParamJSON, "sys_menu")
			if strings.HasSuffix(o.Path, "/run") {
				ran++
			}
			// Every Sql run itself, with its statement.
			if (o.Path == fmt.Sprintf("/sys/job/%d/sql", id) || o.Path == fmt.Sprintf("/sys/job/%d/sql", wid)) && o.ParamJSON != nil && strings.Contains(*o.ParamJSON, `"sql"`) {
				sqlRuns++
			}
		}
		return created && ran >= 2 && sqlRuns == 2
	})
}

// TestJobFromBeforeJobBodiesRuns: a job and its history written by the
// previous schema (migrations up to 0016) survive migration 0017 and the
// job keeps running, its counters starting at zero.
func TestJobFromBeforeJobBodiesRuns(t *testing.T) {
	dbType, _ := kerneltest.Backend(t)
	ctx := context.Background()
	db := dbtest.Open(t, dbType)
	if _, err := db.ApplyMigrationsTo(ctx, 16); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if db.Dialect == "postgres" {
			for i := 1; strings.Contains(q, "?"); i++ {
				q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
			}
		}
		if _, err := db.SQL.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	anchor := t0.Add(-time.Minute) // one firing due, at t0
	exec("INSERT INTO sys_job (id, create_time, code, name, handler_kind, handler_name, handler_param, trigger_kind, interval_seconds, schedule_anchor, status) "+
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 7001, anchor, "old-job", "old job", job.HandlerCompiled, "test.old", `{"days": 3}`, job.TriggerInterval, 60, anchor, job.StatusReady)
	exec("INSERT INTO sys_job_log (id, job_id, job_name, fire_instance_id, fire_time, run_status, start_time, end_time, elapsed_ms, output, instance, triggered_by) "+
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 7101, 7001, "old job", "7001-1", anchor, job.RunSuccess, anchor, anchor, 5, "old output", "old-host:1:abc", job.BySchedule)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	old, err := db.Client.SysJob.Get(ctx, 7001)
	if err != nil || old.NumberOfRuns != 0 || old.NumberOfErrors != 0 || old.HTTPSuccessStatuses != nil || old.AlertEmails != nil {
		t.Fatalf("the old job after 0017: %+v, %v", old, err)
	}
	hist, err := db.Client.SysJobLog.Get(ctx, 7101)
	if err != nil || hist.RetryIndex != 0 || hist.Output == nil || *hist.Output != "old output" {
		t.Fatalf("the old run after 0017: %+v, %v", hist, err)
	}

	var mu sync.Mutex
	var params []string
	clk := &clock{t: t0}
	e := job.New(job.Options{Client: db.Client, Instance: "after-0017", Now: clk.Now})
	if err := e.Register(module.JobHandler{Name: "test.old", Run: func(_ context.Context, r module.JobRun) (string, error) {
		mu.Lock()
		params = append(params, r.Param)
		mu.Unlock()
		return "ran", nil
	}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop(5 * time.Second) })
	at := t0.Add(time.Second) // within the grace of the firing at t0
	clk.Set(at)
	if err := e.Tick(ctx, at); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the old job's run ends", func() bool {
		rows := db.Client.SysJobLog.Query().Where(sysjoblog.JobID(7001), sysjoblog.IDNEQ(7101)).AllX(ctx)
		return len(rows) == 1 && rows[0].RunStatus == job.RunSuccess
	})
	mu.Lock()
	if len(params) != 1 || params[0] != `{"days": 3}` {
		t.Errorf("the handler got %v", params)
	}
	mu.Unlock()
	poll.Until(t, 5*time.Second, "the counters", func() bool {
		j := db.Client.SysJob.GetX(ctx, 7001)
		return j.NumberOfRuns == 1 && j.NumberOfErrors == 0
	})
	runs := db.Client.SysJobLog.Query().Where(sysjoblog.JobID(7001)).Order(ent.Asc(sysjoblog.FieldStartTime)).AllX(ctx)
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(runs) != 2 || ids[0] != 7101 {
		t.Fatalf("runs of the old job: %v", ids)
	}
}
