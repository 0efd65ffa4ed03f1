package cors

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/valyala/fasthttp"

	"github.com/adminkernel/kernel/internal/race"
)

func TestMatcher(t *testing.T) {
	// Entries are normalised: case, default port, trailing slash.
	m, err := NewMatcher([]string{"HTTPS://App.Example.com:443/", "http://localhost:5173", "http://[::1]:8080"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		origin string
		listed bool
	}{
		{"https://app.example.com", true},
		{"HTTPS://APP.EXAMPLE.COM", true},
		{"https://App.Example.com", true},
		{"http://localhost:5173", true},
		{"http://[::1]:8080", true},
		{"", false},
		{"null", false},
		{"http://app.example.com", false},
		{"https://app.example.com:443", false}, // browsers never send the default port
		{"https://app.example.com/", false},
		{"https://app.example.com.evil.example", false},
		{"https://evil.app.example.com", false},
		{"https://app.example.co", false},
		{"http://localhost:5174", false},
		{"http://localhost", false},
		{"https://app.example.com\x00", false},
		{strings.Repeat("a", maxOriginLen+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			if got := m.Listed([]byte(tt.origin)); got != tt.listed {
				t.Errorf("Listed(%q) = %v, want %v", tt.origin, got, tt.listed)
			}
		})
	}
}

func TestNewMatcherRefuses(t *testing.T) {
	for _, tt := range []struct {
		name    string
		origins []string
	}{
		{"wildcard", []string{"https://a.example", "*"}},
		{"wildcard subdomain", []string{"https://*.a.example"}},
		{"empty", []string{""}},
		{"a path", []string{"https://a.example/app"}},
		{"no scheme", []string{"a.example"}},
		{"too long", []string{"https://" + strings.Repeat("a", maxOriginLen)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.origins); err == nil {
				t.Fatalf("New(%q) succeeded", tt.origins)
			}
		})
	}
}

// app is a bare Fiber app with the middleware and two routes: one that
// answers, one that fails (the error handler writes the answer).
func app(t *testing.T, origins ...string) *fiber.App {
	t.Helper()
	h, err := New(origins)
	if err != nil {
		t.Fatal(err)
	}
	a := fiber.New(fiber.Config{ErrorHandler: func(c fiber.Ctx, err error) error {
		code := fiber.StatusInternalServerError
		var fe *fiber.Error
		if errors.As(err, &fe) {
			code = fe.Code
		}
		return c.Status(code).SendString("error")
	}})
	a.Use(h)
	a.Get("/ok", func(c fiber.Ctx) error { return c.SendString("ok") })
	a.Post("/ok", func(c fiber.Ctx) error { return c.SendString("ok") })
	a.Get("/fail", func(fiber.Ctx) error { return fiber.ErrUnauthorized })
	return a
}

// do sends a request and returns the status and headers of the answer.
func do(t *testing.T, a *fiber.App, method, path string, headers ...string) (int, http.Header) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := a.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header
}

