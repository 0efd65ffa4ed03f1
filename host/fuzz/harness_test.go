// Package fuzz drives the real kernel over its HTTP stack with fuzzed
// bodies, path parameters and query strings. It holds tests only.
//
// Every target starts ONE kernel per fuzzing process (in the *testing.F
// setup) and reuses it for every input: the invariants are that no request
// panics, none is answered with a 5xx, and every answer is the JSON envelope
// {code:int, msgKey:string, ...} — or a 302 for the documented redirect
// endpoints (external-login authorize and callback). A 401 carries
// WWW-Authenticate: Bearer.
//
// The authenticated targets act as the super-admin, so permission checks do
// not short-circuit every request. Inputs may revoke the admin's session,
// change its password, lock account names, switch runtime settings (rate
// limit, captcha) or delete fixtures; the harness heals the kernel between
// inputs (a fresh session issued directly when the current one is gone, the
// critical settings restored after config-center and cache inputs) so later
// inputs still reach the handlers.
//
// The kernel follows kerneltest's backend selection (ADMINKERNEL_TEST_DB,
// ADMINKERNEL_TEST_CACHE): fuzzing on PostgreSQL finds what SQLite accepts
// (NUL characters, negative offsets).
//
// Seeds: f.Add adds a valid body and a few malformed ones for every route
// (resolved at run time, so they follow the route table; under -fuzz only
// the valid ones, see fuzzing), and testdata/fuzz/<Target>/ holds
// hand-written inputs and regression crashers.
// A route index in a seed is a position in the target's route list modulo
// its length (the list is printed with -v), so seeds stay valid, if not
// aimed, when routes are added.
package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/leakcheck"
	"github.com/adminkernel/kernel/host/route"
)

const (
	// provider is the code of the built-in OIDC provider of every fuzz kernel.
	provider = "corp"
	// requestTimeout bounds one request; a slower answer fails the input.
	requestTimeout = 30 * time.Second
)

// redirectRoutes may answer 302 (the documented external-login redirects).
// streamRoutes answer files as raw streams (wire contract §1.1); the
// signed view answers a bad signature with 403 and an empty body (§1.4).
var streamRoutes = map[string]bool{
	"GET /api/v1/sys/file/{id}/view":     true,
	"GET /api/v1/sys/file/{id}/download": true,
	// Spreadsheets (xlsx answers, nosniff and the file CSP).
	"GET /api/v1/sys/user/import/template":      true,
	"GET /api/v1/sys/user/export":               true,
	"GET /api/v1/sys/log/op/export":             true,
	"POST /api/v1/sys/user/import/error-report": true,
}

var redirectRoutes = map[string]bool{
	"GET /api/v1/auth/external/{provider}/authorize":  true,
	"GET /api/v1/auth/external/{provider}/callback":   true,
	"GET /api/v1/auth/external/{provider}/bind/start": true,
}

// harness is one kernel shared by every input of a fuzz target.
type harness struct {
	k  *kerneltest.Kernel
	is *oidctest.Issuer
	// base is the kernel's listening address (http://127.0.0.1:port) and
	// client the HTTP client talking to it: requests cross a real socket,
	// so limits of the server (request-line and header sizes) answer as
	// they would in production.
	base   string
	client *http.Client

	mu      sync.Mutex
	adminID int64
	token   string
	sid     string
	expires time.Time

	// fixtures: ids and codes of rows created at startup, substituted for
	// "$NAME" placeholders in path parameters, queries and bodies.
	fixtures map[string]string
}

// criticalSettings are restored after every input that may have changed
// runtime settings: with them changed, later inputs would mostly see 429s or
// captcha errors.
var criticalSettings = map[string]string{
	"sys.security.rateLimit.enabled":                 "false",
	"sys.security.captcha.enabled":                   "false",
	"sys.security.smsLogin.enabled":                  "true",
	"sys.security.loginLock.maxFailCount":            "1000000",
	"sys.security.loginLock.accountCaptchaThreshold": "0",
	"sys.security.session.accessMinutes":             "120",
	"sys.externalauth.corp.enabled":                  "true",
	"sys.externalauth.corp.provisioning":             "provision",
}

