package ratelimit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache/cachetest"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// windowStart is a multiple of 60 s; tests start 15 s into that window.
var windowStart = time.Unix(1_700_000_040, 0)

func newApp(t *testing.T, opts Options) (*fiber.App, *cachetest.Fake, *clock) {
	t.Helper()
	if windowStart.Unix()%60 != 0 {
		t.Fatal("windowStart not aligned")
	}
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	store := newFakeStore()
	clk := &clock{t: windowStart.Add(15 * time.Second)}
	// These tests use POST /api/v1/auth/login as an auth-bucket path;
	// TestPasswordBucket sets the password paths itself.
	if opts.PasswordPaths == nil {
		opts.PasswordPaths = []string{}
	}
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), nil)})
	app.Use(New(store, opts))
	ok := func(c fiber.Ctx) error { return envelope.OK(c, true) }
	app.Get("/api/v1/auth/captcha", ok)
	app.Post("/api/v1/auth/login", ok)
	app.Get("/api/v1/authority", ok)
	app.Get("/api/v1/ping", ok)
	return app, store, clk
}

type result struct {
	status     int
	retryAfter string
	env        envelope.Envelope
}

func do(t *testing.T, app *fiber.App, method, path, xff string) result {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := result{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &r.env); err != nil {
			t.Fatalf("%s %s: body %q: %v", method, path, body, err)
		}
	}
	return r
}

func expectOK(t *testing.T, r result, what string) {
	t.Helper()
	if r.status != http.StatusOK || r.env.Code != errcode.Success {
		t.Fatalf("%s: status %d code %d", what, r.status, r.env.Code)
	}
}

func expectLimited(t *testing.T, r result, window int) int {
	t.Helper()
	if r.status != http.StatusTooManyRequests || r.env.Code != errcode.TooManyRequests {
		t.Fatalf("status %d code %d, want 429/40008", r.status, r.env.Code)
	}
	ra, err := strconv.Atoi(r.retryAfter)
	if err != nil || ra <= 0 || ra > window {
		t.Fatalf("Retry-After %q not in (0, %d]", r.retryAfter, window)
	}
	if got, _ := r.env.Args["retryAfterSeconds"].(float64); int(got) != ra {
		t.Fatalf("args.retryAfterSeconds %v, header %d", r.env.Args["retryAfterSeconds"], ra)
	}
	return ra
}

func TestAuthBucket(t *testing.T) {
	app, _, clk := newApp(t, Options{})
	for i := range DefaultAuthLimit { // the default allowance, then one more
		path := "/api/v1/auth/login"
		if i%2 == 0 {
			path = "/api/v1/auth/captcha"
		}
		method := http.MethodPost
		if i%2 == 0 {
			method = http.MethodGet
		}
		expectOK(t, do(t, app, method, path, ""), "auth request "+strconv.Itoa(i+1))
	}
	r := do(t, app, http.MethodPost, "/api/v1/auth/login", "")
	if ra := expectLimited(t, r, 60); ra != 45 {
		t.Fatalf("Retry-After %d, want 45 (15 s into a 60 s window)", ra)
	}
	// Case variants of the prefix share the strict bucket.
	expectLimited(t, do(t, app, http.MethodPost, "/API/V1/Auth/login", ""), 60)
	// The other bucket is untouched.
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "other bucket")
	// A path that merely starts with the same letters is not an auth path.
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/authority", ""), "/authority")

	// 44.5 s later the window is still on: Retry-After rounds up to 1.
	clk.advance(44*time.Second + 500*time.Millisecond)
	if ra := expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), 60); ra != 1 {
		t.Fatalf("Retry-After %d, want 1", ra)
	}
	// Next window: allowed again.
	clk.advance(time.Second)
	expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "next window")
}

func TestOtherBucketDefault(t *testing.T) {
	app, _, _ := newApp(t, Options{})
	for i := range 300 {
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "request "+strconv.Itoa(i+1))
	}
	expectLimited(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), 60)
	// Unrouted paths count in the same bucket (they reach the limiter first).
	expectLimited(t, do(t, app, http.MethodGet, "/nowhere", ""), 60)
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/auth/captcha", ""), "auth bucket separate")
}

func TestRuntimeOptions(t *testing.T) {
	var mu sync.Mutex
	limit, window := 3, 10*time.Second
	get := func() (int, time.Duration) { mu.Lock(); defer mu.Unlock(); return limit, window }
	app, _, _ := newApp(t, Options{
		Window:    func(context.Context) time.Duration { _, w := get(); return w },
		Limit:     func(context.Context) int { l, _ := get(); return l },
		AuthLimit: func(context.Context) int { return 2 },
	})
	for range 3 {
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "under limit")
	}
	// 15 s into the minute is 5 s into a 10 s window.
	if ra := expectLimited(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), 10); ra != 5 {
		t.Fatalf("Retry-After %d, want 5", ra)
	}
	for range 2 {
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/auth/captcha", ""), "auth under limit")
	}
	expectLimited(t, do(t, app, http.MethodGet, "/api/v1/auth/captcha", ""), 10)

	// Raising the limit applies at once.
	mu.Lock()
	limit = 10
	mu.Unlock()
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "raised limit")

	// Non-positive values fall back to the defaults.
	mu.Lock()
	limit, window = 0, 0
	mu.Unlock()
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "default limit")
}

