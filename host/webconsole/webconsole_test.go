package webconsole_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/console"
	"github.com/adminkernel/kernel/host/webconsole"
)

const indexHTML = `<!doctype html><script type="module" src="/assets/index-abc123.js"></script>`

func app(t *testing.T) *fiber.App {
	t.Helper()
	h, err := webconsole.Handler(fstest.MapFS{
		"index.html":              {Data: []byte(indexHTML)},
		"assets/index-abc123.js":  {Data: []byte("console.log(1)")},
		"assets/index-abc123.css": {Data: []byte("body{}")},
		"favicon.svg":             {Data: []byte("<svg/>")},
	})
	if err != nil {
		t.Fatal(err)
	}
	a := fiber.New()
	a.Use(h)
	a.Use(func(c fiber.Ctx) error { return c.Status(http.StatusNotFound).SendString("next") })
	return a
}

func TestServingRules(t *testing.T) {
	a := app(t)
	cases := []struct {
		name, method, path string
		status             int
		body, cache, ctype string
	}{
		{"root is the index", "GET", "/", 200, indexHTML, webconsole.NoCache, "text/html"},
		{"the index by name", "GET", "/index.html", 200, indexHTML, webconsole.NoCache, "text/html"},
		{"a page path falls back to the index", "GET", "/personal/sessions", 200, indexHTML, webconsole.NoCache, "text/html"},
		{"the SSO result page is the console's", "GET", "/oauth/callback?ticket=abc", 200, indexHTML, webconsole.NoCache, "text/html"},
		{"HEAD of a page", "HEAD", "/login", 200, "", webconsole.NoCache, "text/html"},
		{"a hashed asset is immutable", "GET", "/assets/index-abc123.js", 200, "console.log(1)", webconsole.Immutable, "javascript"},
		{"a stylesheet", "GET", "/assets/index-abc123.css", 200, "body{}", webconsole.Immutable, "text/css"},
		{"a root file is revalidated", "GET", "/favicon.svg", 200, "<svg/>", webconsole.NoCache, "image/svg+xml"},
		{"a missing asset is no page", "GET", "/assets/index-zzz.js", 404, "next", "", ""},
		{"a missing file with an extension is no page", "GET", "/robots.txt", 404, "next", "", ""},
		{"an unknown API path passes on", "GET", "/api/v1/nothing", 404, "next", "", ""},
		{"the API root passes on", "GET", "/api", 404, "next", "", ""},
		{"health passes on", "GET", "/health/ready", 404, "next", "", ""},
		{"the contract document passes on", "GET", "/openapi/v1.json", 404, "next", "", ""},
		{"swagger passes on", "GET", "/swagger/index.html", 404, "next", "", ""},
		{"upper case reserved paths pass on", "GET", "/API/v1/x", 404, "next", "", ""},
		{"other methods pass on", "POST", "/login", 404, "next", "", ""},
		{"DELETE of the root passes on", "DELETE", "/", 404, "next", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := a.Test(httptest.NewRequest(tc.method, tc.path, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || string(body) != tc.body {
				t.Fatalf("%s %s = %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.body)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if tc.status != 200 {
				if csp != "" {
					t.Fatalf("a passed-on request got the console's CSP %q", csp)
				}
				return
			}
			if csp != webconsole.CSP {
				t.Fatalf("CSP = %q", csp)
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cache {
				t.Fatalf("Cache-Control = %q, want %q", got, tc.cache)
			}
			if got := resp.Header.Get("Content-Type"); !strings.Contains(got, tc.ctype) {
				t.Fatalf("Content-Type = %q, want %q", got, tc.ctype)
			}
		})
	}
}

func TestCSPIsStrict(t *testing.T) {
	for _, want := range []string{"script-src 'self';", "style-src 'self';", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'"} {
		if !strings.Contains(webconsole.CSP, want) {
			t.Errorf("CSP lacks %q: %s", want, webconsole.CSP)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*"} {
		if strings.Contains(webconsole.CSP, bad) {
			t.Errorf("CSP allows %q: %s", bad, webconsole.CSP)
		}
	}
}

func TestHandlerNeedsAnIndex(t *testing.T) {
	if _, err := webconsole.Handler(fstest.MapFS{"assets/a.js": {Data: []byte("x")}}); err == nil {
		t.Fatal("a build without index.html was accepted")
	}
}

// The committed build: an index without inline scripts whose every
// referenced asset is embedded.
func TestEmbeddedBuild(t *testing.T) {
	h, err := webconsole.Handler(console.Dist())
	if err != nil {
		t.Fatal(err)
	}
	a := fiber.New()
	a.Use(h)
	resp, err := a.Test(httptest.NewRequest("GET", "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	html := string(body)
	if resp.StatusCode != 200 || !strings.Contains(html, `<div id="app">`) {
		t.Fatalf("GET / = %d %q", resp.StatusCode, html)
	}
	refs := 0
	for _, part := range strings.Split(html, `"/assets/`)[1:] {
		name := "/assets/" + part[:strings.IndexByte(part, '"')]
		refs++
		r, err := a.Test(httptest.NewRequest("GET", name, nil))
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		if r.StatusCode != 200 || r.Header.Get("Cache-Control") != webconsole.Immutable {
			t.Fatalf("%s = %d %q", name, r.StatusCode, r.Header.Get("Cache-Control"))
		}
	}
	if refs == 0 {
		t.Fatal("the index references no asset")
	}
	for _, inline := range []string{"<script>", "<script type=\"module\">", " on" + "load=", "<style"} {
		if strings.Contains(html, inline) {
			t.Fatalf("the index has inline code (%q), which the CSP refuses", inline)
		}
	}
}

func TestFallback(t *testing.T) {
	for p, want := range map[string]bool{"/": true, "/login": true, "/mfa/bind": true, "/a.b/c": true, "/api/v1": false, "/apix": false, "/healthz": false, "/x/y.json": false, "": false, "login": false} {
		if got := webconsole.Fallback(p); got != want {
			t.Errorf("Fallback(%q) = %v, want %v", p, got, want)
		}
	}
}
