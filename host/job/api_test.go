//go:build !unit

package job_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

const base = "/api/v1/sys/job"

// testModule registers two compiled handlers through the module API.
func testModule() host.Module {
	return module.Module{Name: "JobTest", JobHandlers: func(*module.Deps) []module.JobHandler {
		return []module.JobHandler{
			{Name: "test.echo", Description: "returns its parameter", Run: func(_ context.Context, r module.JobRun) (string, error) {
				return "param=" + r.Param, nil
			}},
			{Name: "test.binary", Description: "returns bytes no database stores as text", Run: func(context.Context, module.JobRun) (string, error) {
				return "a\x00b\xff" + strings.Repeat("x", 20000), fmt.Errorf("bad\x00error")
			}},
			{Name: "test.block", Description: "runs until cancelled", Run: func(ctx context.Context, _ module.JobRun) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}},
		}
	}}
}

func startKernel(t *testing.T, env ...string) (*kerneltest.Kernel, string) {
	t.Helper()
	k := kerneltest.Start(t, env, testModule())
	return k, k.Admin()
}

func echoJob(code string) map[string]any {
	return map[string]any{
		"code": code, "name": "echo " + code, "handlerKind": job.HandlerCompiled, "handlerName": "test.echo",
		"handlerParam": `{"x":1}`, "triggerKind": job.TriggerCron, "cronExpression": "0 0 3 * * ?",
		"misfireStrategy": job.MisfireSkip, "concurrencyMode": job.ConcurrencySerialSkip, "timeoutSeconds": 0,
		"retryCount": 0, "retryIntervalSeconds": 0, "failAlertThreshold": 0, "alertByNotice": false,
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func logOf(t *testing.T, k *kerneltest.Kernel, tok string, logID int64) job.Log {
	t.Helper()
	var page request.PagedList[job.Log]
	k.Do("GET", base+"/log/page?Size=100", tok, nil).Expect(t, "log page", 200, 0).Decode(t, &page)
	for _, l := range page.Items {
		if l.ID == logID {
			return l
		}
	}
	t.Fatalf("run %d not in the log page", logID)
	return job.Log{}
}

// runNow posts a job's run (path ends in /{id}/run), which answers true
// (the contract), and returns the run's log id: the job's newest row,
// fireMode Manual.
func runNow(t *testing.T, k *kerneltest.Kernel, tok, path, what string) int64 {
	t.Helper()
	var ok bool
	k.Do("POST", path, tok, nil).Expect(t, what, 200, 0).Decode(t, &ok)
	if !ok {
		t.Fatalf("%s answered false, want true", what)
	}
	idText := strings.TrimSuffix(path[strings.LastIndex(strings.TrimSuffix(path, "/run"), "/")+1:], "/run")
	var page request.PagedList[job.Log]
	k.Do("GET", base+"/log/page?Size=1&JobId="+idText, tok, nil).Expect(t, what+": log page", 200, 0).Decode(t, &page)
	if len(page.Items) == 0 || page.Items[0].FireMode != job.FireManual {
		t.Fatalf("%s: no manual run in the log: %+v", what, page.Items)
	}
	return page.Items[0].ID
}

func waitRun(t *testing.T, k *kerneltest.Kernel, tok string, logID int64, status int, within time.Duration) job.Log {
	t.Helper()
	var l job.Log
	poll.Until(t, within, fmt.Sprintf("run %d status %d", logID, status), func() bool {
		l = logOf(t, k, tok, logID)
		return l.RunStatus == status
	})
	return l
}

func TestJobAPI(t *testing.T) {
	k, tok := startKernel(t)

	// The seeded system job and the handlers.
	var page request.PagedList[job.Job]
	k.Do("GET", base+"/page", tok, nil).Expect(t, "page", 200, 0).Decode(t, &page)
	if page.Total != 1 || page.Items[0].ID != job.SystemJobID || page.Items[0].Code != job.SystemJobCode || !page.Items[0].IsSystem ||
		*page.Items[0].CronExpression != job.SystemJobCron || page.Items[0].NextFireTime == nil && page.Items[0].Status != job.StatusReady {
		t.Fatalf("seeded jobs: %+v", page.Items)
	}
	var hl struct {
		Handlers   []string `json:"handlers"`
		SQLEnabled bool     `json:"sqlEnabled"`
	}
	k.Do("GET", base+"/handlers", tok, nil).Expect(t, "handlers", 200, 0).Decode(t, &hl)
	names := hl.Handlers
	if strings.Join(names, ",") != "files.abandonedUploads,kernel.logRetention,kernel.sessionCleanup,test.binary,test.block,test.echo" || hl.SQLEnabled {
		t.Fatalf("handlers %v sqlEnabled %v", names, hl.SQLEnabled)
	}

	// Add, refusals.
	var id int64
	k.Do("POST", base, tok, echoJob("echo-1")).Expect(t, "add", 200, 0).Decode(t, &id)
	for _, tc := range []struct {
		what string
		body map[string]any
		code errcode.Code
	}{
		{"code taken", echoJob("echo-1"), errcode.JobCodeExists},
		{"bad cron", with(echoJob("c2"), "cronExpression", "61 * * * * *"), errcode.JobCronInvalid},
		{"interval missing", with(echoJob("c3"), "triggerKind", job.TriggerInterval), errcode.JobTriggerInvalid},
		{"one-shot in the past", with(echoJob("c4"), "triggerKind", job.TriggerOneShot, "runAt", "2001-01-01 00:00:00"), errcode.JobTriggerInvalid},
		{"unknown trigger", with(echoJob("c5"), "triggerKind", 9), errcode.JobTriggerInvalid},
		{"unknown handler", with(echoJob("c6"), "handlerName", "nope"), errcode.JobHandlerNotFound},
		{"sql disabled", with(echoJob("c7"), "handlerKind", job.HandlerSQL, "sql", "select 1"), errcode.JobSqlDisabled},
		{"http loopback", with(echoJob("c8"), "handlerKind", job.HandlerHTTP, "httpUrl", "http://127.0.0.1/"), errcode.JobHttpUrlBlocked},
		{"http not allowed", with(echoJob("c9"), "handlerKind", job.HandlerHTTP, "httpUrl", "https://example.com/"), errcode.JobHttpUrlBlocked},
		{"bad zone", with(echoJob("c10"), "timeZone", "Mars/Olympus"), errcode.JobPropsInvalid},
		{"bad misfire", with(echoJob("c11"), "misfireStrategy", 7), errcode.JobPropsInvalid},
		{"bad param", with(echoJob("c12"), "handlerParam", "{"), errcode.JobPropsInvalid},
		{"end before start", with(echoJob("c13"), "startTime", "2030-01-02 00:00:00", "endTime", "2030-01-01 00:00:00"), errcode.JobTriggerInvalid},
		{"no name", with(echoJob("c14"), "name", ""), errcode.RequestInvalid},
		{"bad code", with(echoJob("has space"), "name", "x"), errcode.RequestInvalid},
	} {
		k.Do("POST", base, tok, tc.body).ExpectCode(t, tc.what, tc.code)
	}

	// Update, enable, run now.
	k.Do("PUT", fmt.Sprintf("%s/%d", base, id), tok, with(echoJob("ignored"), "name", "renamed", "handlerParam", `{"x":2}`)).Expect(t, "update", 200, 0)
	k.Do("PUT", fmt.Sprintf("%s/%d/enabled?enabled=false", base, id), tok, nil).Expect(t, "pause", 200, 0)
	k.Do("GET", base+"/page?Status=2", tok, nil).Expect(t, "paused page", 200, 0).Decode(t, &page)
	if page.Total != 1 || page.Items[0].Name != "renamed" || page.Items[0].Code != "echo-1" || page.Items[0].NextFireTime != nil {
		t.Fatalf("paused page: %+v", page.Items)
	}
	k.Do("PUT", fmt.Sprintf("%s/%d/enabled", base, id), tok, nil).ExpectCode(t, "enabled missing", errcode.RequestInvalid)
	k.Do("PUT", fmt.Sprintf("%s/%d/enabled?enabled=true", base, id), tok, nil).Expect(t, "resume", 200, 0)
	var logID int64
	logID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, id), "run")
	l := waitRun(t, k, tok, logID, job.RunSuccess, 10*time.Second)
	if l.Output == nil || *l.Output != `param={"x":2}` || l.TriggeredBy != job.ByManual || l.JobName != "renamed" || l.Instance == "" || l.EndTime == nil {
		t.Fatalf("manual run: %+v", l)
	}
	k.Do("POST", fmt.Sprintf("%s/log/%d/kill", base, logID), tok, nil).ExpectCode(t, "kill an ended run", errcode.JobRunNotAlive)

	// Output that is not valid text (NUL, invalid UTF-8) and too long is
	// stored cleaned and cut.
	var binID int64
	k.Do("POST", base, tok, with(echoJob("binary"), "handlerName", "test.binary")).Expect(t, "add binary", 200, 0).Decode(t, &binID)
	logID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, binID), "run binary")
	bl := waitRun(t, k, tok, logID, job.RunFailed, 10*time.Second)
	if bl.Output == nil || strings.ContainsRune(*bl.Output, 0) || len([]rune(*bl.Output)) != 16<<10 || bl.ErrorMessage == nil || *bl.ErrorMessage != "bad\uFFFDerror" {
		t.Fatalf("binary output stored as %d runes, error %v", len([]rune(*bl.Output)), bl.ErrorMessage)
	}
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, binID), tok, nil).Expect(t, "delete binary", 200, 0)
	k.Do("POST", base+"/log/999/kill", tok, nil).ExpectCode(t, "kill an unknown run", errcode.JobLogNotFound)

	// Kill a running run: Cancelled within 2 s.
	var blockID int64
	k.Do("POST", base, tok, with(echoJob("block"), "handlerName", "test.block")).Expect(t, "add block", 200, 0).Decode(t, &blockID)
	var runID int64
	runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, blockID), "run block")
	k.Do("POST", fmt.Sprintf("%s/%d/run", base, blockID), tok, nil).ExpectCode(t, "run while running (SerialSkip)", errcode.JobAlreadyRunning)
	start := time.Now()
	k.Do("POST", fmt.Sprintf("%s/log/%d/kill", base, runID), tok, nil).Expect(t, "kill", 200, 0)
	waitRun(t, k, tok, runID, job.RunCancelled, 2*time.Second)
	t.Logf("killed in %s", time.Since(start).Round(time.Millisecond))

	// Timeout.
	var toID int64
	k.Do("POST", base, tok, with(echoJob("timeout"), "handlerName", "test.block", "timeoutSeconds", 1)).Expect(t, "add timeout", 200, 0).Decode(t, &toID)
	runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, toID), "run timeout")
	waitRun(t, k, tok, runID, job.RunTimeout, 10*time.Second)

	// Log filters, dashboard, clear.
	var logs request.PagedList[job.Log]
	k.Do("GET", fmt.Sprintf("%s/log/page?JobId=%d&RunStatus=%d", base, id, job.RunSuccess), tok, nil).Expect(t, "log filter", 200, 0).Decode(t, &logs)
	if logs.Total != 1 {
		t.Fatalf("log filter: %+v", logs)
	}
	k.Do("GET", base+"/log/page?FireInstanceId="+logs.Items[0].FireInstanceID, tok, nil).Expect(t, "log by fire id", 200, 0).Decode(t, &logs)
	if logs.Total != 1 {
		t.Fatalf("log by fire instance id: %+v", logs)
	}
	var d job.Dashboard
	k.Do("GET", base+"/dashboard", tok, nil).Expect(t, "dashboard", 200, 0).Decode(t, &d)
	if d.JobTotal != 4 || d.JobReady != 4 || d.TotalJobs != 4 || d.StatusCounts["Ready"] != 4 || d.TodaySuccess != 1 || d.TodayFailed != 2 || d.Last24h["success"] != 1 || d.Last24h["cancelled"] != 1 || d.Last24h["timeout"] != 1 || d.Last24h["failed"] != 1 || len(d.RecentFailed) != 2 {
		t.Fatalf("dashboard: %+v", d)
	}
	var n int
	k.Do("POST", base+"/log/clear", tok, map[string]any{"beforeDays": 1}).Expect(t, "clear old", 200, 0).Decode(t, &n)
	if n != 0 {
		t.Fatalf("cleared %d runs of today with beforeDays 1", n)
	}
	k.Do("POST", base+"/log/clear", tok, map[string]any{"jobId": id}).Expect(t, "clear job", 200, 0).Decode(t, &n)
	if n != 1 {
		t.Fatalf("cleared %d runs of job %d, want 1", n, id)
	}

	// Delete: the system job is protected.
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, job.SystemJobID), tok, nil).ExpectCode(t, "delete system job", errcode.JobProtected)
	k.Do("POST", base+"/batch-delete", tok, map[string]any{"ids": []int64{id, job.SystemJobID}}).ExpectCode(t, "batch with the system job", errcode.JobProtected)
	k.Do("PUT", fmt.Sprintf("%s/%d", base, job.SystemJobID), tok, with(echoJob("x"), "name", "x")).ExpectCode(t, "change the system job's handler", errcode.JobProtected)
	k.Do("POST", base+"/batch-delete", tok, map[string]any{"ids": []int64{id, blockID}}).Expect(t, "batch delete", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, toID), tok, nil).Expect(t, "delete", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, toID), tok, nil).ExpectCode(t, "delete again", errcode.JobNotFound)
	k.Do("POST", base, tok, echoJob("echo-1")).Expect(t, "a deleted job's code is free again", 200, 0)
	k.Do("POST", fmt.Sprintf("%s/%d/run", base, id), tok, nil).ExpectCode(t, "run a deleted job", errcode.JobNotFound)
}

