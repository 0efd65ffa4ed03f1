package telemetry_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/ratelimit"
	"github.com/adminkernel/kernel/host/telemetry"
)

func TestListener(t *testing.T) {
	const token = "listener-token-0123456789abcdefgh"
	tests := []struct {
		name, token, path, auth string
		status                  int
	}{
		{"open listener", "", "/metrics", "", 200},
		{"token required", token, "/metrics", "", 401},
		{"wrong token", token, "/metrics", "Bearer nope", 401},
		{"right token", token, "/metrics", "Bearer " + token, 200},
		{"other path", "", "/debug/pprof/", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := telemetry.New()
			m.Login("password", 0)
			srv, err := m.Listen(t.Context(), "127.0.0.1:0", tt.token, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- srv.Serve() }()
			defer func() {
				if err := srv.Close(context.Background()); err != nil {
					t.Error(err)
				}
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+srv.Addr().String()+tt.path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			served := strings.Contains(string(body), `adminkernel_auth_logins_total{code="0",method="password",provider=""} 1`)
			if served != (tt.status == 200) {
				t.Fatalf("metrics served = %v with status %d:\n%s", served, resp.StatusCode, body)
			}
		})
	}
}

func TestLoginLabels(t *testing.T) {
	tests := []struct {
		method           string
		code             int
		wantM, wantP, wc string
	}{
		{"password", 0, "password", "", "0"},
		{"sms", 40001, "sms", "", "40001"},
		{"totp", 0, "totp", "", "0"},
		{"passkey", 0, "passkey", "", "0"},
		{"enterprise_chat", 0, "external", "enterprise_chat", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			m := telemetry.New()
			m.Login(tt.method, tt.code)
			// The successful password login's series exists from the start.
			series := []string{`adminkernel_auth_logins_total{code="` + tt.wc + `",method="` + tt.wantM + `",provider="` + tt.wantP + `"} 1`}
			if tt.wantM != "password" || tt.wc != "0" {
				series = append(series, `adminkernel_auth_logins_total{code="0",method="password",provider=""} 0`)
			}
			sort.Strings(series)
			want := `
# HELP adminkernel_auth_logins_total Login attempts, by method, provider code (external logins) and outcome code (0 = success).
# TYPE adminkernel_auth_logins_total counter
` + strings.Join(series, "\n") + "\n"
			if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "adminkernel_auth_logins_total"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCacheKinds(t *testing.T) {
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	m := telemetry.New()
	s := m.CountCache(store)
	ctx := context.Background()
	if err := s.Set(ctx, "perm:1", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"perm:1", "perm:2", "sess:abc", "user-chosen-key", "weird:1"} {
		if _, _, err := s.Get(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP adminkernel_cache_hits_total Cache reads that found their entry, by kind (the key's first segment).
# TYPE adminkernel_cache_hits_total counter
adminkernel_cache_hits_total{kind="perm"} 1
# HELP adminkernel_cache_misses_total Cache reads that found nothing (absent or expired), by kind.
# TYPE adminkernel_cache_misses_total counter
adminkernel_cache_misses_total{kind="other"} 2
adminkernel_cache_misses_total{kind="perm"} 1
adminkernel_cache_misses_total{kind="sess"} 1
`
	// Only the series that moved are compared: the others are 0.
	got, err := testutil.CollectAndFormat(m.Registry(), expfmt.TypeTextPlain, "adminkernel_cache_hits_total", "adminkernel_cache_misses_total")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(string(got), line) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
	for _, line := range strings.Split(string(got), "\n") {
		if strings.HasSuffix(line, " 0") || strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if !strings.Contains(want, line) {
			t.Errorf("unexpected %q", line)
		}
	}
	var nilM *telemetry.Metrics
	if nilM.CountCache(store) != store {
		t.Error("a nil Metrics wraps the store")
	}
	nilM.Login("password", 0) // no panic
}

// batchSpy is a store whose batch write is counted.
type batchSpy struct {
	cache.Store
	batches int
}

func (s *batchSpy) SetMany(ctx context.Context, entries []cache.Entry, ttl time.Duration) error {
	s.batches++
	return cache.SetMany(ctx, s.Store, entries, ttl)
}

// TestCountedCacheKeepsTheBatchWrite: counting reads must not turn a
// store's one-round-trip SetMany into one Set per entry (a force-logout of
// 1 000 sessions wrote 1 000 SETs through it).
func TestCountedCacheKeepsTheBatchWrite(t *testing.T) {
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	spy := &batchSpy{Store: store}
	s := telemetry.New().CountCache(spy)
	if _, ok := s.(cache.MultiSetter); !ok {
		t.Fatal("the counted store is not a cache.MultiSetter")
	}
	ctx := context.Background()
	if err := cache.SetMany(ctx, s, []cache.Entry{{Key: "sess:a", Val: []byte("1")}, {Key: "sess:b", Val: []byte("2")}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if spy.batches != 1 {
		t.Fatalf("the store's SetMany ran %d times, want once", spy.batches)
	}
	if v, ok, _ := s.Get(ctx, "sess:b"); !ok || string(v) != "2" {
		t.Fatalf("sess:b = %q, %v after SetMany", v, ok)
	}
}

// serveAllocs is the allocations of one request through app's handler
// (fasthttp's context reused, as the server reuses it).
func serveAllocs(t *testing.T, app *fiber.App, path string) float64 {
	t.Helper()
	h := app.Handler()
	var req fasthttp.Request
	req.Header.SetMethod(fiber.MethodGet)
	req.SetRequestURI(path)
	var fctx fasthttp.RequestCtx
	fctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, nil)
	run := func() {
		fctx.Response.Reset()
		h(&fctx)
	}
	for range 10 { // first-use series, pools
		run()
	}
	if fctx.Response.StatusCode() != 200 {
		t.Fatalf("GET %s: HTTP %d", path, fctx.Response.StatusCode())
	}
	return testing.AllocsPerRun(200, run)
}

// TestMiddlewareAddsNoAllocation: with the access log off, counting a
// request (its route's series created by its first request) costs no
// allocation beyond what the app costs without the middleware.
func TestMiddlewareAddsNoAllocation(t *testing.T) {
	build := func(mw fiber.Handler) *fiber.App {
		app := fiber.New()
		if mw != nil {
			app.Use(mw)
		}
		app.Get("/items/:id", func(c fiber.Ctx) error { return c.SendStatus(200) })
		return app
	}
	base := serveAllocs(t, build(nil), "/items/7")
	m := telemetry.New()
	app := build(m.Middleware(telemetry.HTTPOptions{}))
	m.IndexRoutes(app)
	const series = `adminkernel_http_requests_total{method="GET",route="/items/:id",status="2xx"}`
	if strings.Contains(scrapeText(t, m), `route="/items/:id"`) {
		t.Fatal("a route's series exist before its first request")
	}
	with := serveAllocs(t, app, "/items/7")
	t.Logf("allocations per request: %.1f with the middleware, %.1f without", with, base)
	if with > base {
		t.Fatalf("the metrics middleware adds %.1f allocations per request (%.1f with it, %.1f without)", with-base, with, base)
	}
	if body := scrapeText(t, m); !strings.Contains(body, series+" ") {
		t.Fatalf("the route's requests are not counted:\n%s", body)
	}
}

func scrapeText(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler("").ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", nil))
	return rec.Body.String()
}

// The dashboard's labelled counters exist at zero before their first
// event: a new kernel's scrape has the families the panels query.
func TestDashboardSeriesAtZero(t *testing.T) {
	m := telemetry.New()
	m.PluginsConfigured("code_host", "")
	body := scrapeText(t, m)
	for _, want := range []string{
		`adminkernel_auth_logins_total{code="0",method="password",provider=""} 0`,
		`adminkernel_auth_refreshes_total{code="0"} 0`,
		`adminkernel_ratelimit_refusals_total{bucket="` + ratelimit.BucketAuth + `"} 0`,
		`adminkernel_ratelimit_refusals_total{bucket="` + ratelimit.BucketPassword + `"} 0`,
		`adminkernel_ratelimit_refusals_total{bucket="` + ratelimit.BucketOther + `"} 0`,
		`adminkernel_plugin_restarts_total{provider="code_host"} 0`,
		`adminkernel_http_requests_total{method="GET",route="unmatched",status="5xx"} 0`,
		`adminkernel_http_request_duration_seconds_count{method="GET",route="unmatched",status="2xx"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("a new registry lacks %s", want)
		}
	}
	if strings.Count(body, "adminkernel_plugin_restarts_total{") != 1 { // not for the empty code
		t.Errorf("unexpected plugin series:\n%s", grep(body, "adminkernel_plugin_restarts_total"))
	}
}

func grep(body, what string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, what) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
