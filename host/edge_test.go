package host_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// baseline is what every answer carries.
var baseline = map[string]string{
	"X-Content-Type-Options":  "nosniff",
	"X-Frame-Options":         "DENY",
	"Content-Security-Policy": "frame-ancestors 'none'",
	"Referrer-Policy":         "no-referrer",
}

// raw sends a request built by the test and returns the status and headers
// (the body need not be an envelope: /health answers plain JSON).
func raw(t *testing.T, k *kerneltest.Kernel, method, path, token, contentType, body string) (int, http.Header, string) {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
	} else {
		req = httptest.NewRequestWithContext(t.Context(), method, path, nil)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := k.App().Test(req)
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
	return resp.StatusCode, resp.Header, b.String()
}

func TestSecurityHeaders(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	tests := []struct {
		name, method, path, token, body string
		status                          int
		noStore                         bool
	}{
		{name: "health", method: "GET", path: "/health", status: 200},
		{name: "readiness", method: "GET", path: "/health/ready", status: 200, noStore: true},
		{name: "404", method: "GET", path: "/api/v1/no/such/route", status: 404},
		{name: "405", method: "DELETE", path: "/api/v1/auth/login", status: 405, noStore: true},
		{name: "anonymous success", method: "GET", path: "/api/v1/meta/error-codes", status: 200},
		{name: "401 without a token", method: "GET", path: "/api/v1/ping", status: 401},
		{name: "authenticated ping", method: "GET", path: "/api/v1/ping", token: admin, status: 200, noStore: true},
		{name: "authenticated 404", method: "GET", path: "/api/v1/no/such/route", token: admin, status: 404, noStore: true},
		{name: "bad bearer", method: "GET", path: "/api/v1/ping", token: "not-a-token", status: 401, noStore: true},
		{name: "auth error", method: "POST", path: "/api/v1/auth/login", body: `{"account":"superAdmin","password":"wrong"}`, status: 200, noStore: true},
		{name: "auth captcha", method: "GET", path: "/api/v1/auth/captcha", status: 200, noStore: true},
		{name: "auth path in other case", method: "GET", path: "/API/V1/AUTH/captcha", status: 200, noStore: true},
		{name: "contract document", method: "GET", path: "/openapi/v1.json", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := ""
			if tt.body != "" {
				ct = "application/json"
			}
			status, h, body := raw(t, k, tt.method, tt.path, tt.token, ct, tt.body)
			if status != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", status, tt.status, body)
			}
			for name, want := range baseline {
				if got := h.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("%s = %q, want exactly %q", name, got, want)
				}
			}
			if got := h.Get("Strict-Transport-Security"); got != "" {
				t.Errorf("Strict-Transport-Security = %q without an https public base URL", got)
			}
			if got := h.Get("Cache-Control"); tt.noStore && got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			} else if !tt.noStore && got != "" {
				t.Errorf("Cache-Control = %q on an anonymous answer outside /api/v1/auth, want none", got)
			}
		})
	}
}

func TestStrictTransportSecurity(t *testing.T) {
	for _, tt := range []struct {
		base, want string
	}{
		{"https://admin.example/backend", "max-age=31536000"},
		{"http://localhost:5100", ""},
	} {
		t.Run(tt.base, func(t *testing.T) {
			k := kerneltest.Start(t, []string{"Service__ExternalAuth__CallbackBaseUrl=" + tt.base})
			for _, path := range []string{"/health", "/api/v1/no/such/route"} {
				_, h, _ := raw(t, k, "GET", path, "", "", "")
				if got := h.Get("Strict-Transport-Security"); got != tt.want {
					t.Errorf("GET %s: Strict-Transport-Security = %q, want %q", path, got, tt.want)
				}
			}
		})
	}
}

