//go:build !unit

package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// scrape answers the kernel's metrics as the separate listener does (the
// listener's own handler, text format).
func scrapeText(t *testing.T, k *kerneltest.Kernel) string {
	t.Helper()
	rec := httptest.NewRecorder()
	k.Metrics().Handler("").ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: HTTP %d", rec.Code)
	}
	return rec.Body.String()
}

// maxIdleScrapeLines bounds the scrape of an idle kernel: the HTTP series
// are created by the first request of their route, method and status
// class, not for every route in advance (that was ~18 000 lines).
const maxIdleScrapeLines = 1500

// TestIdleScrapeIsSmall: a started kernel that has answered nothing but
// its readiness probe scrapes in fewer than maxIdleScrapeLines lines, and
// every family the shipped dashboard queries (deploy/grafana-dashboard.json)
// that the kernel always has is there from the start, at zero.
func TestIdleScrapeIsSmall(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Job__SchedulerDisabled=true"})
	if status, _ := rawDo(t, k, httptest.NewRequestWithContext(t.Context(), "GET", "/health/ready", nil)); status != 200 {
		t.Fatalf("ready: HTTP %d", status)
	}
	body := scrapeText(t, k)
	lines := strings.Count(body, "\n")
	t.Logf("idle scrape: %d lines", lines)
	if lines > maxIdleScrapeLines {
		t.Errorf("idle scrape has %d lines, want at most %d", lines, maxIdleScrapeLines)
	}
	for _, family := range []string{
		"adminkernel_http_requests_total", "adminkernel_http_request_duration_seconds",
		"adminkernel_auth_logins_total", "adminkernel_auth_refreshes_total",
		"adminkernel_auth_refresh_reuse_detections_total", "adminkernel_auth_lockouts_total",
		"adminkernel_ratelimit_refusals_total", "adminkernel_sessions_active",
		"adminkernel_cache_hits_total", "adminkernel_cache_misses_total",
		"adminkernel_oplog_queue_length", "adminkernel_oplog_queue_capacity",
		"adminkernel_oplog_dropped_total", "adminkernel_oplog_lost_total",
		"adminkernel_password_hash_running", "adminkernel_password_hash_waiting",
		"adminkernel_password_hash_refusals_total",
		"go_sql_in_use_connections", "go_sql_open_connections", "go_sql_wait_count_total",
		"process_resident_memory_bytes", "go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(body, "\n# TYPE "+family+" ") {
			t.Errorf("the idle scrape lacks %s, which the dashboard queries", family)
		}
	}
	// A request's own series appear with it.
	k.Do("GET", "/api/v1/sys/config/site", "", nil).Expect(t, "site", 200, 0)
	if body := scrapeText(t, k); !strings.Contains(body, `adminkernel_http_requests_total{method="GET",route="/api/v1/sys/config/site",status="2xx"} 1`) {
		t.Errorf("the site request was not counted:\n%s", grepLines(body, "adminkernel_http_requests_total"))
	}
}

// rawDo sends a request whose answer need not be an envelope.
func rawDo(t *testing.T, k *kerneltest.Kernel, req *http.Request) (int, string) {
	t.Helper()
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func grepLines(body, what string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, what) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetricsPathOnMainAddressIs404: /metrics (and anything below it) on the
// main address is the API's 404 envelope, never the console's page, unless
// Service:Telemetry:MetricsOnMainAddress serves it there.
func TestMetricsPathOnMainAddressIs404(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Telemetry__MetricsAddress=127.0.0.1:0"})
	for _, p := range []string{"/metrics", "/metrics/", "/metrics/x", "/METRICS"} {
		r := k.Do("GET", p, "", nil)
		r.Expect(t, "GET "+p+" on the main address", 404, int(errcode.RouteNotFound))
	}
	if status, body := rawDo(t, k, httptest.NewRequestWithContext(t.Context(), "HEAD", "/metrics", nil)); status != 404 {
		t.Errorf("HEAD /metrics on the main address = %d %.100q", status, body)
	}
	const token = "main-address-token-0123456789abcdef"
	on := kerneltest.Start(t, []string{"Service__Telemetry__MetricsOnMainAddress=true", "Service__Telemetry__MetricsBearerToken=" + token})
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if status, body := rawDo(t, on, req); status != 200 || !strings.Contains(body, "# TYPE go_goroutines") {
		t.Fatalf("MetricsOnMainAddress: GET /metrics = %d %.200q", status, body)
	}
}

// accessLines are the JSON lines of the access log in a kernel's log.
func accessLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line["@module"] == "adminkernel."+host.AccessLogCategory {
			out = append(out, line)
		}
	}
	return out
}