func TestPreviewCronEndpoint(t *testing.T) {
	k, tok := startKernel(t)
	var out job.PreviewOutput
	k.Do("POST", base+"/preview-cron", tok, map[string]any{"cron": "*/2 * * * * ?", "count": 3, "from": "2030-01-01T00:00:00Z", "timeZone": "UTC"}).
		Expect(t, "preview", 200, 0).Decode(t, &out)
	if out.Normalized != "*/2 * * * * ?" || len(out.Occurrences) != 3 || out.Occurrences[0] != "2030-01-01T00:00:02Z" || out.EverySecondWarning {
		t.Fatalf("preview: %+v", out)
	}
	k.Do("POST", base+"/preview-cron", tok, map[string]any{"cron": "bad"}).ExpectCode(t, "bad cron", errcode.JobCronInvalid)
	k.Do("POST", base+"/preview-cron", tok, map[string]any{"cron": "* * * * * *", "count": 500}).ExpectCode(t, "count too big", errcode.RequestInvalid)
	k.Do("POST", base+"/preview-cron", "", map[string]any{"cron": "* * * * * *"}).Expect(t, "anonymous", 401, int(errcode.TokenInvalid))
	// A user without job permissions may preview (S) but not list (P).
	k.User("viewer", "Viewer#Pass1")
	vt := k.Login("viewer", "Viewer#Pass1").AccessToken
	k.Do("POST", base+"/preview-cron", vt, map[string]any{"cron": "0 0 * * * *"}).Expect(t, "preview as a user", 200, 0)
	k.Do("GET", base+"/page", vt, nil).ExpectCode(t, "page without permission", errcode.NoPermission)
}

