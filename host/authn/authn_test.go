package authn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/snowflake"
	"github.com/adminkernel/kernel/host/token"
)

var signingKey = []byte("an HS256 key for tests, 32 bytes+")

// memStore is a minimal in-test cache.Store (entries only).
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemStore() *memStore { return &memStore{m: make(map[string][]byte)} }

func (s *memStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *memStore) Set(_ context.Context, key string, val []byte, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = bytes.Clone(val)
	return nil
}

func (s *memStore) Delete(_ context.Context, keys ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.m, k)
	}
	return nil
}

func (s *memStore) DeletePrefix(context.Context, string) (int, error) { return 0, nil }
func (s *memStore) PutOnce(context.Context, string, []byte, time.Duration) error {
	return errors.New("not used")
}
func (s *memStore) Take(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("not used")
}
func (s *memStore) Incr(context.Context, string, int64, time.Duration) (int64, error) {
	return 0, errors.New("not used")
}
func (s *memStore) Count(context.Context, string) (int64, time.Duration, error) {
	return 0, 0, errors.New("not used")
}
func (s *memStore) Reset(context.Context, ...string) error { return nil }
func (s *memStore) Ping(context.Context) error             { return nil }
func (s *memStore) Close() error                           { return nil }

var _ cache.Store = (*memStore)(nil)

// fakePerms grants codes per user and records what it was asked.
type fakePerms struct {
	mu     sync.Mutex
	grants map[int64][]string
	asked  []string
	err    error
}

func (p *fakePerms) Has(_ context.Context, userID int64, code string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, code)
	if p.err != nil {
		return false, p.err
	}
	for _, c := range p.grants[userID] {
		if c == code {
			return true, nil
		}
	}
	return false, nil
}

func (p *fakePerms) lastAsked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

type fixture struct {
	app      *fiber.App
	issuer   *token.Issuer
	sessions *session.Service
	perms    *fakePerms
	seen     chan authn.Principal
}

const (
	pathLogout  = "/api/v1/auth/logout"
	pathProfile = "/api/v1/personal/profile"
	pathPing    = "/api/v1/ping"
	pathAnon    = "/api/v1/auth/captcha"
)