// start starts the shared kernel of a target with an in-test OpenID
// provider "corp" and the fixtures.
func start(f testing.TB) *harness {
	f.Helper()
	is := oidctest.New(f)
	is.AddUser(oidctest.User{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"})
	p := "Service__ExternalAuth__Oidc__0__"
	k := kerneltest.Start(f, []string{
		p + "Code=" + provider,
		p + "DisplayName=Corp SSO",
		p + "Authority=" + is.URL,
		p + "ClientId=" + is.ClientID,
		p + "ClientSecret=" + is.ClientSecret,
		// The Host every request carries (raw): external login takes the
		// redirect URI from it only when it names the listen address.
		"Service__Http__ListenAddress=http://kernel.test:80",
	})
	h := &harness{k: k, is: is, fixtures: map[string]string{}}
	h.serve(f)
	h.restoreSettings(f)
	admin := k.Ent().SysUser.Query().Where(sysuser.IsSuperAdmin(true)).FirstX(context.Background())
	h.adminID = admin.ID
	tp := k.Login("superAdmin", kerneltest.AdminPassword)
	h.token, h.expires, h.sid = tp.AccessToken, time.Now().Add(time.Hour), h.sessionOf(f, tp.AccessToken)
	// Whatever the inputs, the secrets of the harness never reach the
	// kernel log, the operation log or the exception log. Literal values
	// only: random inputs are op-logged and may take the shape of a token.
	k.Leaks = leakcheck.Check{
		Secrets:  []string{kerneltest.AdminPassword, is.ClientSecret, tp.AccessToken, tp.RefreshToken},
		NoShapes: true,
	}
	h.createFixtures(f)
	return h
}

// serve runs the kernel on a loopback listener until the target ends.
func (h *harness) serve(f testing.TB) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.k.ServeListener(ctx, ln) }()
	f.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.Errorf("serving: %v", err)
		}
	})
	h.base = "http://" + ln.Addr().String()
	h.client = &http.Client{
		Timeout:       requestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (h *harness) restoreSettings(t testing.TB) {
	t.Helper()
	for key, v := range criticalSettings {
		if err := h.k.Settings().Set(context.Background(), key, v); err != nil {
			t.Fatalf("restoring %s: %v", key, err)
		}
	}
}

// adminToken returns a working super-admin access token, issuing a new
// session when the current one was revoked (logout, force-logout, password
// reset, concurrency policy) or is about to expire. The session is issued
// directly, so a changed password, a lock or a captcha switch does not
// matter.
func (h *harness) adminToken(t testing.TB) string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx := context.Background()
	if h.token != "" && time.Until(h.expires) > time.Minute {
		if ok, err := h.k.Sessions().Active(ctx, h.sid); err == nil && ok {
			return h.token
		}
	}
	u, err := h.k.Ent().SysUser.Get(ctx, h.adminID)
	if err != nil {
		t.Fatalf("reading the super-admin: %v", err)
	}
	out, err := h.k.Auth().IssueTokens(ctx, u, auth.MethodPassword, auth.Client{IP: "192.0.2.1"})
	if err != nil {
		t.Fatalf("issuing a super-admin session: %v", err)
	}
	h.token, h.expires, h.sid = out.AccessToken, out.ExpiresAt.Time, h.sessionOf(t, out.AccessToken)
	return h.token
}

func (h *harness) sessionOf(t testing.TB, token string) string {
	t.Helper()
	claims, err := h.k.Tokens().Verify(token)
	if err != nil {
		t.Fatalf("verifying a token just issued: %v", err)
	}
	return claims.SessionID
}

