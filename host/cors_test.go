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

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/internal/cors"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

const (
	listedOrigin   = "https://app.example.com"
	unlistedOrigin = "https://evil.example"
)

// corsHeaders are the headers of the CORS protocol the kernel may send.
var corsHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers",
	"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age",
}

// corsKernel starts a kernel listing listedOrigin (written in another case
// and with a trailing slash: the settings normalise it) and one more
// origin, with a route that fails unhandled (500).
func corsKernel(t *testing.T, environ ...string) *kerneltest.Kernel {
	t.Helper()
	boom := host.Module{Name: "CorsBoom", Routes: func(_ *module.Deps, api *route.Group) error {
		api.Get("/cors-boom", route.Anonymous, func(fiber.Ctx) error { panic("boom") })
		return nil
	}}
	env := append([]string{
		"Api__Cors__AllowedOrigins__0=HTTPS://App.Example.com/",
		"Api__Cors__AllowedOrigins__1=http://localhost:5173",
	}, environ...)
	return kerneltest.Start(t, env, boom)
}

// corsRequest sends method path with the Origin (none when "") and extra
// headers.
func corsRequest(t *testing.T, k *kerneltest.Kernel, method, path, origin, token, body string, extra ...string) kerneltest.Reply {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequestWithContext(t.Context(), method, path, nil)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return kerneltest.Reply{Status: resp.StatusCode, Header: resp.Header, Raw: b.String()}
}

// expectListed fails unless h carries the answer to a listed origin.
func expectListed(t *testing.T, what string, h http.Header, origin string) {
	t.Helper()
	want := map[string]string{
		"Access-Control-Allow-Origin":      origin,
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Expose-Headers":    cors.ExposeHeaders,
	}
	for k, v := range want {
		if got := h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	expectVary(t, what, h, "Origin")
}

// expectNoCors fails when h carries any CORS header.
func expectNoCors(t *testing.T, what string, h http.Header) {
	t.Helper()
	for _, k := range corsHeaders {
		if got := h.Values(k); len(got) > 0 {
			t.Errorf("%s: %s = %q, want none", what, k, got)
		}
	}
}

func expectVary(t *testing.T, what string, h http.Header, want string) {
	t.Helper()
	if got := h.Values("Vary"); len(got) != 1 || got[0] != want {
		t.Errorf("%s: Vary = %q, want %q", what, got, want)
	}
}

// TestCorsActualRequests: a listed origin gets its origin, credentials and
// the exposed headers on reads, writes and on every error answer; an
// unlisted origin and a request without Origin get none of them, and all
// carry Vary: Origin.
func TestCorsActualRequests(t *testing.T) {
	k := corsKernel(t)
	admin := k.Admin()
	tests := []struct {
		name, method, path, token, body string
		status                          int
	}{
		{"GET with a token", "GET", "/api/v1/ping", admin, "", 200},
		{"POST login", "POST", "/api/v1/auth/login", "", `{"account":"superAdmin","password":"` + kerneltest.AdminPassword + `"}`, 200},
		{"business error", "POST", "/api/v1/auth/login", "", `{"account":"superAdmin","password":"wrong"}`, 200},
		{"401 without a token", "GET", "/api/v1/ping", "", "", 401},
		{"404 unmatched route", "GET", "/api/v1/no/such/route", "", "", 404},
		{"405 wrong method", "GET", "/api/v1/auth/login", "", "", 405},
		{"500 unhandled", "GET", "/api/v1/cors-boom", "", "", 500},
		{"health", "GET", "/health", "", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, origin := range []string{listedOrigin, "http://localhost:5173", "https://APP.example.com"} {
				r := corsRequest(t, k, tt.method, tt.path, origin, tt.token, tt.body)
				if r.Status != tt.status {
					t.Fatalf("%s: HTTP %d, want %d (%s)", origin, r.Status, tt.status, r.Raw)
				}
				expectListed(t, origin, r.Header, origin) // the request's own spelling
			}
			for _, origin := range []string{unlistedOrigin, "https://app.example.com:8443", "http://app.example.com", "null", listedOrigin + ".evil.example"} {
				r := corsRequest(t, k, tt.method, tt.path, origin, tt.token, tt.body)
				if r.Status != tt.status {
					t.Fatalf("%s: HTTP %d, want %d (%s)", origin, r.Status, tt.status, r.Raw)
				}
				expectNoCors(t, origin, r.Header)
				expectVary(t, origin, r.Header, "Origin")
			}
			r := corsRequest(t, k, tt.method, tt.path, "", tt.token, tt.body)
			expectNoCors(t, "no Origin", r.Header)
			expectVary(t, "no Origin", r.Header, "Origin")
		})
	}
}

