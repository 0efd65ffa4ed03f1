//go:build !unit

package host_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysexceptionlog"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host"
	env "github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// TestRequestIDEverywhere: with the JSON log, the SQL log and the access
// log on, every line logged while a request runs carries that request's id
// (the caller's X-Request-ID), no line is raw text, and the operation-log
// and exception-log rows carry the id too (shown as requestId).
//
// Traced (Service:Telemetry:Tracing on, the caller sending a traceparent),
// every such line also carries the trace id, and both rows carry it as
// trace_id (traceId on the pages).
func TestRequestIDEverywhere(t *testing.T) {
	t.Run("untraced", func(t *testing.T) { requestIDEverywhere(t, false) })
	t.Run("traced", func(t *testing.T) { requestIDEverywhere(t, true) })
}

func requestIDEverywhere(t *testing.T, traced bool) {
	echo := host.Module{Name: "Echo", Routes: func(d *module.Deps, api *route.Group) error {
		api.Post("/echo/write", route.Session, func(c fiber.Ctx) error {
			n, err := d.Client.SysUser.Query().Count(c.Context())
			if err != nil {
				return err
			}
			return env.OK(c, n)
		})
		api.Post("/echo/panic", route.Session, func(fiber.Ctx) error { panic("boom") })
		return nil
	}}
	environ := []string{
		"Logging__Format=json",
		"Service__Database__SqlLog__Enabled=true",
		"Service__Job__SchedulerDisabled=true",
		"Service__Telemetry__AccessLog=true",
		"Service__Logging__OpLog__Sync=true",
	}
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	if traced {
		// A collector that accepts every export (the spans themselves are
		// e2e/tracing's subject).
		collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
		t.Cleanup(collector.Close)
		environ = append(environ, "Service__Telemetry__Tracing__Endpoint="+collector.URL)
	}
	k := kerneltest.Start(t, environ, echo)
	admin := k.Admin()

	send := func(method, path, token, id, body string) {
		t.Helper()
		req := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", id)
		if traced {
			req.Header.Set("traceparent", "00-"+traceID+"-b7ad6b7169203331-01")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 0})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Header.Get("X-Request-ID"); got != id {
			t.Fatalf("%s %s answered X-Request-ID %q, want the caller's %q", method, path, got, id)
		}
	}
	tests := []struct {
		name, method, path, token, id, body string
		minLines                            int // SQL lines and the access line at least
	}{
		{"failed login", "POST", "/api/v1/auth/login", "", "caller-login-1", `{"account":"superAdmin","password":"wrong"}`, 3},
		{"ping", "GET", "/api/v1/ping", admin, "caller-ping-2", "", 1},
		{"write", "POST", "/api/v1/echo/write", admin, "caller-write-3", "{}", 3},
		{"panic", "POST", "/api/v1/echo/panic", admin, "caller-panic-4", "{}", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := len(k.Log())
			send(tt.method, tt.path, tt.token, tt.id, tt.body)
			lines := strings.Split(strings.TrimSpace(k.Log()[from:]), "\n")
			if len(lines) < tt.minLines {
				t.Fatalf("%d lines logged, want at least %d:\n%s", len(lines), tt.minLines, strings.Join(lines, "\n"))
			}
			t.Logf("%d lines logged within the request", len(lines))
			for _, line := range lines {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("a line is not JSON: %q", line)
				}
				// The job engine's lease sweeper runs in the background
				// even with the scheduler off: its SQL lines are no
				// request's.
				if msg, _ := rec["@message"].(string); strings.Contains(msg, `"sys_job_`) || strings.Contains(msg, "`sys_job_") {
					continue
				}
				if rec["request_id"] != tt.id {
					t.Errorf("a line of the request lacks its id %q: %s", tt.id, line)
				}
				if traced && rec["trace_id"] != traceID {
					t.Errorf("a line of the traced request lacks its trace id: %s", line)
				}
				if _, ok := rec["trace_id"]; !traced && ok {
					t.Errorf("a line of an untraced request has a trace id: %s", line)
				}
			}
		})
	}

	ctx := context.Background()
	row, err := k.Ent().SysOpLog.Query().Where(sysoplog.PathEQ("/api/v1/echo/write")).Only(ctx)
	if err != nil {
		t.Fatalf("the op-log row of the write: %v", err)
	}
	if row.RequestID == nil || *row.RequestID != "caller-write-3" {
		t.Fatalf("op-log request_id = %v, want the caller's X-Request-ID", row.RequestID)
	}
	if traced != (row.TraceID != nil && *row.TraceID == traceID) || !traced && row.TraceID != nil {
		t.Fatalf("op-log trace_id = %v (traced: %v)", row.TraceID, traced)
	}
	ex, err := k.Ent().SysExceptionLog.Query().Where(sysexceptionlog.PathEQ("/api/v1/echo/panic")).Only(ctx)
	if err != nil {
		t.Fatalf("the exception row of the panic: %v", err)
	}
	if ex.RequestID == nil || *ex.RequestID != "caller-panic-4" {
		t.Fatalf("exception-log request_id = %v, want the caller's X-Request-ID", ex.RequestID)
	}
	// The exception log's trace_id: the W3C trace id when traced, else the
	// request id (wire contract).
	if wantTrace := map[bool]string{true: traceID, false: "caller-panic-4"}[traced]; ex.TraceID == nil || *ex.TraceID != wantTrace {
		t.Fatalf("exception-log trace_id = %v, want %q", ex.TraceID, wantTrace)
	}
	// The pages show it as requestId.
	for _, page := range []struct{ path, id string }{
		{"/api/v1/sys/log/op/page?pageNo=1&pageSize=50", "caller-write-3"},
		{"/api/v1/sys/log/exception/page?pageNo=1&pageSize=50", "caller-panic-4"},
	} {
		r := k.Do("GET", page.path, admin, nil)
		r.Expect(t, page.path, 200, 0)
		if !strings.Contains(string(r.Data), `"requestId":"`+page.id+`"`) {
			t.Errorf("%s does not show requestId %q: %s", page.path, page.id, r.Data)
		}
	}
	// JSON mode: no raw text line anywhere in the log.
	for _, line := range strings.Split(strings.TrimSpace(k.Log()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("raw line in the JSON log: %q", line)
		}
	}
}
