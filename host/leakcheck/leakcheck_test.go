// Package leakcheck runs a broad scenario through one kernel configured
// with distinctive secrets, then searches everything the kernel wrote down —
// its log, the operation log, the exception log and the login log — for any
// of them, and every error body it answered for stack traces and SQL.
package leakcheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/leakcheck"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// Distinctive secrets of the scenario (letters, digits, '#' and '-' only, so
// no encoding of the places searched can hide them).
const (
	adminPassword   = "Lk-Adm1n#Pw-7Q2xV"
	wrongPassword   = "Lk-Wr0ng#Pw-3Zk9T"
	userPassword    = "Lk-Us3r#Pw-5Hm1R"
	userNewPassword = "Lk-N3w#Pw-8Jd4W"
	userBadNew      = "Lk-B4dNew#Pw-6Yc2"
	resetPassword   = "Lk-R3set#Pw-2Vc6N"
	echoPassword    = "Lk-Ech0#Pw-9Lp3S"
	jwtSigningKey   = "Lk-Jwt-Signing-Key-0123456789abcdefXYZ"
	webhookSecret   = "Lk-Webhook-Secret-4Nf8Q"
	corpSecret      = "Lk-Corp-Secret-6Tp0K"
	badClientSecret = "Lk-Bad-Client-Secret-1Ww7"
	dbSecret        = "Lk-Sql-Bound-Secret-3Gh5"

	userPhone = "13912345678"
)

// forbiddenInErrors must not appear in any error answer: stack traces, Go
// source positions, SQL and driver error texts.
var forbiddenInErrors = []string{
	"goroutine ", ".go:", "panic(", "runtime/debug",
	"SELECT ", "INSERT ", "UPDATE ", "DELETE FROM", " FROM ", " WHERE ",
	"pq:", "Error 1", "SQLSTATE", "SQL logic error", "sqlite", "constraint failed", "no such column",
}

// scenario is the kernel and everything seen while driving it.
type scenario struct {
	t  *testing.T
	k  *kerneltest.Kernel
	is *oidctest.Issuer

	mu      sync.Mutex
	secrets map[string]string // value → what it is
	codes   []string          // SMS codes (matched as whole numbers)
	replies []seen
}

type seen struct {
	what  string
	reply kerneltest.Reply
}

func (s *scenario) secret(what, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v != "" {
		s.secrets[v] = what
	}
}

// do sends a request and records the answer.
func (s *scenario) do(method, path, token string, body any) kerneltest.Reply {
	s.t.Helper()
	r := s.k.Do(method, path, token, body)
	s.record(method+" "+path, r)
	return r
}

// send sends a prepared request and records the answer.
func (s *scenario) send(req *http.Request) kerneltest.Reply {
	s.t.Helper()
	r := s.k.Send(req)
	s.record(req.Method+" "+req.URL.Path, r)
	return r
}

func (s *scenario) record(what string, r kerneltest.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, seen{what, r})
}

// tokens keeps every token of a token answer as a secret.
func (s *scenario) tokens(what string, r kerneltest.Reply) kerneltest.Tokens {
	s.t.Helper()
	r.Expect(s.t, what, 200, 0)
	var tp kerneltest.Tokens
	r.Decode(s.t, &tp)
	s.secret(what+" access token", tp.AccessToken)
	s.secret(what+" refresh token", tp.RefreshToken)
	return tp
}