// createFixtures adds one row of each kind through the API; their ids are
// the "valid" path parameters.
func (h *harness) createFixtures(t testing.TB) {
	t.Helper()
	tok := h.adminToken(t)
	add := func(name, path, body string) string {
		t.Helper()
		r := h.raw(t, "POST", path, "", tok, []byte(body), nil)
		var env struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r.body, &env); err != nil || r.status != 200 || env.Code != 0 {
			t.Fatalf("fixture %s: HTTP %d %s", name, r.status, r.body)
		}
		var id struct {
			ID json.Number `json:"id"`
		}
		if json.Unmarshal(env.Data, &id) == nil && id.ID != "" {
			return id.ID.String()
		}
		return strings.Trim(string(env.Data), `"`)
	}
	fx := h.fixtures
	fx["$ORG"] = add("org", "/api/v1/sys/org/add", `{"name":"Fuzz Org","code":"fuzz_org","parentId":0,"sort":1}`)
	fx["$POSITION"] = add("position", "/api/v1/sys/position/add", `{"name":"Fuzz Position","code":"fuzz_pos","sort":1}`)
	fx["$ROLE"] = add("role", "/api/v1/sys/role/add", `{"name":"Fuzz Role","code":"fuzz_role","sort":1}`)
	fx["$USER"] = add("user", "/api/v1/sys/user", `{"account":"fuzzuser","name":"Fuzz User","password":"Fuzz#Passw0rd1","orgId":`+fx["$ORG"]+`,"roleIds":[`+fx["$ROLE"]+`]}`)
	fx["$DICTTYPECODE"] = "fuzz_dict"
	fx["$DICTTYPE"] = add("dict type", "/api/v1/sys/dict/type", `{"code":"fuzz_dict","name":"Fuzz Dict","sort":1}`)
	fx["$DICTITEM"] = add("dict item", "/api/v1/sys/dict/item", `{"dictTypeCode":"fuzz_dict","label":"One","value":"1","sort":1}`)
	fx["$CONFIGKEY"] = "fuzz.config.key"
	fx["$CONFIG"] = add("config", "/api/v1/sys/config", `{"configKey":"fuzz.config.key","configValue":"v","name":"Fuzz Config","groupCode":"fuzz","sort":1}`)
	fx["$MODULE"] = add("module", "/api/v1/sys/module/add", `{"code":"fuzzmod","title":"Fuzz Module","sort":99}`)
	fx["$MENU"] = add("menu", "/api/v1/sys/menu/add", `{"parentId":0,"title":"Fuzz Menu","type":2,"path":"/fuzz","component":"fuzz/index","moduleId":`+fx["$MODULE"]+`,"sort":1}`)
	fx["$ADMIN"] = strconv.FormatInt(h.adminID, 10)
	// A second admin session: the "valid" session id, so ending a session
	// by id is exercised without ending the one the harness uses.
	ctx := context.Background()
	u := h.k.Ent().SysUser.GetX(ctx, h.adminID)
	out, err := h.k.Auth().IssueTokens(ctx, u, auth.MethodPassword, auth.Client{IP: "192.0.2.2"})
	if err != nil {
		t.Fatal(err)
	}
	fx["$SESSION"] = h.sessionOf(t, out.AccessToken)
	fx["$PROVIDER"] = provider
}