func TestScheduledHTTPJob(t *testing.T) {
	hits := make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- r.Method + " " + r.URL.Path
		_, _ = w.Write([]byte("pong"))
	}))
	defer srv.Close()
	k, tok := startKernel(t, "Service__Job__HttpAllowedHosts__0=127.0.0.1", "Service__Job__HttpAllowPrivate=true")
	body := with(echoJob("ping"), "handlerKind", job.HandlerHTTP, "handlerName", "", "httpUrl", srv.URL+"/ping", "httpMethod", "post",
		"triggerKind", job.TriggerInterval, "intervalSeconds", 5, "cronExpression", nil)
	var id int64
	k.Do("POST", base, tok, body).Expect(t, "add http job", 200, 0).Decode(t, &id)
	select {
	case got := <-hits:
		if got != "POST /ping" {
			t.Fatalf("the job sent %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interval job did not fire within 10 s")
	}
	var logs request.PagedList[job.Log]
	poll.Until(t, 10*time.Second, "a successful scheduled run", func() bool {
		k.Do("GET", fmt.Sprintf("%s/log/page?JobId=%d&RunStatus=%d", base, id, job.RunSuccess), tok, nil).Decode(t, &logs)
		return logs.Total > 0
	})
	if l := logs.Items[0]; l.TriggeredBy != job.BySchedule || l.Output == nil || !strings.Contains(*l.Output, "pong") {
		t.Fatalf("scheduled run: %+v", l)
	}
	raw, _ := json.Marshal(logs.Items[0])
	if !strings.Contains(string(raw), `"fireInstanceId"`) {
		t.Fatalf("log item JSON: %s", raw)
	}
}