func TestMiddleware(t *testing.T) {
	a := app(t, "https://app.example.com")
	const listed, unlisted = "https://app.example.com", "https://evil.example"
	preflight := []string{"Access-Control-Request-Method", "POST"}
	tests := []struct {
		name    string
		method  string
		path    string
		headers []string
		status  int
		want    map[string]string // "" = absent
	}{
		{
			name: "listed GET", method: "GET", path: "/ok", headers: []string{"Origin", listed}, status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true",
				"Access-Control-Expose-Headers": ExposeHeaders, "Vary": "Origin", "Access-Control-Allow-Methods": ""},
		},
		{
			name: "listed POST", method: "POST", path: "/ok", headers: []string{"Origin", listed}, status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true", "Vary": "Origin"},
		},
		{
			name: "listed error answer", method: "GET", path: "/fail", headers: []string{"Origin", listed}, status: 401,
			want: map[string]string{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true", "Vary": "Origin"},
		},
		{
			name: "listed unmatched route", method: "GET", path: "/nowhere", headers: []string{"Origin", listed}, status: 404,
			want: map[string]string{"Access-Control-Allow-Origin": listed, "Vary": "Origin"},
		},
		{
			name: "unlisted GET", method: "GET", path: "/ok", headers: []string{"Origin", unlisted}, status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Credentials": "",
				"Access-Control-Expose-Headers": "", "Vary": "Origin"},
		},
		{
			name: "no Origin", method: "GET", path: "/ok", status: 200,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"},
		},
		{
			name: "listed preflight", method: "OPTIONS", path: "/nowhere", headers: append([]string{"Origin", listed}, preflight...), status: 204,
			want: map[string]string{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true",
				"Access-Control-Allow-Methods": AllowMethods, "Access-Control-Allow-Headers": AllowHeaders,
				"Access-Control-Max-Age": MaxAge, "Vary": VaryPreflight},
		},
		{
			name: "unlisted preflight", method: "OPTIONS", path: "/ok", headers: append([]string{"Origin", unlisted}, preflight...), status: 204,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "",
				"Access-Control-Allow-Headers": "", "Access-Control-Max-Age": "", "Vary": VaryPreflight},
		},
		{
			name: "OPTIONS without a request method is routed", method: "OPTIONS", path: "/ok", headers: []string{"Origin", listed}, status: 405,
			want: map[string]string{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Methods": "", "Vary": "Origin"},
		},
		{
			name: "OPTIONS with a request method but no Origin is routed", method: "OPTIONS", path: "/ok", headers: preflight, status: 405,
			want: map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header := do(t, a, tt.method, tt.path, tt.headers...)
			if status != tt.status {
				t.Fatalf("HTTP %d, want %d", status, tt.status)
			}
			for k, v := range tt.want {
				got := header.Values(k)
				if (v == "" && len(got) != 0) || (v != "" && (len(got) != 1 || got[0] != v)) {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestNoOrigins(t *testing.T) {
	a := app(t)
	status, header := do(t, a, "OPTIONS", "/ok", "Origin", "https://app.example.com", "Access-Control-Request-Method", "GET")
	if status != 405 {
		t.Errorf("preflight with no origins listed: HTTP %d, want the router's 405", status)
	}
	for _, k := range []string{"Vary", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods"} {
		if v := header.Values(k); len(v) != 0 {
			t.Errorf("%s = %q, want none", k, v)
		}
	}
}

// TestMiddlewareDoesNotAllocate: the middleware adds no allocation to a request, listed
// or not, preflight or not (compared with the same app without it).
func TestMiddlewareDoesNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are checked without -race (make test runs this again without it)")
	}
	bare := fiber.New()
	bare.Get("/ok", func(c fiber.Ctx) error { return c.SendStatus(200) })
	bare.Options("/ok", func(c fiber.Ctx) error { return c.SendStatus(204) })
	with := fiber.New()
	h, err := New([]string{"https://app.example.com", "http://localhost:5173"})
	if err != nil {
		t.Fatal(err)
	}
	with.Use(h)
	with.Get("/ok", func(c fiber.Ctx) error { return c.SendStatus(200) })
	allocs := func(a *fiber.App, method, origin string, preflight bool) float64 {
		handler := a.Handler()
		var ctx fasthttp.RequestCtx
		return testing.AllocsPerRun(200, func() {
			ctx.Request.Reset()
			ctx.Response.Reset()
			ctx.Request.Header.SetMethod(method)
			ctx.Request.SetRequestURI("/ok")
			if origin != "" {
				ctx.Request.Header.Set("Origin", origin)
			}
			if preflight {
				ctx.Request.Header.Set("Access-Control-Request-Method", "GET")
			}
			handler(&ctx)
		})
	}
	for _, tt := range []struct {
		name, method, origin string
		preflight            bool
	}{
		{"no origin", "GET", "", false},
		{"listed", "GET", "https://App.Example.com", false},
		{"unlisted", "GET", "https://evil.example", false},
		{"listed preflight", "OPTIONS", "https://app.example.com", true},
		{"unlisted preflight", "OPTIONS", "https://evil.example", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := allocs(bare, tt.method, tt.origin, tt.preflight)
			got := allocs(with, tt.method, tt.origin, tt.preflight)
			if got > base {
				t.Errorf("%v allocations per request with the middleware, %v without", got, base)
			}
		})
	}
}