func (s *scenario) login(account, pw string) kerneltest.Tokens {
	s.t.Helper()
	return s.tokens("login "+account, s.do("POST", "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw}))
}

// leakModule has op-logged routes carrying secrets, routes that panic and
// routes failing with an unhandled (SQL) error.
func leakModule() host.Module {
	return host.Module{Name: "LeakTest", Routes: func(d *module.Deps, api *route.Group) error {
		g := api.Group("/leaktest")
		g.Post("/echo", route.Permission, func(c fiber.Ctx) error {
			var in map[string]any
			if err := request.JSON(c, &in); err != nil {
				return err
			}
			return envelope.OK(c, true)
		}).OpLog = true
		g.Post("/panic", route.Permission, func(fiber.Ctx) error {
			panic("leaktest: a handler panicked")
		}).OpLog = true
		g.Get("/panic-error", route.Session, func(fiber.Ctx) error {
			panic(errors.New("leaktest: a handler panicked with an error"))
		})
		g.Post("/sql-error", route.Permission, func(c fiber.Ctx) error {
			// A failing statement with a secret bound to a sensitive column:
			// the failed-SQL log line masks it, the answer says nothing.
			_, err := d.Client.SysUser.Query().Where(func(s *entsql.Selector) {
				s.Where(entsql.And(entsql.EQ(s.C("password_hash"), dbSecret), entsql.ExprP("no_such_column = 1")))
			}).All(c.Context())
			if err == nil {
				return errors.New("leaktest: the broken statement succeeded")
			}
			return fmt.Errorf("leaktest: querying users: %w", err)
		}).OpLog = true
		g.Get("/unhandled", route.Session, func(fiber.Ctx) error {
			return errors.New("leaktest: SELECT password_hash FROM sys_user failed at leak.go:42")
		})
		return nil
	}}
}

// webhook is an SMS gateway that checks the secret and keeps the codes.
type webhook struct {
	mu    sync.Mutex
	codes map[string]string // phone → last code
	bad   int
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var in struct{ Phone, Code string }
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Header.Get("X-Webhook-Secret") != webhookSecret || json.Unmarshal(body, &in) != nil {
		w.bad++
		http.Error(rw, "no", http.StatusUnauthorized)
		return
	}
	w.codes[in.Phone] = in.Code
	rw.WriteHeader(http.StatusNoContent)
}

func (w *webhook) code(phone string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.codes[phone]
}

func oidcEnv(i int, code string, is *oidctest.Issuer, secret string) []string {
	p := fmt.Sprintf("Service__ExternalAuth__Oidc__%d__", i)
	return []string{p + "Code=" + code, p + "DisplayName=" + code, p + "Authority=" + is.URL, p + "ClientId=" + is.ClientID, p + "ClientSecret=" + secret}
}

// TestNoSecretsInLogsOrErrors runs logins (right and wrong), refresh and
// refresh reuse, password changes and resets, SMS login through a webhook
// gateway, external login through an OpenID provider (and one configured
// with a wrong client secret), op-logged writes carrying password and token
// fields, panics and unhandled SQL errors; then no secret may appear in the
// kernel's log, the operation log, the exception log or the login log, and
// no error answer may carry a stack trace or SQL.
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	is := oidctest.New(t)
	gw := &webhook{codes: map[string]string{}}
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)

	env := []string{
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Jwt__SigningKey=" + jwtSigningKey,
		"Service__Security__Session__RefreshGraceSeconds=0",
		"Service__Security__Sms__Sender=Webhook",
		"Service__Security__Sms__WebhookUrl=" + gwSrv.URL,
		"Service__Security__Sms__WebhookSecret=" + webhookSecret,
		"Service__ExternalAuth__EnterpriseChat__CorpId=ww-leakcheck",
		"Service__ExternalAuth__EnterpriseChat__CorpSecret=" + corpSecret,
		"Service__Database__SqlLog__Enabled=true",
		"Logging__LogLevel__Default=Trace",
	}
	env = append(env, oidcEnv(0, "corp", is, is.ClientSecret)...)
	env = append(env, oidcEnv(1, "corpbad", is, badClientSecret)...)
	k := kerneltest.Start(t, env, leakModule())
	s := &scenario{t: t, k: k, is: is, secrets: map[string]string{}}
	for what, v := range map[string]string{
		"admin password": adminPassword, "wrong password": wrongPassword, "user password": userPassword,
		"user's new password": userNewPassword, "refused new password": userBadNew, "reset password": resetPassword,
		"echoed password": echoPassword, "JWT signing key": jwtSigningKey, "webhook secret": webhookSecret,
		"corp secret": corpSecret, "OIDC client secret": is.ClientSecret, "wrong OIDC client secret": badClientSecret,
		"SQL-bound secret": dbSecret,
	} {
		s.secret(what, v)
	}
	ctx := context.Background()
	for key, v := range map[string]string{
		"sys.security.smsLogin.enabled":         "true",
		"sys.externalauth.corp.provisioning":    "provision",
		"sys.externalauth.corpbad.provisioning": "provision",
	} {
		if err := k.Settings().Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}

	// Password logins, right and wrong; refresh, then reuse of the rotated
	// token (strict mode: the session is revoked).
	s.do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": wrongPassword}).Expect(t, "wrong password", 200, 40001)
	s.do("POST", "/api/v1/auth/login", "", map[string]string{"account": "nobody-" + wrongPassword[:3], "password": wrongPassword}).Expect(t, "unknown account", 200, 40001)
	first := s.login("superAdmin", adminPassword)
	second := s.tokens("refresh", s.do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": first.RefreshToken}))
	s.do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": first.RefreshToken}).Expect(t, "refresh reuse", 200, 40007)
	s.do("GET", "/api/v1/ping", second.AccessToken, nil).Expect(t, "ping on a revoked session", 401, 40006)
	s.do("GET", "/api/v1/ping", first.AccessToken+"x", nil).Expect(t, "ping with a forged token", 401, 40006)
	admin := s.login("superAdmin", adminPassword).AccessToken

	// A user with a password and a phone; its first login, a refused and a
	// good password change, an admin reset.
	r := s.do("POST", "/api/v1/sys/user", admin, map[string]any{
		"account": "leakuser", "name": "Leak User", "password": userPassword, "phone": userPhone, "orgId": 1,
	}).Expect(t, "create user", 200, 0)
	var created struct {
		ID int64 `json:"id"`
	}
	r.Decode(t, &created)
	user := s.login("leakuser", userPassword).AccessToken
	s.do("PUT", "/api/v1/personal/password", user, map[string]string{"oldPassword": wrongPassword, "newPassword": userBadNew}).Expect(t, "change with a wrong old password", 200, 40001)
	s.do("PUT", "/api/v1/personal/password", user, map[string]string{"oldPassword": userPassword, "newPassword": "short"})
	s.do("PUT", "/api/v1/personal/password", user, map[string]string{"oldPassword": userPassword, "newPassword": userNewPassword}).Expect(t, "change password", 200, 0)
	s.login("leakuser", userNewPassword)
	s.do("PUT", fmt.Sprintf("/api/v1/sys/user/%d/password", created.ID), admin, map[string]string{"newPassword": resetPassword}).Expect(t, "reset password", 200, 0)
	s.login("leakuser", resetPassword)

	// SMS login through the gateway: a wrong code, then the right one.
	s.do("POST", "/api/v1/auth/sms/send", "", map[string]string{"phone": userPhone}).Expect(t, "send SMS code", 200, 0)
	code := gw.code(userPhone)
	if len(code) != 6 {
		t.Fatalf("the gateway received code %q (bad requests: %d)", code, gw.bad)
	}
	s.mu.Lock()
	s.codes = append(s.codes, code)
	s.mu.Unlock()
	wrong := fmt.Sprintf("%06d", (atoi(code)+1)%1000000)
	if r := s.do("POST", "/api/v1/auth/sms/login", "", map[string]string{"phone": userPhone, "code": wrong}); r.Code == 0 {
		t.Fatalf("a wrong SMS code logged in: %s", r.Raw)
	}
	s.tokens("SMS login", s.do("POST", "/api/v1/auth/sms/login", "", map[string]string{"phone": userPhone, "code": code}))

	// External login: a full login and exchange, a replayed ticket, a bad
	// code, and a provider whose client secret the provider refuses.
	b := newBrowser(s)
	cb := is.Login(t, b.authorize("corp"), "alice")
	res := b.follow(cb)
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("external login ended in %s, want a ticket", res)
	}
	s.secret("login ticket", ticket)
	s.tokens("exchange", b.post("/api/v1/auth/external/exchange", map[string]string{"ticket": ticket}))
	b.post("/api/v1/auth/external/exchange", map[string]string{"ticket": ticket}).Expect(t, "replayed ticket", 200, 40014)
	bad, _ := url.Parse(b.authorize("corp"))
	q := url.Values{"state": {bad.Query().Get("state")}, "code": {"not-a-code"}}
	if res := b.follow(&url.URL{Path: "/api/v1/auth/external/corp/callback", RawQuery: q.Encode()}); res.Query().Get("error") == "" {
		t.Fatalf("a bad code ended in %s, want an error", res)
	}
	if res := b.follow(is.Login(t, b.authorize("corpbad"), "alice")); res.Query().Get("error") == "" {
		t.Fatalf("a refused client secret ended in %s, want an error", res)
	}

	// Op-logged writes carrying secrets in the body and the query.
	echo := map[string]any{
		"password": echoPassword, "newPassword": userNewPassword,
		"nested": map[string]any{"clientSecret": is.ClientSecret, "refreshToken": first.RefreshToken, "corpSecret": corpSecret,
			"list": []any{map[string]any{"accessToken": admin}, map[string]any{"webhookSecret": webhookSecret}}},
		"Authorization": "Bearer " + admin,
	}
	s.do("POST", "/api/v1/leaktest/echo?token="+url.QueryEscape(second.AccessToken)+"&password="+url.QueryEscape(echoPassword), admin, echo).Expect(t, "op-logged echo", 200, 0)

	// Panics and unhandled errors, with secrets in the request.
	s.do("POST", "/api/v1/leaktest/panic", admin, echo).Expect(t, "panic", 500, 50000)
	s.do("GET", "/api/v1/leaktest/panic-error?password="+url.QueryEscape(echoPassword), admin, nil).Expect(t, "panic with an error", 500, 50000)
	s.do("POST", "/api/v1/leaktest/sql-error", admin, echo).Expect(t, "SQL error", 500, 50000)
	s.do("GET", "/api/v1/leaktest/unhandled", admin, nil).Expect(t, "unhandled error", 500, 50000)
	s.do("POST", "/api/v1/auth/logout", admin, nil).Expect(t, "logout", 200, 0)

	waitForOpLog(t, k, "/api/v1/leaktest/sql-error")

	// The scans.
	scan := func(where, text string) {
		t.Helper()
		for v, what := range s.secrets {
			if strings.Contains(text, v) {
				t.Errorf("%s contains the %s %q:\n%s", where, what, v, excerpt(text, v))
			}
		}
		for _, c := range s.codes {
			if m := regexp.MustCompile(`(^|[^0-9])` + c + `([^0-9]|$)`).FindStringIndex(text); m != nil {
				t.Errorf("%s contains the SMS code %s:\n%s", where, c, excerpt(text, c))
			}
		}
	}
	scan("the kernel log", k.Log())

	for _, row := range k.Ent().SysOpLog.Query().AllX(ctx) {
		scan(fmt.Sprintf("operation log row %d (%s %s)", row.ID, row.HTTPMethod, row.Path), row.String()+deref(row.ParamJSON)+deref(row.ExceptionMessage))
	}
	for _, row := range k.Ent().SysExceptionLog.Query().AllX(ctx) {
		scan(fmt.Sprintf("exception log row %d (%s %s)", row.ID, row.HTTPMethod, row.Path), row.String()+deref(row.Message)+deref(row.StackTrace))
	}
	for _, row := range k.Ent().SysLoginLog.Query().AllX(ctx) {
		scan(fmt.Sprintf("login log row %d", row.ID), row.String())
	}
	errorsSeen := 0
	for _, r := range s.replies {
		if r.reply.Status == http.StatusOK && r.reply.Code == 0 || r.reply.Status >= 300 && r.reply.Status < 400 {
			continue
		}
		errorsSeen++
		for _, bad := range forbiddenInErrors {
			if strings.Contains(r.reply.Raw, bad) {
				t.Errorf("the error answer of %s (HTTP %d) contains %q: %s", r.what, r.reply.Status, bad, r.reply.Raw)
			}
		}
		scan("the error answer of "+r.what, r.reply.Raw)
	}

	// The scenario must have reached what it claims to cover.
	for _, want := range []string{"panic", "no_such_column", "external login callback", "refresh"} {
		if !strings.Contains(k.Log(), want) {
			t.Errorf("the kernel log never mentions %q: the scenario did not reach it", want)
		}
	}
	if n := k.Ent().SysExceptionLog.Query().CountX(ctx); n < 4 {
		t.Errorf("%d exception-log rows, want at least 4 (two panics, two unhandled errors)", n)
	}
	if n := k.Ent().SysLoginLog.Query().CountX(ctx); n < 8 {
		t.Errorf("%d login-log rows, want at least 8", n)
	}
	if errorsSeen < 10 {
		t.Errorf("only %d error answers were checked", errorsSeen)
	}

	// The suite-wide sweep (shapes of tokens included) finds nothing either.
	var lits []string
	for v := range s.secrets {
		lits = append(lits, v)
	}
	if places := leakcheck.Sweep(t, k, leakcheck.Check{Secrets: lits}); places < 10 {
		t.Errorf("the sweep searched only %d places", places)
	}
}