// TestAccessLogLine: a failed login (HTTP 200, business code 40001) is one
// access line with its envelope code, status, the client address (read
// through the trusted proxy), the user agent, the request id and the
// duration; an authenticated request names the user; the readiness probe
// writes no line unless Service:Telemetry:ObserveProbes asks for it.
func TestAccessLogLine(t *testing.T) {
	k := kerneltest.Start(t, append([]string{
		"Logging__Format=json", "Service__Telemetry__AccessLog=true", "Service__Job__SchedulerDisabled=true",
	}, trustAll...))
	send := func(method, path, token, id string, body any) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(string(raw)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", id)
		req.Header.Set("X-Forwarded-For", "203.0.113.7")
		req.Header.Set("User-Agent", "probe-agent/1.0")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rawDo(t, k, req)
	}
	send("POST", "/api/v1/auth/login", "", "req-failed-login", map[string]string{"account": "superAdmin", "password": "wrong-Pass#1"})
	admin := k.Admin()
	send("GET", "/api/v1/ping", admin, "req-me", nil)
	send("GET", "/health/ready", "", "req-ready", nil)

	byID := map[string]map[string]any{}
	for _, l := range accessLines(t, k.Log()) {
		if id, ok := l["request_id"].(string); ok {
			byID[id] = l
		}
	}
	failed, ok := byID["req-failed-login"]
	if !ok {
		t.Fatalf("no access line for the failed login:\n%s", k.Log())
	}
	for key, want := range map[string]any{
		"code": float64(errcode.PasswordWrong), "status": float64(200), "client": "203.0.113.7",
		"user_agent": "probe-agent/1.0", "method": "POST", "route": "/api/v1/auth/login",
	} {
		if failed[key] != want {
			t.Errorf("failed login access line: %s = %v, want %v (%v)", key, failed[key], want, failed)
		}
	}
	if _, ok := failed["duration_ms"].(float64); !ok {
		t.Errorf("failed login access line has no duration_ms: %v", failed)
	}
	me, ok := byID["req-me"]
	if !ok {
		t.Fatalf("no access line for /ping")
	}
	if me["code"] != float64(0) || me["account"] != "superAdmin" || me["user_id"] == nil {
		t.Errorf("authenticated access line: %v", me)
	}
	if _, ok := byID["req-ready"]; ok {
		t.Errorf("the readiness probe was access-logged: %v", byID["req-ready"])
	}

	probes := kerneltest.Start(t, []string{
		"Logging__Format=json", "Service__Telemetry__AccessLog=true", "Service__Telemetry__ObserveProbes=true",
	})
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/health/ready", nil)
	req.Header.Set("X-Request-ID", "req-ready-observed")
	if status, _ := rawDo(t, probes, req); status != http.StatusOK {
		t.Fatalf("ready: %d", status)
	}
	found := false
	for _, l := range accessLines(t, probes.Log()) {
		found = found || l["request_id"] == "req-ready-observed"
	}
	if !found {
		t.Errorf("with ObserveProbes the readiness probe has no access line")
	}
}

// TestProbesNotTraced: with tracing on, the health probes start no span
// (their answer carries no traceparent) unless
// Service:Telemetry:ObserveProbes; other requests are traced.
func TestProbesNotTraced(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	t.Cleanup(collector.Close)
	traced := func(k *kerneltest.Kernel, path string) bool {
		t.Helper()
		resp, err := k.App().Test(httptest.NewRequestWithContext(t.Context(), "GET", path, nil), fiber.TestConfig{Timeout: 0})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.Header.Get("traceparent") != ""
	}
	for _, observe := range []bool{false, true} {
		environ := []string{"Service__Telemetry__Tracing__Endpoint=" + collector.URL, "Service__Job__SchedulerDisabled=true"}
		if observe {
			environ = append(environ, "Service__Telemetry__ObserveProbes=true")
		}
		k := kerneltest.Start(t, environ)
		if !traced(k, "/api/v1/sys/config/site") {
			t.Fatalf("ObserveProbes=%v: an API request was not traced", observe)
		}
		for _, p := range []string{"/health", "/health/ready", "/Health/Ready/"} {
			if got := traced(k, p); got != observe {
				t.Errorf("ObserveProbes=%v: %s traced = %v", observe, p, got)
			}
		}
	}
}

// TestShutdownLogsItsEnd: the last line of a kernel that served and was
// stopped is "stopped" with the shutdown's duration (from the signal), once,
// after the scheduler, the operation log and the stores are closed.
func TestShutdownLogsItsEnd(t *testing.T) {
	k := kerneltest.Start(t, []string{"Logging__Format=json"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.ServeListener(ctx, ln) }()
	poll.Until(t, 5*time.Second, "the kernel listening", func() bool { return strings.Contains(k.Log(), `"@message":"listening"`) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	_ = k.Close()
	lines := strings.Split(strings.TrimSpace(k.Log()), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if last["@message"] != "stopped" {
		t.Fatalf("the last log line is %v, want \"stopped\"", last)
	}
	d, err := time.ParseDuration(fmt.Sprint(last["duration"]))
	if err != nil || d <= 0 {
		t.Errorf("stopped: duration %v (%v)", last["duration"], err)
	}
	if n := strings.Count(k.Log(), `"@message":"stopped"`); n != 1 {
		t.Errorf("%d stopped lines, want 1", n)
	}
}