func TestDisabled(t *testing.T) {
	var mu sync.Mutex
	enabled := false
	app, _, _ := newApp(t, Options{
		Enabled:   func(context.Context) bool { mu.Lock(); defer mu.Unlock(); return enabled },
		AuthLimit: func(context.Context) int { return 2 },
	})
	for range 10 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "disabled")
	}
	mu.Lock()
	enabled = true
	mu.Unlock()
	for range 2 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "enabled")
	}
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), 60)
}

// app.Test always connects from 0.0.0.0, so per-client behaviour is driven
// through X-Forwarded-For from that (trusted or untrusted) peer.

func TestXForwardedForIgnoredFromUntrustedPeer(t *testing.T) {
	app, store, _ := newApp(t, Options{AuthLimit: func(context.Context) int { return 3 }})
	for i := range 3 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "203.0.113."+strconv.Itoa(i+1)), "spoofed")
	}
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "203.0.113.99"), 60)
	for _, k := range store.Keys() {
		if !strings.HasPrefix(k, "rl:auth:0.0.0.0:") {
			t.Fatalf("unexpected counter %q", k)
		}
	}
}

func TestClientsIndependentBehindTrustedProxy(t *testing.T) {
	trusted, err := request.ParseTrusted([]string{"0.0.0.0", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	app, _, _ := newApp(t, Options{Trusted: trusted, AuthLimit: func(context.Context) int { return 2 }})
	a, b := "198.51.100.7", "198.51.100.8"
	for range 2 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", a), "client a")
	}
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", a), 60)
	// A forged left-most entry does not help client a.
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "1.2.3.4, "+a+", 10.1.2.3"), 60)
	for range 2 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", b), "client b")
	}
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", b), 60)

	// IPv6 clients are counted per /64.
	expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "2001:db8:1:2::1"), "v6 1")
	expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "2001:db8:1:2::ffff"), "v6 2")
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "2001:db8:1:2:abcd::9"), 60)
	expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", "2001:db8:1:3::1"), "other /64")
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestCacheFailureFailsOpen(t *testing.T) {
	var buf lockedBuf
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace})
	app, store, clk := newApp(t, Options{Log: log, AuthLimit: func(context.Context) int { return 1 }})
	store.Fail(errors.New("cache down"))
	for range 5 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "cache down")
	}
	out := buf.String()
	if !strings.Contains(out, "[WARN]") || !strings.Contains(out, "fail open") || !strings.Contains(out, "cache down") {
		t.Fatalf("log %q", out)
	}
	if n := strings.Count(out, "fail open"); n != 1 {
		t.Fatalf("%d warnings in 5 requests, want 1 (throttled)", n)
	}
	clk.advance(11 * time.Second)
	expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "cache down")
	if n := strings.Count(buf.String(), "fail open"); n != 2 {
		t.Fatalf("%d warnings after 11 s, want 2", n)
	}
	// Recovered cache: limits apply again.
	store.Fail(nil)
	expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "recovered")
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), 60)
}

func TestCounterKeyAndTTL(t *testing.T) {
	app, store, _ := newApp(t, Options{})
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/ping", ""), "ping")
	key := "rl:api:0.0.0.0:" + strconv.FormatInt(windowStart.Unix(), 10)
	n, ttl, err := store.Count(context.Background(), key)
	if err != nil || n != 1 || ttl != 60*time.Second {
		t.Fatalf("counter %q: n=%d ttl=%v err=%v", key, n, ttl, err)
	}
}

func TestUnderPrefix(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/v1/auth":         true,
		"/api/v1/auth/":        true,
		"/api/v1/auth/login":   true,
		"/API/V1/AUTH/login":   true,
		"/api/v1/authority":    false,
		"/api/v1/aut":          false,
		"/api/v1/sys/auth":     false,
		"/":                    false,
		"/api/v1/auth/sms/x/y": true,
	} {
		if got := underPrefix(path, "/api/v1/auth"); got != want {
			t.Errorf("underPrefix(%q) = %v", path, got)
		}
	}
}

// TestPasswordBucket: the password paths have their own allowance
// (PasswordLimit) and do not count in the auth bucket, nor the auth
// bucket in theirs; spelling the path differently does not leave it.
func TestPasswordBucket(t *testing.T) {
	app, _, _ := newApp(t, Options{PasswordPaths: DefaultPasswordPaths,
		AuthLimit: func(context.Context) int { return 5 }, PasswordLimit: func(context.Context) int { return 3 }})
	for i := range 3 {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "password attempt "+strconv.Itoa(i))
	}
	expectLimited(t, do(t, app, http.MethodPost, "/API/v1/Auth/Login/", ""), 60)
	for i := range 5 {
		expectOK(t, do(t, app, http.MethodGet, "/api/v1/auth/captcha", ""), "auth request "+strconv.Itoa(i))
	}
	expectLimited(t, do(t, app, http.MethodGet, "/api/v1/auth/captcha", ""), 60)
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), 60)

	// Defaults: 60 password attempts.
	app, _, _ = newApp(t, Options{PasswordPaths: DefaultPasswordPaths})
	for i := range DefaultPasswordLimit {
		expectOK(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), "default "+strconv.Itoa(i))
	}
	expectLimited(t, do(t, app, http.MethodPost, "/api/v1/auth/login", ""), 60)
	expectOK(t, do(t, app, http.MethodGet, "/api/v1/auth/captcha", ""), "auth bucket untouched")
}