func TestSQLJob(t *testing.T) {
	k, tok := startKernel(t, "Service__Job__SqlEnabled=true")
	var hl job.HandlerList
	k.Do("GET", base+"/handlers", tok, nil).Expect(t, "handlers", 200, 0).Decode(t, &hl)
	if !hl.SQLEnabled {
		t.Fatal("sqlEnabled false with Service:Job:SqlEnabled=true")
	}
	sqlJob := func(code, stmt string) map[string]any {
		return with(echoJob(code), "handlerKind", job.HandlerSQL, "handlerName", "", "sql", stmt)
	}
	var readID, writeID, runID int64
	k.Do("POST", base, tok, sqlJob("sql-read", "SELECT code, is_system FROM sys_job WHERE id = 1")).Expect(t, "add read", 200, 0).Decode(t, &readID)
	runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, readID), "run read")
	l := waitRun(t, k, tok, runID, job.RunSuccess, 10*time.Second)
	if l.Output == nil || !strings.Contains(*l.Output, job.SystemJobCode) || !strings.Contains(*l.Output, "(1 rows)") {
		t.Fatalf("sql output: %+v", l)
	}
	// Read-only unless SqlAllowWrite: a write fails and changes nothing.
	k.Do("POST", base, tok, sqlJob("sql-write", "UPDATE sys_job SET name = 'hacked' WHERE id = 1")).Expect(t, "add write", 200, 0).Decode(t, &writeID)
	runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, writeID), "run write")
	waitRun(t, k, tok, runID, job.RunFailed, 10*time.Second)
	if name := k.Ent().SysJob.GetX(context.Background(), job.SystemJobID).Name; name == "hacked" {
		t.Fatal("a Sql job wrote in a read-only transaction")
	}
}