// substitute replaces the fixture placeholders in s.
func (h *harness) substitute(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	for k, v := range h.fixtures {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// validParam is the fixture value of a path parameter of a route.
func (h *harness) validParam(path, name string) string {
	switch name {
	case "provider":
		return provider
	case "sessionId":
		return h.fixtures["$SESSION"]
	case "typeCode":
		return h.fixtures["$DICTTYPECODE"]
	case "key":
		return h.fixtures["$CONFIGKEY"]
	}
	for _, p := range []struct{ prefix, fixture string }{
		{"/api/v1/sys/org/", "$ORG"},
		{"/api/v1/sys/position/", "$POSITION"},
		{"/api/v1/sys/role/", "$ROLE"},
		{"/api/v1/sys/user/", "$USER"},
		{"/api/v1/sys/dict/type/", "$DICTTYPE"},
		{"/api/v1/sys/dict/item/", "$DICTITEM"},
		{"/api/v1/sys/config/", "$CONFIG"},
		{"/api/v1/sys/menu/", "$MENU"},
		{"/api/v1/sys/module/", "$MODULE"},
	} {
		if strings.HasPrefix(path, p.prefix) {
			return h.fixtures[p.fixture]
		}
	}
	return "1"
}

// fill substitutes the path parameters of a route template: the fuzzed value
// when set (placeholders substituted, then path-escaped), else the fixture.
func (h *harness) fill(template, param string) string {
	return paramRE.ReplaceAllStringFunc(template, func(m string) string {
		name := strings.Trim(m, "{}")
		name, _, _ = strings.Cut(name, ":")
		if param == "" {
			return url.PathEscape(h.validParam(template, name))
		}
		return url.PathEscape(h.substitute(param))
	})
}

var paramRE = regexp.MustCompile(`\{[^}]*\}`)

// reply is a raw answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// raw sends one request to the kernel. query is used as the raw query
// (characters that cannot appear in a request line are percent-encoded);
// header adds request headers.
func (h *harness) raw(t testing.TB, method, path, query, token string, body []byte, header http.Header) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		t.Fatalf("building %s %s: %v", method, path, err)
	}
	req.URL.RawQuery = requestLineSafe(query)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Host = "kernel.test"
	req.Header.Set("User-Agent", "adminkernel-fuzz")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s?%s: %v", method, path, req.URL.RawQuery, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// requestLineSafe percent-encodes the bytes a client could not put in a
// request line (controls, space, non-ASCII, '#').
func requestLineSafe(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= ' ' || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// check asserts the invariants on one answer of route r ("" when the
// request matched no registered route template).
func check(t *testing.T, what, r string, rp reply) {
	t.Helper()
	if rp.status >= 500 {
		t.Fatalf("%s: HTTP %d (want < 500): %s", what, rp.status, rp.body)
	}
	if rp.status >= 300 && rp.status < 400 {
		if rp.status != http.StatusFound || !redirectRoutes[r] {
			t.Fatalf("%s: unexpected redirect HTTP %d to %q", what, rp.status, rp.header.Get("Location"))
		}
		if rp.header.Get("Location") == "" {
			t.Fatalf("%s: 302 without Location", what)
		}
		if got := rp.header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Fatalf("%s: 302 with Referrer-Policy %q, want no-referrer", what, got)
		}
		return
	}
	if streamRoutes[r] {
		switch {
		case rp.status == http.StatusForbidden && len(rp.body) == 0 && strings.HasSuffix(r, "/view"):
			return
		case (rp.status == http.StatusOK || rp.status == http.StatusPartialContent) && !strings.Contains(rp.header.Get("Content-Type"), "json"):
			if rp.header.Get("X-Content-Type-Options") != "nosniff" || rp.header.Get("Content-Security-Policy") == "" {
				t.Fatalf("%s: a file answer without nosniff and its CSP", what)
			}
			return
		}
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(rp.body, &env); err != nil {
		t.Fatalf("%s: HTTP %d body is not a JSON object: %v: %q", what, rp.status, err, rp.body)
	}
	var code json.Number
	dec := json.NewDecoder(bytes.NewReader(env["code"]))
	dec.UseNumber()
	if err := dec.Decode(&code); err != nil {
		t.Fatalf("%s: envelope code %s is not a number: %q", what, env["code"], rp.body)
	}
	n, err := strconv.ParseInt(code.String(), 10, 64)
	if err != nil {
		t.Fatalf("%s: envelope code %s is not an integer: %q", what, code, rp.body)
	}
	var key string
	if err := json.Unmarshal(env["msgKey"], &key); err != nil || key == "" {
		t.Fatalf("%s: envelope msgKey %s is not a non-empty string: %q", what, env["msgKey"], rp.body)
	}
	if n == 0 && rp.status != http.StatusOK {
		t.Fatalf("%s: HTTP %d with envelope code %d: %q", what, rp.status, n, rp.body)
	}
	if rp.status == http.StatusUnauthorized && !strings.HasPrefix(rp.header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("%s: 401 without WWW-Authenticate: Bearer (got %q)", what, rp.header.Get("WWW-Authenticate"))
	}
	checkPage(t, what, env["data"])
}

// checkPage: a paged list whose page starts far past the total is empty (an
// overflowing offset once served the first page instead). The slack allows
// for rows written between the count and the page query (the operation log
// is written in the background).
func checkPage(t *testing.T, what string, data json.RawMessage) {
	t.Helper()
	var page struct {
		Current *big.Int          `json:"current"`
		Size    *big.Int          `json:"size"`
		Total   *big.Int          `json:"total"`
		Items   []json.RawMessage `json:"items"`
	}
	if json.Unmarshal(data, &page) != nil || page.Current == nil || page.Size == nil || page.Total == nil || page.Items == nil {
		return
	}
	skip := new(big.Int).Mul(new(big.Int).Sub(page.Current, big.NewInt(1)), page.Size)
	if skip.Cmp(new(big.Int).Add(page.Total, big.NewInt(1000))) >= 0 && len(page.Items) > 0 {
		t.Fatalf("%s: page %s of size %s (total %s) returned %d items", what, page.Current, page.Size, page.Total, len(page.Items))
	}
}

// routesWhere returns the registered routes matching keep, in the table's
// order (path, then method).
func (h *harness) routesWhere(keep func(route.Route) bool) []route.Route {
	var out []route.Route
	for _, r := range h.k.Routes() {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func key(r route.Route) string { return r.Method + " " + r.Path }

// touchesSettings: the input may have changed runtime settings.
func touchesSettings(r route.Route) bool {
	return strings.HasPrefix(r.Path, "/api/v1/sys/config") || strings.HasPrefix(r.Path, "/api/v1/sys/cache")
}

// fuzzing reports whether the binary runs with -test.fuzz (coordinator or
// worker). Seeds cost a coverage run each before fuzzing starts, so under
// -fuzz the targets add only their aimed seeds (a valid input per route);
// the full seed sweep (malformed bodies, edge-case queries on every route)
// runs as an ordinary test.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// pick returns routes[i mod len].
func pick(routes []route.Route, i uint16) route.Route { return routes[int(i)%len(routes)] }

// logRoutes prints the route list of a target with its indexes.
func logRoutes(f *testing.F, routes []route.Route) {
	for i, r := range routes {
		f.Logf("%3d %s", i, key(r))
	}
}