// TestCorsPreflight: a preflight is answered 204 before routing, for any
// path, with the API's methods and headers for a listed origin and nothing
// for an unlisted one; an OPTIONS without Access-Control-Request-Method is
// not a preflight and goes to the router.
func TestCorsPreflight(t *testing.T) {
	k := corsKernel(t)
	const vary = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
	for _, path := range []string{"/api/v1/auth/login", "/api/v1/sys/user/page", "/api/v1/no/such/route", "/health"} {
		r := corsRequest(t, k, "OPTIONS", path, listedOrigin, "", "",
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, x-smart-csrf")
		if r.Status != 204 || r.Raw != "" {
			t.Fatalf("preflight %s: HTTP %d %q, want 204 without a body", path, r.Status, r.Raw)
		}
		want := map[string]string{
			"Access-Control-Allow-Origin":      listedOrigin,
			"Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Methods":     "GET, POST, PUT, PATCH, DELETE",
			"Access-Control-Allow-Headers":     "Authorization, Content-Type, Accept-Language, X-Request-ID, X-Smart-CSRF, X-Smart-Reauth-Retried",
			"Access-Control-Max-Age":           "600",
		}
		for h, v := range want {
			if got := r.Header.Get(h); got != v {
				t.Errorf("preflight %s: %s = %q, want %q", path, h, got, v)
			}
		}
		expectVary(t, "preflight "+path, r.Header, vary)
		if r.Header.Get("X-Request-Id") == "" {
			t.Errorf("preflight %s: no X-Request-ID", path)
		}

		r = corsRequest(t, k, "OPTIONS", path, unlistedOrigin, "", "", "Access-Control-Request-Method", "POST")
		if r.Status != 204 || r.Raw != "" {
			t.Fatalf("unlisted preflight %s: HTTP %d %q, want 204 without a body", path, r.Status, r.Raw)
		}
		expectNoCors(t, "unlisted preflight "+path, r.Header)
		expectVary(t, "unlisted preflight "+path, r.Header, vary)
	}
	// Not a preflight: the router answers (405, Allow) with the CORS
	// headers of an actual request.
	r := corsRequest(t, k, "OPTIONS", "/api/v1/auth/login", listedOrigin, "", "")
	if r.Status != 405 {
		t.Fatalf("OPTIONS without Access-Control-Request-Method: HTTP %d, want 405 (%s)", r.Status, r.Raw)
	}
	expectListed(t, "plain OPTIONS", r.Header, listedOrigin)
}

// TestCorsRateLimit: preflights are not counted against the auth bucket,
// and the 429 a listed origin gets carries its CORS headers (with
// Retry-After exposed).
func TestCorsRateLimit(t *testing.T) {
	k := corsKernel(t)
	ctx := context.Background()
	for key, v := range map[string]string{"sys.security.rateLimit.enabled": "true", "sys.security.rateLimit.authPermitPerWindow": "3"} {
		if err := k.Settings().Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	// Many preflights first: none of them counts.
	for i := range 10 {
		r := corsRequest(t, k, "OPTIONS", "/api/v1/auth/captcha", listedOrigin, "", "", "Access-Control-Request-Method", "GET")
		if r.Status != 204 {
			t.Fatalf("preflight %d: HTTP %d, want 204 (%s)", i, r.Status, r.Raw)
		}
	}
	var last kerneltest.Reply
	n := 0
	for ; n < 10; n++ {
		last = corsRequest(t, k, "GET", "/api/v1/auth/captcha", listedOrigin, "", "")
		if last.Status == 429 {
			break
		}
	}
	// 3 per window: the 4th is refused, unless the window turned over in
	// between (then at most 3 more pass).
	if last.Status != 429 || n < 3 || n > 6 {
		t.Fatalf("GET captcha: %d passed before HTTP %d, want 3 then 429 (%s)", n, last.Status, last.Raw)
	}
	expectListed(t, "429", last.Header, listedOrigin)
	if last.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	r := corsRequest(t, k, "GET", "/api/v1/auth/captcha", unlistedOrigin, "", "")
	if r.Status != 429 {
		t.Fatalf("unlisted origin: HTTP %d, want 429 (same client)", r.Status)
	}
	expectNoCors(t, "unlisted 429", r.Header)
	expectVary(t, "unlisted 429", r.Header, "Origin")
}

// TestCorsNotConfigured: without Api:Cors:AllowedOrigins no answer carries
// a CORS header or Vary, and a preflight is an ordinary OPTIONS request.
func TestCorsNotConfigured(t *testing.T) {
	k := kerneltest.Start(t, nil)
	for _, tt := range []struct{ method, path string }{
		{"GET", "/api/v1/ping"},
		{"GET", "/api/v1/no/such/route"},
		{"GET", "/health"},
	} {
		r := corsRequest(t, k, tt.method, tt.path, listedOrigin, "", "")
		expectNoCors(t, tt.method+" "+tt.path, r.Header)
		if v := r.Header.Values("Vary"); len(v) != 0 {
			t.Errorf("%s %s: Vary = %q, want none", tt.method, tt.path, v)
		}
	}
	r := corsRequest(t, k, "OPTIONS", "/api/v1/auth/login", listedOrigin, "", "", "Access-Control-Request-Method", "POST")
	if r.Status == 204 {
		t.Errorf("preflight without CORS configured: HTTP 204, want the router's answer")
	}
	expectNoCors(t, "preflight without CORS", r.Header)
}

// TestCorsRefusedAtStartup: the wildcard and entries that are not origins
// stop the kernel with the key named.
func TestCorsRefusedAtStartup(t *testing.T) {
	for _, tt := range []struct{ entry, want string }{
		{"*", `Api:Cors:AllowedOrigins:0 "*" is refused`},
		{"https://app.example.com/admin", "must not have a path"},
		{"app.example.com", "must start with http:// or https://"},
	} {
		t.Run(tt.entry, func(t *testing.T) {
			cfg, err := config.Load(config.LoadOptions{ContentRoot: t.TempDir(), Environment: config.Development,
				Environ: []string{"Api__Cors__AllowedOrigins__0=" + tt.entry}})
			if err != nil {
				t.Fatal(err)
			}
			k, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: io.Discard})
			if err == nil {
				_ = k.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("start with %q: %v, want an error containing %q", tt.entry, err, tt.want)
			}
		})
	}
}