func TestJobWritesNeedReauth(t *testing.T) {
	k, tok := startKernel(t)
	var id int64
	k.Do("POST", base, tok, echoJob("r1")).Expect(t, "add", 200, 0).Decode(t, &id)
	if err := k.Settings().Set(context.Background(), "sys.security.totp.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", base},
		{"PUT", fmt.Sprintf("%s/%d", base, id)},
		{"DELETE", fmt.Sprintf("%s/%d", base, id)},
		{"POST", base + "/batch-delete"},
		{"POST", fmt.Sprintf("%s/%d/run", base, id)},
		{"POST", base + "/log/clear"},
	} {
		k.Do(c.method, c.path, tok, echoJob("r2")).ExpectCode(t, c.method+" "+c.path+" without a re-authentication window", errcode.ReauthRequired)
	}
	// Not +R: pausing and the reads.
	k.Do("PUT", fmt.Sprintf("%s/%d/enabled?enabled=false", base, id), tok, nil).Expect(t, "pause", 200, 0)
	k.Do("GET", base+"/dashboard", tok, nil).Expect(t, "dashboard", 200, 0)
}

// TestAlertByNotice: a job with alertByNotice that fails failAlertThreshold
// times in a row sends its creator a notice (type Message) naming it. The
// handler's error holds a NUL byte and invalid UTF-8, which the notice
// must not carry (PostgreSQL refuses NUL).
func TestAlertByNotice(t *testing.T) {
	k, tok := startKernel(t)
	var id, runID int64
	failing := with(echoJob("alerting"), "handlerName", "test.binary", "failAlertThreshold", 2, "alertByNotice", true)
	k.Do("POST", base, tok, failing).Expect(t, "add", 200, 0).Decode(t, &id)
	type mine struct {
		Title string `json:"title"`
		Type  int    `json:"type"`
	}
	count := func() []mine {
		var page request.PagedList[mine]
		k.Do("GET", "/api/v1/sys/notice/mine?Title=alerting&Size=50", tok, nil).Expect(t, "mine", 200, 0).Decode(t, &page)
		return page.Items
	}
	for run := 1; run <= 2; run++ {
		runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, id), "run")
		waitRun(t, k, tok, runID, job.RunFailed, 10*time.Second)
		if run == 1 {
			if items := count(); len(items) != 0 {
				t.Fatalf("a notice after one failure (threshold 2): %+v", items)
			}
		}
	}
	var items []mine
	poll.Until(t, 5*time.Second, "the alert notice", func() bool { items = count(); return len(items) == 1 })
	if items[0].Type != 3 || !strings.Contains(items[0].Title, "2 times in a row") {
		t.Fatalf("alert notice %+v", items[0])
	}
}