func waitForOpLog(t *testing.T, k *kerneltest.Kernel, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if k.Ent().SysOpLog.Query().Where(sysoplog.Path(path)).ExistX(context.Background()) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no operation-log row for %s after 10 s", path)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// excerpt shows the text around the first occurrence of v.
func excerpt(text, v string) string {
	i := strings.Index(text, v)
	if i < 0 {
		if m := regexp.MustCompile(`(^|[^0-9])` + regexp.QuoteMeta(v) + `([^0-9]|$)`).FindStringIndex(text); m != nil {
			i = m[0]
		} else {
			return ""
		}
	}
	from, to := max(i-300, 0), min(i+len(v)+300, len(text))
	return "…" + text[from:to] + "…"
}

// browser keeps the cookies of the external-login flow.
type browser struct {
	s   *scenario
	jar map[string]string
}

func newBrowser(s *scenario) *browser { return &browser{s: s, jar: map[string]string{}} }

func (b *browser) request(method, target string, body io.Reader) kerneltest.Reply {
	b.s.t.Helper()
	req := httptest.NewRequest(method, target, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, v := range b.jar {
		req.AddCookie(&http.Cookie{Name: name, Value: v})
	}
	r := b.s.send(req)
	for _, line := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			b.s.t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		if c.MaxAge < 0 || c.Value == "" {
			delete(b.jar, c.Name)
		} else {
			b.jar[c.Name] = c.Value
		}
	}
	return r
}

// authorize starts an external login and returns the provider URL.
func (b *browser) authorize(provider string) string {
	b.s.t.Helper()
	r := b.request("GET", "/api/v1/auth/external/"+provider+"/authorize", nil)
	if r.Status != http.StatusFound {
		b.s.t.Fatalf("authorize %s: HTTP %d %s", provider, r.Status, r.Raw)
	}
	return r.Header.Get("Location")
}

// follow sends the provider's redirect back to the kernel and returns the
// frontend result URL.
func (b *browser) follow(cb *url.URL) *url.URL {
	b.s.t.Helper()
	r := b.request("GET", cb.RequestURI(), nil)
	if r.Status != http.StatusFound {
		b.s.t.Fatalf("callback: HTTP %d %s", r.Status, r.Raw)
	}
	u, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		b.s.t.Fatal(err)
	}
	return u
}

func (b *browser) post(path string, body any) kerneltest.Reply {
	b.s.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		b.s.t.Fatal(err)
	}
	return b.request("POST", path, strings.NewReader(string(raw)))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