func newFixture(t testing.TB, store cache.Store) *fixture {
	t.Helper()
	db := dbtest.OpenMigrated(t, dbtest.AllDialects[0])
	iss, err := token.NewIssuer(signingKey, "AdminKernel", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := snowflake.New(0)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		issuer:   iss,
		sessions: session.New(db.Client, store, session.Options{NextID: ids.Next}),
		perms:    &fakePerms{grants: map[int64][]string{}},
		seen:     make(chan authn.Principal, 100),
	}
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	f.app = fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), nil)})
	handler := func(c fiber.Ctx) error {
		p, ok := authn.From(c)
		if ok {
			select {
			case f.seen <- p:
			default:
			}
		}
		return envelope.OK(c, map[string]any{"authenticated": ok, "userId": p.UserID, "account": p.Account, "sid": p.SessionID, "sadm": p.SuperAdmin})
	}
	tbl := route.NewTable()
	g := tbl.Group("Test", "/api/v1")
	g.Get("/auth/captcha", route.Anonymous, handler)
	g.Post("/auth/logout", route.Token, handler)
	g.Get("/personal/profile", route.Session, handler)
	g.Get("/ping", route.Permission, handler)
	g.Delete("/sys/session/{sessionId}", route.Permission, handler)
	g.Get("/bench", route.Session, func(c fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	g.Get("/bench-anon", route.Anonymous, func(c fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
	a := authn.New(iss, f.sessions, f.perms, authn.Options{})
	if err := tbl.Mount(f.app, a.Guards(), nil); err != nil {
		t.Fatal(err)
	}
	return f
}

// login creates a session and an access token for it.
func (f *fixture) login(t testing.TB, userID int64, account string, sadm bool) (sid, access string) {
	t.Helper()
	is, err := f.sessions.Create(context.Background(), session.NewSession{UserID: userID, Method: "password", RefreshTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	access, _, err = f.issuer.Issue(token.Claims{UserID: userID, Account: account, SessionID: is.SessionID, SuperAdmin: sadm}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return is.SessionID, access
}

type answer struct {
	status int
	env    struct {
		Code   errcode.Code    `json:"code"`
		MsgKey string          `json:"msgKey"`
		Data   json.RawMessage `json:"data"`
	}
	challenge string
}

func (f *fixture) do(t *testing.T, method, path, authorization string) answer {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := f.app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	a.status = resp.StatusCode
	a.challenge = resp.Header.Get("WWW-Authenticate")
	if err := json.Unmarshal(body, &a.env); err != nil {
		t.Fatalf("%s %s: body %q is not an envelope: %v", method, path, body, err)
	}
	return a
}

func TestGuards(t *testing.T) {
	f := newFixture(t, newMemStore())
	ctx := context.Background()
	_, alice := f.login(t, 1001, "alice", false)
	_, admin := f.login(t, 1, "superAdmin", true)
	revokedSID, revoked := f.login(t, 1002, "bob", false)
	if err := f.sessions.Revoke(ctx, revokedSID, "logout"); err != nil {
		t.Fatal(err)
	}
	f.perms.grants[1001] = []string{"GET:/api/v1/ping"}

	expired, _, err := f.issuer.WithClock(func() time.Time { return time.Now().Add(-2 * time.Hour) }).
		Issue(token.Claims{UserID: 1001, Account: "alice", SessionID: "x"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := token.NewIssuer([]byte("another key of thirty-two bytes!"), "AdminKernel", 0)
	if err != nil {
		t.Fatal(err)
	}
	foreign, _, err := other.Issue(token.Claims{UserID: 1001, Account: "alice", SessionID: "x"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	refreshToken, _, err := token.NewRefreshToken()
	if err != nil {
		t.Fatal(err)
	}
	tampered := alice[:len(alice)-3] + "AAA"
	if tampered == alice {
		tampered = alice[:len(alice)-3] + "BBB"
	}

	const ok, unauthorized, forbidden = http.StatusOK, http.StatusUnauthorized, http.StatusForbidden
	tests := []struct {
		name       string
		method     string
		path       string
		auth       string
		wantStatus int
		wantCode   errcode.Code
		wantUser   int64
	}{
		{"anonymous route without a token", "GET", pathAnon, "", ok, 0, 0},
		{"no header", "GET", pathProfile, "", unauthorized, errcode.TokenInvalid, 0},
		{"basic scheme", "GET", pathProfile, "Basic YWxpY2U6c2VjcmV0", unauthorized, errcode.TokenInvalid, 0},
		{"other scheme with a valid token", "GET", pathProfile, "Token " + alice, unauthorized, errcode.TokenInvalid, 0},
		{"scheme without token", "GET", pathProfile, "Bearer", unauthorized, errcode.TokenInvalid, 0},
		{"scheme and blank", "GET", pathProfile, "Bearer    ", unauthorized, errcode.TokenInvalid, 0},
		{"token without scheme", "GET", pathProfile, alice, unauthorized, errcode.TokenInvalid, 0},
		{"two tokens", "GET", pathProfile, "Bearer " + alice + " " + alice, unauthorized, errcode.TokenInvalid, 0},
		{"garbage token", "GET", pathProfile, "Bearer not-a-jwt", unauthorized, errcode.TokenInvalid, 0},
		{"tampered token", "GET", pathProfile, "Bearer " + tampered, unauthorized, errcode.TokenInvalid, 0},
		{"expired token", "GET", pathProfile, "Bearer " + expired, unauthorized, errcode.TokenInvalid, 0},
		{"token signed with another key", "GET", pathProfile, "Bearer " + foreign, unauthorized, errcode.TokenInvalid, 0},
		{"refresh token as bearer", "GET", pathProfile, "Bearer " + refreshToken, unauthorized, errcode.TokenInvalid, 0},
		{"valid token", "GET", pathProfile, "Bearer " + alice, ok, 0, 1001},
		{"scheme in lower case", "GET", pathProfile, "bearer " + alice, ok, 0, 1001},
		{"scheme in upper case, extra spaces", "GET", pathProfile, "BEARER   " + alice + " ", ok, 0, 1001},
		{"revoked session: session route", "GET", pathProfile, "Bearer " + revoked, unauthorized, errcode.TokenInvalid, 0},
		{"revoked session: permission route", "GET", pathPing, "Bearer " + revoked, unauthorized, errcode.TokenInvalid, 0},
		{"revoked session: token route (logout) passes", "POST", pathLogout, "Bearer " + revoked, ok, 0, 1002},
		{"token route still checks the token", "POST", pathLogout, "Bearer " + expired, unauthorized, errcode.TokenInvalid, 0},
		{"permission granted", "GET", pathPing, "Bearer " + alice, ok, 0, 1001},
		{"permission denied", "DELETE", "/api/v1/sys/session/abc", "Bearer " + alice, forbidden, errcode.NoPermission, 0},
		{"super-admin bypasses the permission", "DELETE", "/api/v1/sys/session/abc", "Bearer " + admin, ok, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.do(t, tt.method, tt.path, tt.auth)
			if a.status != tt.wantStatus || a.env.Code != tt.wantCode {
				t.Fatalf("%s %s = HTTP %d code %d (%s); want HTTP %d code %d", tt.method, tt.path, a.status, a.env.Code, a.env.MsgKey, tt.wantStatus, tt.wantCode)
			}
			switch tt.wantStatus {
			case unauthorized:
				if a.env.MsgKey != "error.auth.tokenInvalid" || !strings.HasPrefix(a.challenge, "Bearer") {
					t.Errorf("msgKey %q, WWW-Authenticate %q", a.env.MsgKey, a.challenge)
				}
			case forbidden:
				if a.env.MsgKey != "error.perm.denied" {
					t.Errorf("msgKey %q", a.env.MsgKey)
				}
			case ok:
				var data struct {
					Authenticated bool  `json:"authenticated"`
					UserID        int64 `json:"userId"`
				}
				if err := json.Unmarshal(a.env.Data, &data); err != nil {
					t.Fatal(err)
				}
				if data.Authenticated != (tt.wantUser != 0) || data.UserID != tt.wantUser {
					t.Errorf("principal %+v, want user %d", data, tt.wantUser)
				}
			}
		})
	}

	t.Run("the route's own permission code is checked", func(t *testing.T) {
		f.perms.mu.Lock()
		f.perms.asked = nil
		f.perms.mu.Unlock()
		f.do(t, "DELETE", "/api/v1/sys/session/some-id", "Bearer "+alice)
		f.do(t, "GET", pathPing, "Bearer "+alice)
		f.do(t, "GET", pathPing, "Bearer "+admin)
		want := []string{"DELETE:/api/v1/sys/session/{sessionid}", "GET:/api/v1/ping"}
		if got := f.perms.lastAsked(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("asked %v, want %v (and nothing for the super-admin)", got, want)
		}
	})

	t.Run("a permission lookup failure fails closed", func(t *testing.T) {
		f.perms.mu.Lock()
		f.perms.err = errors.New("database down")
		f.perms.mu.Unlock()
		defer func() {
			f.perms.mu.Lock()
			f.perms.err = nil
			f.perms.mu.Unlock()
		}()
		a := f.do(t, "GET", pathPing, "Bearer "+alice)
		if a.status != http.StatusInternalServerError || a.env.Code != errcode.SystemError {
			t.Fatalf("HTTP %d code %d; want 500", a.status, a.env.Code)
		}
	})

	t.Run("logout: the next request with the same token is refused", func(t *testing.T) {
		sid, tok := f.login(t, 1003, "carol", false)
		if a := f.do(t, "GET", pathProfile, "Bearer "+tok); a.status != ok {
			t.Fatalf("before logout: HTTP %d", a.status)
		}
		if err := f.sessions.Revoke(ctx, sid, "logout"); err != nil {
			t.Fatal(err)
		}
		if a := f.do(t, "GET", pathProfile, "Bearer "+tok); a.status != unauthorized || a.env.Code != errcode.TokenInvalid {
			t.Fatalf("after logout: HTTP %d code %d", a.status, a.env.Code)
		}
	})
}

// TestPrincipalOutlivesRequest: Fiber reuses request buffers; a Principal
// kept after its request must not change with later requests.
func TestPrincipalOutlivesRequest(t *testing.T) {
	f := newFixture(t, newMemStore())
	type want struct {
		user    int64
		account string
		sid     string
	}
	var wants []want
	for i := range 20 {
		uid := int64(2000 + i)
		account := strings.Repeat(string(rune('a'+i)), 5+i)
		sid, tok := f.login(t, uid, account, false)
		wants = append(wants, want{uid, account, sid})
		if a := f.do(t, "GET", pathProfile, "Bearer "+tok); a.status != http.StatusOK {
			t.Fatalf("HTTP %d", a.status)
		}
	}
	for i, w := range wants {
		p := <-f.seen
		if p.UserID != w.user || p.Account != w.account || p.SessionID != w.sid || p.ExpiresAt.IsZero() {
			t.Fatalf("request %d: kept principal %+v, want %+v", i, p, w)
		}
	}
}

func TestGuardsNeedTheirDependencies(t *testing.T) {
	iss, err := token.NewIssuer(signingKey, "AdminKernel", 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		a       *authn.Authenticator
		access  route.Access
		mountOK bool
	}{
		{"token only: token route", authn.New(iss, nil, nil, authn.Options{}), route.Token, true},
		{"token only: session route", authn.New(iss, nil, nil, authn.Options{}), route.Session, false},
		{"no permissions: permission route", authn.New(iss, fakeSessions{}, nil, authn.Options{}), route.Permission, false},
		{"no permissions: session route", authn.New(iss, fakeSessions{}, nil, authn.Options{}), route.Session, true},
		{"everything: permission route", authn.New(iss, fakeSessions{}, &fakePerms{}, authn.Options{}), route.Permission, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := route.NewTable()
			tbl.Group("Test", "/api/v1").Get("/x", tt.access, func(c fiber.Ctx) error { return nil })
			err := tbl.Mount(fiber.New(), tt.a.Guards(), nil)
			if (err == nil) != tt.mountOK {
				t.Fatalf("Mount = %v, want success %v", err, tt.mountOK)
			}
		})
	}
}

type fakeSessions struct{}

func (fakeSessions) Active(context.Context, string) (bool, error) { return true, nil }

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header string
		want   string
		ok     bool
	}{
		{"Bearer abc.def.ghi", "abc.def.ghi", true},
		{"bearer abc", "abc", true},
		{"BeArEr   abc  ", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearerabc", "", false},
		{"Bearer\tabc", "", false},
		{"Bearer a b", "", false},
		{"Bearer a,b", "", false},
		{"Basic abc", "", false},
		{"", "", false},
		{"abc.def.ghi", "", false},
	}
	for _, tt := range tests {
		got, ok := authn.BearerToken(tt.header)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

// newOf returns a new zero T for a handler taking *T: it makes the
// *fasthttp.RequestCtx that app.Handler() serves without naming fasthttp.
func newOf[T any](func(*T)) *T { return new(T) }

// BenchmarkGuardSession measures one request through a Session-level route
// whose handler does nothing: Fiber's dispatch plus the guard (Bearer
// parsing, HS256 verification, the session's active mark from the cache).
// The cache is the in-test map or the kernel's in-process memcache; the
// Anonymous variant is the same kind of route without the guard.
func BenchmarkGuardSession(b *testing.B) {
	for _, bc := range []struct {
		name, path string
		auth       bool
		store      func(b *testing.B) cache.Store
	}{
		{"Session/fake-cache", "/api/v1/bench", true, func(*testing.B) cache.Store { return newMemStore() }},
		{"Session/memcache", "/api/v1/bench", true, func(b *testing.B) cache.Store {
			mc, err := memcache.New(memcache.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = mc.Close() })
			return mc
		}},
		{"Anonymous", "/api/v1/bench-anon", false, func(*testing.B) cache.Store { return newMemStore() }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, bc.store(b))
			_, access := f.login(b, 1001, "alice", false)
			h := f.app.Handler()
			fctx := newOf(h)
			fctx.Request.Header.SetMethod(http.MethodGet)
			fctx.Request.SetRequestURI(bc.path)
			if bc.auth {
				fctx.Request.Header.Set("Authorization", "Bearer "+access)
			}
			h(fctx)
			if got := fctx.Response.StatusCode(); got != http.StatusNoContent {
				b.Fatalf("HTTP %d: %s", got, fctx.Response.Body())
			}
			b.ReportAllocs()
			for b.Loop() {
				fctx.Response.Reset()
				h(fctx)
			}
			if got := fctx.Response.StatusCode(); got != http.StatusNoContent {
				b.Fatalf("HTTP %d", got)
			}
		})
	}
}
