//go:build !unit

package replicatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	adminPassword = "Adm1n#Passw0rd"
	external      = "/api/v1/auth/external"
	userAgent     = "Mozilla/5.0 (replicatest)"
)

// reply is one HTTP answer with its envelope decoded (when it is one).
type reply struct {
	Status int             `json:"-"`
	Header http.Header     `json:"-"`
	Raw    string          `json:"-"`
	Code   int             `json:"code"`
	MsgKey string          `json:"msgKey"`
	Data   json.RawMessage `json:"data"`
}

func (r reply) expect(t testing.TB, what string, status, code int) reply {
	t.Helper()
	if r.Status != status || r.Code != code {
		t.Fatalf("%s = HTTP %d code %d, want HTTP %d code %d (%s)", what, r.Status, r.Code, status, code, r.Raw)
	}
	return r
}

func (r reply) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Data, err)
	}
}

// browser is an HTTP client with one cookie jar, as a browser behind a
// load balancer: cookies of 127.0.0.1 go to every replica (cookies do not
// depend on the port). It never follows redirects.
type browser struct {
	t    testing.TB
	http *http.Client
}

func newBrowser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, http: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends a request to an absolute URL; body is JSON-encoded unless nil.
func (b *browser) do(method, target, token string, body any) reply {
	b.t.Helper()
	r, err := b.try(method, target, token, body)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	return r
}

// try is do without failing the test (for requests from goroutines).
func (b *browser) try(method, target, token string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r); err != nil {
			return r, fmt.Errorf("body %q: %w", raw, err)
		}
	}
	return r, nil
}

type tokens struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	UserID       int64  `json:"userId"`
}

func (b *browser) login(base, account, pw string) tokens {
	b.t.Helper()
	var tk tokens
	b.do("POST", base+"/api/v1/auth/login", "", map[string]string{"account": account, "password": pw}).
		expect(b.t, "login "+account+" on "+base, 200, 0).decode(b.t, &tk)
	return tk
}

// authorize starts an SSO login on base and returns the provider URL.
func (b *browser) authorize(base, provider string) string {
	b.t.Helper()
	r := b.do("GET", base+external+"/"+provider+"/authorize", "", nil)
	if r.Status != http.StatusFound {
		b.t.Fatalf("authorize on %s = HTTP %d %s, want 302", base, r.Status, r.Raw)
	}
	return r.Header.Get("Location")
}

// callback opens the provider's redirect (an absolute URL on whichever
// replica CallbackBaseUrl names) and returns the frontend result URL.
func (b *browser) callback(cb *url.URL) *url.URL {
	b.t.Helper()
	r := b.do("GET", cb.String(), "", nil)
	if r.Status != http.StatusFound {
		b.t.Fatalf("callback %s = HTTP %d %s, want 302", cb.Host, r.Status, r.Raw)
	}
	u, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

func (b *browser) exchange(base, ticket string) reply {
	b.t.Helper()
	return b.do("POST", base+external+"/exchange", "", map[string]string{"ticket": ticket})
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// health is the probe body.
type health struct {
	Status string `json:"status"`
	Checks []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"checks"`
}

func probe(t testing.TB, b *browser, base, path string) (int, health) {
	t.Helper()
	r := b.do("GET", base+path, "", nil)
	var h health
	if err := json.Unmarshal([]byte(r.Raw), &h); err != nil {
		t.Fatalf("%s: %q is not a health report", path, r.Raw)
	}
	return r.Status, h
}

func (h health) check(name string) string {
	for _, c := range h.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}
