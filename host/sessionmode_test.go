package host_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// cookieClient is a browser's cookie jar in front of a test kernel: it
// sends the jar with every request and keeps the Set-Cookie lines of the
// answers (the last one of each name, with its attributes).
type cookieClient struct {
	*kerneltest.Jar
	k *kerneltest.Kernel
	// csrf, when true, echoes smart_csrf in X-Smart-CSRF (as the UI does).
	csrf bool
}

func newCookieClient(k *kerneltest.Kernel) *cookieClient {
	return &cookieClient{Jar: k.NewJar(), k: k, csrf: true}
}

func (c *cookieClient) send(method, target, token, body string, header ...string) kerneltest.Reply {
	c.k.T.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequestWithContext(c.k.T.Context(), method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequestWithContext(c.k.T.Context(), method, target, nil)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if v := c.Cookie("smart_csrf"); c.csrf && v != "" {
		req.Header.Set("X-Smart-CSRF", v)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	r := c.Send(req)
	return r
}

// loginOutput is the whole LoginOutput.
type loginOutput struct {
	AccessToken      string    `json:"accessToken"`
	ExpiresAt        time.Time `json:"expiresAt"`
	RefreshToken     string    `json:"refreshToken"`
	RefreshExpiresAt time.Time `json:"refreshExpiresAt"`
	UserID           int64     `json:"userId"`
	SessionMode      string    `json:"sessionMode"`
	CsrfRequired     bool      `json:"csrfRequired"`
}

func (c *cookieClient) login(account, pw string) loginOutput {
	c.k.T.Helper()
	var out loginOutput
	c.send("POST", "/api/v1/auth/login", "", `{"account":"`+account+`","password":"`+pw+`"}`).
		Expect(c.k.T, "login", 200, 0).Decode(c.k.T, &out)
	return out
}

// checkCookieMode checks a cookie-mode token response and the two cookies
// it set.
func checkCookieMode(t *testing.T, c *cookieClient, what string, out loginOutput, secure bool, sameSite http.SameSite, domain string) {
	t.Helper()
	if out.RefreshToken != "" || out.SessionMode != "cookie" || !out.CsrfRequired || out.AccessToken == "" {
		t.Errorf("%s: body refreshToken %q sessionMode %q csrfRequired %v, want \"\", cookie, true", what, out.RefreshToken, out.SessionMode, out.CsrfRequired)
	}
	for _, name := range []string{"smart_rt", "smart_csrf"} {
		ck := c.LastSet(name)
		if ck == nil {
			t.Fatalf("%s: no %s cookie set", what, name)
		}
		if ck.HttpOnly != (name == "smart_rt") || ck.Secure != secure || ck.Path != "/" || ck.SameSite != sameSite || ck.Domain != domain {
			t.Errorf("%s: %s HttpOnly=%v Secure=%v Path=%q SameSite=%v Domain=%q; want HttpOnly=%v Secure=%v Path=/ SameSite=%v Domain=%q",
				what, name, ck.HttpOnly, ck.Secure, ck.Path, ck.SameSite, ck.Domain, name == "smart_rt", secure, sameSite, domain)
		}
		// The cookies expire with the refresh token.
		if d := time.Duration(ck.MaxAge)*time.Second - time.Until(out.RefreshExpiresAt); d < -5*time.Second || d > 5*time.Second {
			t.Errorf("%s: %s Max-Age %d s, refresh token expires in %v", what, name, ck.MaxAge, time.Until(out.RefreshExpiresAt))
		}
	}
	if raw, err := base64.RawURLEncoding.DecodeString(c.Cookie("smart_csrf")); err != nil || len(raw) != 32 {
		t.Errorf("%s: smart_csrf %q is not 32 random bytes in base64url", what, c.Cookie("smart_csrf"))
	}
}

func TestCookieSessionMode(t *testing.T) {
	is := oidctest.New(t)
	is.AddUser(oidctest.User{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"})
	k := kerneltest.Start(t, []string{
		"Service__Security__Session__CookieMode=true",
		"Service__ExternalAuth__Oidc__0__Code=corp",
		"Service__ExternalAuth__Oidc__0__Authority=" + is.URL,
		"Service__ExternalAuth__Oidc__0__ClientId=" + is.ClientID,
		"Service__ExternalAuth__Oidc__0__ClientSecret=" + is.ClientSecret,
		"Service__ExternalAuth__Oidc__0__AccountClaim=preferred_username",
	})
	k.Leaks.Secrets = append(k.Leaks.Secrets, is.ClientSecret)
	const refreshPath = "/api/v1/auth/refresh"

	c := newCookieClient(k)
	out := c.login("superAdmin", kerneltest.AdminPassword)
	// Plain http, CallbackBaseUrl unset: no Secure (localhost development).
	checkCookieMode(t, c, "login", out, false, http.SameSiteLaxMode, "")
	k.Do("GET", "/api/v1/ping", out.AccessToken, nil).Expect(t, "ping", 200, 0)

	t.Run("refresh from the cookie needs the CSRF header", func(t *testing.T) {
		rt, csrf := c.Cookie("smart_rt"), c.Cookie("smart_csrf")
		c.csrf = false
		for _, tc := range []struct {
			name   string
			header []string
		}{
			{"no header", nil},
			{"wrong header", []string{"X-Smart-CSRF", strings.Repeat("A", len(csrf))}},
			{"empty header", []string{"X-Smart-CSRF", ""}},
			{"the refresh token as header", []string{"X-Smart-CSRF", rt}},
		} {
			c.send("POST", refreshPath, "", "", tc.header...).Expect(t, tc.name, 403, 40023)
		}
		// A state-changing request other than refresh, with a valid access
		// token: refused the same way; a read is not.
		c.send("PUT", "/api/v1/personal/profile", out.AccessToken, `{"name":"Admin"}`).Expect(t, "PUT without CSRF", 403, 40023)
		c.send("GET", "/api/v1/personal/profile", out.AccessToken, "").Expect(t, "GET without CSRF", 200, 0)
		// Without the csrf cookie the header matches nothing.
		c.SetCookie("smart_csrf", "")
		c.send("POST", refreshPath, "", "", "X-Smart-CSRF", "").Expect(t, "no csrf cookie", 403, 40023)
		c.SetCookie("smart_csrf", csrf)
		c.csrf = true
		if c.Cookie("smart_rt") != rt {
			t.Fatal("a refused refresh changed the refresh cookie")
		}
	})

	t.Run("refresh from the cookie rotates both cookies", func(t *testing.T) {
		for _, body := range []string{"", "{}", `{"refreshToken":""}`} {
			rt, csrf := c.Cookie("smart_rt"), c.Cookie("smart_csrf")
			var next loginOutput
			c.send("POST", refreshPath, "", body).Expect(t, "refresh with body "+body, 200, 0).Decode(t, &next)
			checkCookieMode(t, c, "refresh", next, false, http.SameSiteLaxMode, "")
			if c.Cookie("smart_rt") == rt || c.Cookie("smart_csrf") == csrf {
				t.Errorf("refresh with body %q did not rotate the cookies", body)
			}
			k.Do("GET", "/api/v1/ping", next.AccessToken, nil).Expect(t, "ping with the refreshed token", 200, 0)
			out = next
		}
	})

	t.Run("the body token comes first", func(t *testing.T) {
		// A refresh token in the body is used even with the cookie present:
		// a bogus one is refused although the cookie is valid.
		c.send("POST", refreshPath, "", `{"refreshToken":"bogus"}`).Expect(t, "bogus body token", 200, 40007)
	})

	t.Run("a POST without the refresh cookie needs no CSRF header", func(t *testing.T) {
		fresh := newCookieClient(k)
		fresh.csrf = false
		fresh.login("superAdmin", kerneltest.AdminPassword)
		// Body mode clients of a cookie-mode kernel (no cookies) are not
		// affected either.
		k.Do("POST", refreshPath, "", map[string]string{"refreshToken": "x"}).Expect(t, "refresh without cookie", 200, 40007)
	})

	t.Run("the external exchange sets the cookies", func(t *testing.T) {
		if err := k.Settings().Set(context.Background(), "sys.externalauth.corp.provisioning", "PROVISION"); err != nil {
			t.Fatal(err)
		}
		b := newCookieClient(k)
		r := b.send("GET", "/api/v1/auth/external/corp/authorize", "", "")
		if r.Status != http.StatusFound {
			t.Fatalf("authorize = HTTP %d %s", r.Status, r.Raw)
		}
		cb := is.Login(t, r.Header.Get("Location"), "bob")
		r = b.send("GET", oidctest.Callback(cb), "", "")
		res, err := url.Parse(r.Header.Get("Location"))
		if r.Status != http.StatusFound || err != nil || res.Query().Get("ticket") == "" {
			t.Fatalf("callback = HTTP %d %s, want a redirect with a ticket", r.Status, r.Header.Get("Location"))
		}
		var tk loginOutput
		b.send("POST", "/api/v1/auth/external/exchange", "", `{"ticket":"`+res.Query().Get("ticket")+`"}`).
			Expect(t, "exchange", 200, 0).Decode(t, &tk)
		checkCookieMode(t, b, "exchange", tk, false, http.SameSiteLaxMode, "")
		var next loginOutput
		b.send("POST", refreshPath, "", "").Expect(t, "refresh after SSO", 200, 0).Decode(t, &next)
		if next.UserID != tk.UserID {
			t.Errorf("refresh after SSO signed in user %d, want %d", next.UserID, tk.UserID)
		}
	})

	t.Run("logout clears both cookies", func(t *testing.T) {
		c.send("POST", "/api/v1/auth/logout", out.AccessToken, "").Expect(t, "logout", 200, 0)
		for _, name := range []string{"smart_rt", "smart_csrf"} {
			if ck := c.LastSet(name); ck == nil || ck.MaxAge >= 0 || ck.Path != "/" {
				t.Errorf("logout: %s cookie %+v, want cleared on Path=/", name, ck)
			}
			if c.Cookie(name) != "" {
				t.Errorf("logout: %s still in the jar", name)
			}
		}
		c.send("POST", refreshPath, "", "").Expect(t, "refresh after logout", 200, 40007)
		k.Do("GET", "/api/v1/ping", out.AccessToken, nil).Expect(t, "ping after logout", 401, 40006)
	})
}

func TestCookieSessionModeAttributes(t *testing.T) {
	tests := []struct {
		name     string
		environ  []string
		header   []string
		sameSite http.SameSite
		domain   string
	}{
		{
			name:     "https CallbackBaseUrl: Secure",
			environ:  []string{"Service__ExternalAuth__CallbackBaseUrl=https://admin.example.com"},
			sameSite: http.SameSiteLaxMode,
		},
		{
			name: "CookieDomain: SameSite=None, Domain and Secure",
			environ: []string{
				"Service__ExternalAuth__CallbackBaseUrl=https://api.example.com",
				"Service__Security__Session__CookieDomain=example.com",
			},
			sameSite: http.SameSiteNoneMode,
			domain:   "example.com",
		},
		{
			name:     "https through a trusted proxy: Secure",
			environ:  []string{"Service__Http__TrustedProxies__0=0.0.0.0/0"},
			header:   []string{"X-Forwarded-Proto", "https"},
			sameSite: http.SameSiteLaxMode,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := kerneltest.Start(t, append([]string{"Service__Security__Session__CookieMode=true"}, tt.environ...))
			c := newCookieClient(k)
			var out loginOutput
			c.send("POST", "/api/v1/auth/login", "", `{"account":"superAdmin","password":"`+kerneltest.AdminPassword+`"}`, tt.header...).
				Expect(t, "login", 200, 0).Decode(t, &out)
			checkCookieMode(t, c, "login", out, true, tt.sameSite, tt.domain)
		})
	}
}

func TestBodySessionMode(t *testing.T) {
	k := kerneltest.Start(t, nil)
	c := newCookieClient(k)
	out := c.login("superAdmin", kerneltest.AdminPassword)
	if out.RefreshToken == "" || out.SessionMode != "body" || out.CsrfRequired {
		t.Errorf("body mode: refreshToken %q sessionMode %q csrfRequired %v", out.RefreshToken, out.SessionMode, out.CsrfRequired)
	}
	if n := c.SetCount(); n != 0 {
		t.Errorf("body mode set %d cookies", n)
	}
	// A stray smart_rt cookie means nothing in body mode: no CSRF check,
	// and refresh does not read it.
	c.csrf = false
	c.SetCookie("smart_rt", out.RefreshToken)
	c.send("PUT", "/api/v1/personal/profile", out.AccessToken, `{"name":"Admin"}`).Expect(t, "PUT with a stray cookie", 200, 0)
	c.send("POST", "/api/v1/auth/refresh", "", "").Expect(t, "refresh from a cookie in body mode", 200, 40007)
	var next loginOutput
	c.send("POST", "/api/v1/auth/refresh", "", `{"refreshToken":"`+out.RefreshToken+`"}`).Expect(t, "refresh", 200, 0).Decode(t, &next)
	if next.RefreshToken == "" || next.SessionMode != "body" {
		t.Errorf("body mode refresh: %+v", next)
	}
}

func TestSingleSessionMode(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Security__Session__Mode=Single"})
	pw := "Single#Pass1234"
	k.User("solo", pw, "GET:/api/v1/ping")
	first := k.Login("solo", pw)
	k.Do("GET", "/api/v1/ping", first.AccessToken, nil).Expect(t, "first session ping", 200, 0)
	second := k.Login("solo", pw)
	k.Do("GET", "/api/v1/ping", first.AccessToken, nil).Expect(t, "first session after the second login", 401, 40006)
	if _, r := refresh(k, first.RefreshToken); r.Code != 40007 {
		t.Fatalf("refresh of the first session = %d %s, want 40007", r.Code, r.Raw)
	}
	k.Do("GET", "/api/v1/ping", second.AccessToken, nil).Expect(t, "second session ping", 200, 0)
	// Another user's session is not affected.
	admin := k.Admin()
	k.Login("solo", pw)
	k.Do("GET", "/api/v1/ping", second.AccessToken, nil).Expect(t, "second session after the third login", 401, 40006)
	k.Do("GET", "/api/v1/ping", admin, nil).Expect(t, "admin ping", 200, 0)
}

// testClock is a settable clock for the kernel's sessions.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func TestIdleSessionTimeout(t *testing.T) {
	clk := &testClock{}
	k := kerneltest.StartWith(t, kerneltest.Options{
		Environ:      []string{"Service__Security__Session__IdleMinutesNormal=2"}, // touch interval 30 s
		SessionClock: clk.Now,
	})
	pw := "Idle#Pass12345"
	k.User("idler", pw, "GET:/api/v1/ping")

	busy := k.Login("idler", pw)
	idle := k.Login("idler", pw)
	// busy makes a request every 50 s for 5 minutes; idle makes none.
	for range 6 {
		clk.Advance(50 * time.Second)
		k.Do("GET", "/api/v1/ping", busy.AccessToken, nil).Expect(t, "ping of a session in use", 200, 0)
	}
	k.Do("GET", "/api/v1/ping", idle.AccessToken, nil).Expect(t, "ping of an idle session", 401, 40006)
	if _, r := refresh(k, idle.RefreshToken); r.Code != 40007 {
		t.Fatalf("refresh of an idle session = %d %s, want 40007", r.Code, r.Raw)
	}
	next, r := refresh(k, busy.RefreshToken)
	r.Expect(t, "refresh of the session in use", 200, 0)
	// Unused for longer than 2 minutes: its next request is refused and
	// no refresh revives it.
	clk.Advance(2*time.Minute + time.Second)
	k.Do("GET", "/api/v1/ping", next.AccessToken, nil).Expect(t, "ping after 2 idle minutes", 401, 40006)
	if _, r := refresh(k, next.RefreshToken); r.Code != 40007 {
		t.Fatalf("refresh after the idle timeout = %d %s, want 40007", r.Code, r.Raw)
	}
}

func TestAbsoluteSessionLifetime(t *testing.T) {
	clk := &testClock{}
	k := kerneltest.StartWith(t, kerneltest.Options{
		Environ:      []string{"Service__Security__Session__AbsoluteHours=1"},
		SessionClock: clk.Now,
	})
	pw := "Absolute#Pass12"
	k.User("finite", pw, "GET:/api/v1/ping")
	c := newCookieClient(k)
	out := c.login("finite", pw)
	// refreshMinutes is 7 days by default: the session (and its access
	// token) end an hour after login.
	if d := time.Until(out.RefreshExpiresAt); d > time.Hour || d < 59*time.Minute {
		t.Errorf("refreshExpiresAt in %v, want 1 h", d)
	}
	if out.ExpiresAt.After(out.RefreshExpiresAt) {
		t.Errorf("the access token (expires %v) outlives its session (ends %v)", out.ExpiresAt, out.RefreshExpiresAt)
	}
	clk.Advance(59 * time.Minute)
	k.Do("GET", "/api/v1/ping", out.AccessToken, nil).Expect(t, "ping before the end", 200, 0)
	next, r := refresh(k, out.RefreshToken)
	r.Expect(t, "refresh before the end", 200, 0)
	clk.Advance(time.Minute + time.Second)
	k.Do("GET", "/api/v1/ping", next.AccessToken, nil).Expect(t, "ping after the end", 401, 40006)
	if _, r := refresh(k, next.RefreshToken); r.Code != 40007 {
		t.Fatalf("refresh after the absolute end = %d %s, want 40007", r.Code, r.Raw)
	}
}
