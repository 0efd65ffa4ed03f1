//go:build !unit

package host_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/adminkernel/kernel/host/kerneltest"
)

// metricsToken is the bearer token of the kernels of these tests.
const metricsToken = "test-metrics-token-0123456789abcdef"

// scrape is one parsed answer of /metrics.
type scrape map[string]*dto.MetricFamily

// value returns the value of the series of family name whose labels are
// exactly labels (0 when there is none).
func (s scrape) value(name string, labels map[string]string) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		}
	}
	return 0
}

// getMetrics scrapes /metrics of k on the main address with auth as the
// Authorization header, returning the status and the body.
func getMetrics(t *testing.T, k *kerneltest.Kernel, auth string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func mustScrape(t *testing.T, k *kerneltest.Kernel) scrape {
	t.Helper()
	status, body := getMetrics(t, k, "Bearer "+metricsToken)
	if status != 200 {
		t.Fatalf("GET /metrics = %d %s", status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// TestMetricsScripted scrapes /metrics before and after a scripted run (a
// successful and a failed login, a refresh, a rate-limit refusal) and
// checks that the counters moved by exactly what the run did.
func TestMetricsScripted(t *testing.T) {
	k := kerneltest.Start(t, []string{
		"Service__Telemetry__MetricsOnMainAddress=true",
		"Service__Telemetry__MetricsBearerToken=" + metricsToken,
	})
	k.Leaks.Secrets = append(k.Leaks.Secrets, metricsToken)
	ctx := context.Background()
	before := mustScrape(t, k)

	tp := k.Login("superAdmin", kerneltest.AdminPassword)
	tryLogin(k, "superAdmin", "wrong-password").Expect(t, "wrong password", 200, 40001)
	_, r := refresh(k, tp.RefreshToken)
	r.Expect(t, "refresh", 200, 0)
	k.Do("GET", "/api/v1/ping", tp.AccessToken, nil).Expect(t, "ping", 200, 0)
	// The rate limit: an allowance of 2 more auth requests in this window.
	for key, v := range map[string]string{"sys.security.rateLimit.enabled": "true", "sys.security.rateLimit.authPermitPerWindow": "2"} {
		if err := k.Settings().Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	refused := 0
	for range 3 {
		if k.Do("GET", "/api/v1/auth/captcha", "", nil).Status == http.StatusTooManyRequests {
			refused++
		}
	}
	if err := k.Settings().Set(ctx, "sys.security.rateLimit.enabled", "false"); err != nil {
		t.Fatal(err)
	}
	if refused == 0 {
		t.Fatal("no request refused by the rate limit")
	}

	after := mustScrape(t, k)
	delta := func(name string, labels map[string]string) float64 {
		return after.value(name, labels) - before.value(name, labels)
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"adminkernel_auth_logins_total", map[string]string{"method": "password", "provider": "", "code": "0"}, 1},
		{"adminkernel_auth_logins_total", map[string]string{"method": "password", "provider": "", "code": "40001"}, 1},
		{"adminkernel_auth_refreshes_total", map[string]string{"code": "0"}, 1},
		{"adminkernel_auth_refresh_reuse_detections_total", nil, 0},
		{"adminkernel_auth_lockouts_total", nil, 0},
		{"adminkernel_ratelimit_refusals_total", map[string]string{"bucket": "auth"}, float64(refused)},
		{"adminkernel_ratelimit_refusals_total", map[string]string{"bucket": "api"}, 0},
		// Business errors are answered 200: both logins count as 2xx.
		{"adminkernel_http_requests_total", map[string]string{"route": "/api/v1/auth/login", "method": "POST", "status": "2xx"}, 2},
		{"adminkernel_http_request_duration_seconds", map[string]string{"route": "/api/v1/auth/login", "method": "POST", "status": "2xx"}, 2},
		{"adminkernel_http_requests_total", map[string]string{"route": "/api/v1/auth/refresh", "method": "POST", "status": "2xx"}, 1},
		// The rate limiter answers before the router picks the route.
		{"adminkernel_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "4xx"}, float64(refused)},
		{"adminkernel_http_requests_total", map[string]string{"route": "/api/v1/ping", "method": "GET", "status": "2xx"}, 1},
		{"adminkernel_http_requests_total", map[string]string{"route": "/api/v1/auth/captcha", "method": "GET", "status": "2xx"}, float64(3 - refused)},
		// Two hashes of the logins (the failed one too); the kernel's start
		// hashed the dummy password before the first scrape.
		{"adminkernel_password_hash_completed_total", nil, 2},
		{"adminkernel_password_hash_refusals_total", map[string]string{"reason": "rejected"}, 0},
	}
	for _, tt := range tests {
		if got := delta(tt.name, tt.labels); got != tt.want {
			t.Errorf("%s%v moved by %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	// The gauges and collectors are there.
	for _, name := range []string{
		"adminkernel_sessions_active", "adminkernel_oplog_queue_length", "adminkernel_oplog_dropped_total",
		"adminkernel_password_hash_running", "go_sql_open_connections", "go_goroutines", "process_cpu_seconds_total",
		"adminkernel_cache_hits_total", "adminkernel_cache_misses_total",
	} {
		if _, ok := after[name]; !ok {
			t.Errorf("%s is missing", name)
		}
	}
	if got := after.value("go_sql_open_connections", map[string]string{"db_name": "main"}); got < 1 {
		t.Errorf("go_sql_open_connections{db_name=main} = %v", got)
	}
	if got := delta("adminkernel_cache_hits_total", map[string]string{"kind": "perm"}) +
		delta("adminkernel_cache_misses_total", map[string]string{"kind": "perm"}) +
		delta("adminkernel_cache_hits_total", map[string]string{"kind": "sess"}) +
		delta("adminkernel_cache_misses_total", map[string]string{"kind": "sess"}); got < 1 {
		t.Errorf("the authenticated call read no session or permission entry from the cache (%v)", got)
	}
	// No label carries a raw path or an account.
	_, body := getMetrics(t, k, "Bearer "+metricsToken)
	for _, leak := range []string{"superAdmin", "wrong-password", tp.RefreshToken, tp.AccessToken} {
		if strings.Contains(body, leak) {
			t.Errorf("the metrics carry %q", leak)
		}
	}
}

// TestMetricsGate: /metrics on the main address answers only with the
// token, and is not served there unless the settings allow it.
func TestMetricsGate(t *testing.T) {
	k := kerneltest.Start(t, []string{
		"Service__Telemetry__MetricsOnMainAddress=true",
		"Service__Telemetry__MetricsBearerToken=" + metricsToken,
	})
	k.Leaks.Secrets = append(k.Leaks.Secrets, metricsToken)
	k.Login("superAdmin", kerneltest.AdminPassword)
	// The first count of the sessions (later ones are reused for 30 s).
	if n := mustScrape(t, k).value("adminkernel_sessions_active", nil); n != 1 {
		t.Errorf("adminkernel_sessions_active = %v, want the login's session", n)
	}
	tests := []struct {
		name, auth string
		status     int
	}{
		{"no token", "", 401},
		{"wrong token", "Bearer " + strings.Repeat("x", len(metricsToken)), 401},
		{"token as basic", "Basic " + metricsToken, 401},
		{"token", "Bearer " + metricsToken, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := getMetrics(t, k, tt.auth)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if status != 200 && strings.Contains(body, "adminkernel_") {
				t.Fatalf("a refused scrape got metrics: %s", body)
			}
		})
	}

	off := kerneltest.Start(t, nil)
	status, body := getMetrics(t, off, "Bearer "+metricsToken)
	if strings.Contains(body, "adminkernel_http_requests_total") || strings.Contains(body, "go_goroutines") {
		t.Fatalf("metrics served on the main address without MetricsOnMainAddress (status %d)", status)
	}
}