func TestWrongMethodIs405(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	tests := []struct {
		name, method, path string
		status             int
		code               errcode.Code
		allow              []string
	}{
		{"wrong method on login", "GET", "/api/v1/auth/login", 405, errcode.MethodNotAllowed, []string{"POST"}},
		{"wrong method on a path with a parameter", "PUT", "/api/v1/personal/sessions/123", 405, errcode.MethodNotAllowed, []string{"DELETE"}},
		{"wrong method on ping", "POST", "/api/v1/ping", 405, errcode.MethodNotAllowed, []string{"GET"}},
		{"unknown path", "GET", "/api/v1/no/such/route", 404, errcode.RouteNotFound, nil},
		{"unknown path, other method", "DELETE", "/api/v1/no/such/route", 404, errcode.RouteNotFound, nil},
		// GET of a page path outside the API is the console's (history-mode
		// fallback, host/console_test.go); a file it does not have and any
		// other method are the kernel's 404.
		{"outside the API", "GET", "/nothing-here.txt", 404, errcode.RouteNotFound, nil},
		{"outside the API, other method", "DELETE", "/nothing-here", 404, errcode.RouteNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, token := range []string{"", admin} {
				r := k.Do(tt.method, tt.path, token, nil)
				r.Expect(t, tt.method+" "+tt.path, tt.status, int(tt.code))
				allow := strings.Split(strings.Join(r.Header.Values("Allow"), ","), ",")
				for i := range allow {
					allow[i] = strings.TrimSpace(allow[i])
				}
				for _, m := range tt.allow {
					if !slices.Contains(allow, m) {
						t.Errorf("Allow = %q, want it to list %s", r.Header.Values("Allow"), m)
					}
				}
				if tt.allow == nil && len(r.Header.Values("Allow")) > 0 {
					t.Errorf("Allow = %q on a 404", r.Header.Values("Allow"))
				}
			}
		})
	}
}

func TestJSONBodyNeedsJSONContentType(t *testing.T) {
	k := kerneltest.Start(t, nil)
	login := `{"account":"superAdmin","password":"` + kerneltest.AdminPassword + `"}`
	tests := []struct {
		name, contentType, body string
		status                  int
		code                    errcode.Code
	}{
		{"text/plain", "text/plain", login, 415, errcode.UnsupportedMediaType},
		{"text/plain with charset", "text/plain;charset=UTF-8", login, 415, errcode.UnsupportedMediaType},
		{"form", "application/x-www-form-urlencoded", login, 415, errcode.UnsupportedMediaType},
		{"xml", "application/xml", login, 415, errcode.UnsupportedMediaType},
		{"no Content-Type", "", login, 415, errcode.UnsupportedMediaType},
		{"json lookalike", "application/jsonp", login, 415, errcode.UnsupportedMediaType},
		{"application/json", "application/json", login, 200, errcode.Success},
		{"json with charset", "application/json;charset=utf-8", login, 200, errcode.Success},
		{"json, other case and blanks", "Application/JSON ; charset=UTF-8", login, 200, errcode.Success},
		{"+json suffix", "application/vnd.adminkernel+json", login, 200, errcode.Success},
		{"empty body stays 48002", "text/plain", "", 400, errcode.RequestInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/auth/login", strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			r := k.Send(req)
			r.Expect(t, "login with "+tt.contentType, tt.status, int(tt.code))
		})
	}
	t.Run("empty-body POST (logout) is unaffected", func(t *testing.T) {
		tok := k.Login("superAdmin", kerneltest.AdminPassword)
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/auth/logout", nil)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		k.Send(req).Expect(t, "logout", 200, 0)
	})
}

// A body over Service:Http:BodyLimitBytes is refused by fasthttp before any
// handler runs (App().Test cannot send one): the 413 of a real listener
// carries the headers too.
func TestSecurityHeadersOn413(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Http__BodyLimitBytes=1024"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.ServeListener(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	}()
	body := `{"account":"` + strings.Repeat("a", 2048) + `"}`
	req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+ln.Addr().String()+"/api/v1/auth/login", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("HTTP %d, want 413", resp.StatusCode)
	}
	for name, want := range baseline {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q on an /api/v1/auth answer, want no-store", got)
	}
}
