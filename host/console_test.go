//go:build !unit

package host_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/webconsole"
)

// consoleRaw is an answer whose body is no envelope.
type consoleRaw struct {
	StatusCode int
	Header     http.Header
}

func rawGet(t *testing.T, k *kerneltest.Kernel, method, path string) (consoleRaw, string) {
	t.Helper()
	resp, err := k.App().Test(httptest.NewRequestWithContext(t.Context(), method, path, nil), fiber.TestConfig{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return consoleRaw{StatusCode: resp.StatusCode, Header: resp.Header}, string(body)
}

// The kernel serves the embedded console at / with its CSP, falls back to
// the index for page paths (the SSO result page included), and keeps the
// API's 404 and 405 envelopes.
func TestConsoleServedByTheKernel(t *testing.T) {
	k := kerneltest.Start(t, nil)
	for _, p := range []string{"/", "/login", "/oauth/callback?ticket=abc", "/personal/sessions"} {
		resp, body := rawGet(t, k, "GET", p)
		if resp.StatusCode != 200 || !strings.Contains(body, `<div id="app">`) {
			t.Fatalf("GET %s = %d %.120q", p, resp.StatusCode, body)
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != webconsole.CSP {
			t.Fatalf("GET %s CSP = %q", p, got)
		}
		if got := resp.Header.Get("Cache-Control"); got != webconsole.NoCache {
			t.Fatalf("GET %s Cache-Control = %q", p, got)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s lost the baseline security headers: %v", p, resp.Header)
		}
	}
	k.Do("GET", "/api/v1/no/such/route", "", nil).Expect(t, "an unknown API path", 404, 48003)
	k.Do("GET", "/api/v1/auth/nothing", "", nil).Expect(t, "an unknown auth path", 404, 48003)
	k.Do("GET", "/assets/missing-123.js", "", nil).Expect(t, "a missing asset", 404, 48003)
	k.Do("POST", "/login", "", nil).Expect(t, "POST to a page path", 404, 48003)
	k.Do("GET", "/api/v1/auth/login", "", nil).Expect(t, "GET of a POST route", 405, 48004)
	if resp, body := rawGet(t, k, "GET", "/health"); resp.StatusCode != 200 || !strings.Contains(body, "Healthy") {
		t.Fatalf("GET /health = %d %s", resp.StatusCode, body)
	}
	k.Do("GET", "/api/v1/sys/config/site", "", nil).Expect(t, "the anonymous site info", 200, 0)
}

// Api:DisabledModules containing Console (any case) removes it: / is the
// kernel's 404 envelope.
func TestConsoleDisabled(t *testing.T) {
	k := kerneltest.Start(t, []string{"Api__DisabledModules__0=console"})
	k.Do("GET", "/", "", nil).Expect(t, "GET / without the console", 404, 48003)
	k.Do("GET", "/oauth/callback?ticket=x", "", nil).Expect(t, "the result page without the console", 404, 48003)
	k.Do("GET", "/api/v1/sys/config/site", "", nil).Expect(t, "the API stays", 200, 0)
}

// Options.Console replaces the embedded console with an application's own
// build (same CSP and fallback); one without index.html stops the start.
func TestConsoleOfTheApplication(t *testing.T) {
	own := fstest.MapFS{
		"index.html":       {Data: []byte(`<!doctype html><div id="app">my-own-console</div>`)},
		"assets/app-1.js":  {Data: []byte(`console.log(1)`)},
		"assets/app-1.css": {Data: []byte(`body{}`)},
	}
	k := kerneltest.StartWith(t, kerneltest.Options{Host: func(o *host.Options) { o.Console = own }})
	for _, p := range []string{"/", "/r/inventory-product"} {
		resp, body := rawGet(t, k, "GET", p)
		if resp.StatusCode != 200 || !strings.Contains(body, "my-own-console") || resp.Header.Get("Content-Security-Policy") != webconsole.CSP {
			t.Fatalf("GET %s = %d %.120q", p, resp.StatusCode, body)
		}
	}
	if resp, body := rawGet(t, k, "GET", "/assets/app-1.js"); resp.StatusCode != 200 || body != "console.log(1)" {
		t.Fatalf("GET the application's asset = %d %q", resp.StatusCode, body)
	}
	cfg := kerneltest.Config(t, nil)
	_, err := host.New(t.Context(), host.Options{Config: cfg, LogOutput: io.Discard, Console: fstest.MapFS{"app.js": {Data: []byte("x")}}})
	if err == nil || !strings.Contains(err.Error(), "index.html") {
		t.Fatalf("a console without index.html: %v", err)
	}
}
