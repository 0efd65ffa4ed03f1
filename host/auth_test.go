package host_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/token"
)

// api drives a kernel over its real HTTP stack.
type api struct {
	t *testing.T
	k *host.Kernel
}

type reply struct {
	Status int
	Header http.Header
	Code   int             `json:"code"`
	MsgKey string          `json:"msgKey"`
	Args   map[string]any  `json:"args"`
	Data   json.RawMessage `json:"data"`
	Raw    string
}

func (a api) do(method, path, token string, body any) reply {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = strings.NewReader(string(b))
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.k.App().Test(req, fiberTestConfig)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if err := json.Unmarshal(raw, &r); err != nil {
		a.t.Fatalf("%s %s: body %q is not an envelope", method, path, raw)
	}
	return r
}

type tokenPair struct {
	AccessToken        string `json:"accessToken"`
	RefreshToken       string `json:"refreshToken"`
	MustChangePassword bool   `json:"mustChangePassword"`
	IsSuperAdmin       bool   `json:"isSuperAdmin"`
	UserID             int64  `json:"userId"`
}

func (a api) login(account, pw string) (tokenPair, reply) {
	a.t.Helper()
	r := a.do("POST", "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
	var tp tokenPair
	if r.Code == 0 {
		if err := json.Unmarshal(r.Data, &tp); err != nil {
			a.t.Fatal(err)
		}
	}
	return tp, r
}

func (a api) mustLogin(account, pw string) tokenPair {
	a.t.Helper()
	tp, r := a.login(account, pw)
	if r.Status != 200 || r.Code != 0 || tp.AccessToken == "" || tp.RefreshToken == "" {
		a.t.Fatalf("login %s = %d %s", account, r.Status, r.Raw)
	}
	return tp
}

func (a api) refresh(rt string) (tokenPair, reply) {
	a.t.Helper()
	r := a.do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": rt})
	var tp tokenPair
	if r.Code == 0 {
		_ = json.Unmarshal(r.Data, &tp)
	}
	return tp, r
}

func expect(t *testing.T, what string, r reply, status, code int) {
	t.Helper()
	if r.Status != status || r.Code != code {
		t.Fatalf("%s = HTTP %d code %d, want HTTP %d code %d (%s)", what, r.Status, r.Code, status, code, r.Raw)
	}
}

// authKernel starts a Development kernel with a known super-admin password
// and the extra settings given.
func authKernel(t *testing.T, environ ...string) (api, string) {
	t.Helper()
	const pw = "Adm1n#Passw0rd"
	env := append([]string{
		"Service__Seed__AdminPassword=" + pw,
		"Service__Security__Password__Pbkdf2Iterations=100000",
	}, environ...)
	k, _ := start(t, load(t, t.TempDir(), config.Development, env...))
	return api{t: t, k: k}, pw
}

// addUser creates an enabled user directly, optionally granted the ping
// button (menu 301) through a role.
func addUser(t *testing.T, a api, account, pw string, iterations int, grantPing bool) int64 {
	t.Helper()
	ctx := context.Background()
	h, err := password.New(iterations).Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	u := a.k.Ent().SysUser.Create().SetAccount(account).SetName(account).SetPasswordHash(h).SetMustChangePassword(true).SaveX(ctx)
	if grantPing {
		role := a.k.Ent().SysRole.Create().SetName("ping-" + account).SetCode("ping_" + account).SaveX(ctx)
		a.k.Ent().SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(301).ExecX(ctx)
		a.k.Ent().SysUserRole.Create().SetUserID(u.ID).SetRoleID(role.ID).ExecX(ctx)
	}
	return u.ID
}

func TestLoginPingRefreshLogout(t *testing.T) {
	a, pw := authKernel(t, "Service__Security__Session__RefreshGraceSeconds=1")
	tp := a.mustLogin("superAdmin", pw)
	if !tp.IsSuperAdmin || tp.MustChangePassword {
		t.Fatalf("super-admin login output: %+v", tp)
	}
	r := a.do("GET", "/api/v1/ping", tp.AccessToken, nil)
	expect(t, "ping", r, 200, 0)
	if !strings.Contains(string(r.Data), `"pong":true`) || !strings.Contains(string(r.Data), `"account":"superAdmin"`) {
		t.Fatalf("ping data = %s", r.Data)
	}

	// Rotation: the new pair works.
	tp2, r := a.refresh(tp.RefreshToken)
	expect(t, "refresh", r, 200, 0)
	if tp2.RefreshToken == tp.RefreshToken || tp2.AccessToken == "" {
		t.Fatal("refresh did not rotate")
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token response Cache-Control = %q, want no-store", r.Header.Get("Cache-Control"))
	}
	expect(t, "ping with the new token", a.do("GET", "/api/v1/ping", tp2.AccessToken, nil), 200, 0)

	// After the grace window the old token is reuse: the whole session dies.
	time.Sleep(1200 * time.Millisecond)
	_, r = a.refresh(tp.RefreshToken)
	expect(t, "reuse of the rotated token", r, 200, 40007)
	_, r = a.refresh(tp2.RefreshToken)
	expect(t, "newest refresh token after reuse", r, 200, 40007)
	expect(t, "access token of the revoked session", a.do("GET", "/api/v1/ping", tp2.AccessToken, nil), 401, 40006)

	// Logout: the next request with the same token is refused.
	tp3 := a.mustLogin("superAdmin", pw)
	expect(t, "logout", a.do("POST", "/api/v1/auth/logout", tp3.AccessToken, nil), 200, 0)
	expect(t, "ping after logout", a.do("GET", "/api/v1/ping", tp3.AccessToken, nil), 401, 40006)
	expect(t, "profile after logout", a.do("GET", "/api/v1/personal/profile", tp3.AccessToken, nil), 401, 40006)
}

func TestRefreshGraceTwoTabs(t *testing.T) {
	a, pw := authKernel(t, "Service__Security__Session__RefreshGraceSeconds=10")
	tp := a.mustLogin("superAdmin", pw)
	tabA, r := a.refresh(tp.RefreshToken)
	expect(t, "tab A refresh", r, 200, 0)
	tabB, r := a.refresh(tp.RefreshToken)
	expect(t, "tab B refresh inside the grace window", r, 200, 0)
	expect(t, "tab A ping", a.do("GET", "/api/v1/ping", tabA.AccessToken, nil), 200, 0)
	expect(t, "tab B ping", a.do("GET", "/api/v1/ping", tabB.AccessToken, nil), 200, 0)
}

func TestParallelRefreshStrict(t *testing.T) {
	a, pw := authKernel(t, "Service__Security__Session__RefreshGraceSeconds=0")
	tp := a.mustLogin("superAdmin", pw)
	var wg sync.WaitGroup
	codes := make([]int, 5)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, r := a.refresh(tp.RefreshToken)
			codes[i] = r.Code
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		if c == 0 {
			ok++
		} else if c != 40007 {
			t.Errorf("refresh answered %d, want 0 or 40007", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of 5 parallel refreshes succeeded (%v), want exactly 1", ok, codes)
	}
}

func TestForceLogoutAndPermissions(t *testing.T) {
	a, pw := authKernel(t)
	admin := a.mustLogin("superAdmin", pw)
	uid := addUser(t, a, "alice", "Alice#Pass1", 100000, true)
	addUser(t, a, "bob", "Bob#Pass12", 100000, false)
	// Sessions of users who must change their password only change it
	// (TestMustChangePasswordEnforced): these two have done so.
	a.k.Ent().SysUser.Update().Where(sysuser.AccountIn("alice", "bob")).SetMustChangePassword(false).ExecX(context.Background())
	alice := a.mustLogin("alice", "Alice#Pass1")
	if alice.MustChangePassword || alice.IsSuperAdmin {
		t.Fatalf("alice output %+v", alice)
	}
	expect(t, "alice ping (granted)", a.do("GET", "/api/v1/ping", alice.AccessToken, nil), 200, 0)
	bob := a.mustLogin("bob", "Bob#Pass12")
	expect(t, "bob ping (not granted)", a.do("GET", "/api/v1/ping", bob.AccessToken, nil), 403, 41001)
	expect(t, "bob online sessions (not granted)", a.do("GET", "/api/v1/sys/session/online", bob.AccessToken, nil), 403, 41001)

	r := a.do("GET", fmt.Sprintf("/api/v1/sys/session/online?UserId=%d", uid), admin.AccessToken, nil)
	expect(t, "online sessions", r, 200, 0)
	var page struct {
		Total int `json:"total"`
		Items []struct {
			SessionID string `json:"sessionId"`
			UserID    int64  `json:"userId"`
		} `json:"items"`
	}
	if err := json.Unmarshal(r.Data, &page); err != nil || page.Total != 1 || page.Items[0].UserID != uid {
		t.Fatalf("online page = %s (%v)", r.Data, err)
	}
	expect(t, "force logout", a.do("DELETE", "/api/v1/sys/session/"+page.Items[0].SessionID, admin.AccessToken, nil), 200, 0)
	expect(t, "alice after force logout", a.do("GET", "/api/v1/ping", alice.AccessToken, nil), 401, 40006)
	expect(t, "force logout of an unknown session", a.do("DELETE", "/api/v1/sys/session/nope", admin.AccessToken, nil), 200, 42024)
}

func TestLockoutSameForExistingAndUnknownNames(t *testing.T) {
	a, pw := authKernel(t)
	for _, account := range []string{"superAdmin", "ghost-user"} {
		for i := 1; i <= 5; i++ {
			_, r := a.login(account, "wrong-password")
			want := 40001
			if i == 5 {
				want = 40004
			}
			expect(t, fmt.Sprintf("%s attempt %d", account, i), r, 200, want)
		}
		_, r := a.login(account, "wrong-password")
		expect(t, account+" while locked", r, 200, 40004)
		if r.Args["lockMinutes"] == nil {
			t.Errorf("40004 without lockMinutes: %s", r.Raw)
		}
	}
	_, r := a.login("superAdmin", pw)
	expect(t, "right password while locked", r, 200, 40004)
}

func TestRateLimit(t *testing.T) {
	a, _ := authKernel(t)
	var last reply
	for i := 0; i < 21; i++ {
		last = a.do("GET", "/api/v1/auth/captcha", "", nil)
	}
	expect(t, "21st auth request", last, 429, 40008)
	if ra := last.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
}

func TestCaptchaRequiredAndSingleUse(t *testing.T) {
	a, pw := authKernel(t, "Service__Security__Captcha__Enabled=true")
	_, r := a.login("superAdmin", pw)
	expect(t, "login without captcha", r, 200, 40002)
	r = a.do("GET", "/api/v1/auth/captcha", "", nil)
	expect(t, "captcha", r, 200, 0)
	var ch struct {
		CaptchaID string `json:"captchaId"`
		SVG       string `json:"svg"`
	}
	if err := json.Unmarshal(r.Data, &ch); err != nil || ch.CaptchaID == "" || !strings.HasPrefix(strings.TrimSpace(ch.SVG), "<svg") {
		t.Fatalf("captcha data = %s", r.Data)
	}
	body := map[string]string{"account": "superAdmin", "password": pw, "captchaId": ch.CaptchaID, "captchaCode": "zzzz"}
	expect(t, "wrong captcha", a.do("POST", "/api/v1/auth/login", "", body), 200, 40003)
	expect(t, "captcha reused after a wrong answer", a.do("POST", "/api/v1/auth/login", "", body), 200, 40002)
}

func TestOldHashIsUpgradedAtLogin(t *testing.T) {
	k, _ := start(t, load(t, t.TempDir(), config.Development, "Service__Seed__AdminPassword=Adm1n#Passw0rd"))
	a := api{t: t, k: k}
	addUser(t, a, "legacy", "Legacy#Pass1", 100000, false)
	a.mustLogin("legacy", "Legacy#Pass1")
	u := k.Ent().SysUser.Query().Where(sysuser.Account("legacy")).OnlyX(context.Background())
	if n, _ := password.IterationsOf(u.PasswordHash); n != 600000 {
		t.Fatalf("hash iterations after login = %d, want 600000", n)
	}
	a.mustLogin("legacy", "Legacy#Pass1")
}

func TestBadTokens(t *testing.T) {
	a, pw := authKernel(t, "Service__Security__Jwt__ClockSkewSeconds=0")
	tp := a.mustLogin("superAdmin", pw)
	expect(t, "ping with the genuine token", a.do("GET", "/api/v1/ping", tp.AccessToken, nil), 200, 0)
	parts := strings.Split(tp.AccessToken, ".")
	enc := base64.RawURLEncoding
	payload, _ := enc.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(payload, &claims)
	forge := func(header string, mutate func(map[string]any), sig string) string {
		c := map[string]any{}
		for k, v := range claims {
			c[k] = v
		}
		mutate(c)
		b, _ := json.Marshal(c)
		return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString(b) + "." + sig
	}
	tests := map[string]string{
		"missing":          "",
		"garbage":          "not-a-jwt",
		"tampered payload": forge(`{"alg":"HS256","typ":"at+jwt"}`, func(c map[string]any) { c["unique_name"] = "mallory" }, parts[2]),
		"alg none":         forge(`{"alg":"none","typ":"at+jwt"}`, func(map[string]any) {}, ""),
		"alg HS512":        forge(`{"alg":"HS512","typ":"at+jwt"}`, func(map[string]any) {}, parts[2]),
		"forged exp":       forge(`{"alg":"HS256","typ":"at+jwt"}`, func(c map[string]any) { c["exp"] = time.Now().Add(time.Hour).Unix() }, parts[2]),
		"expired":          expiredToken(t, a, claims["sid"].(string)),
		"refresh token":    tp.RefreshToken,
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			expect(t, "ping with a bad token", a.do("GET", "/api/v1/ping", tok, nil), 401, 40006)
		})
	}
}

// expiredToken signs a correctly formed token for a live session with the
// kernel's own key, issued three hours ago for one hour.
func expiredToken(t *testing.T, a api, sid string) string {
	t.Helper()
	key, err := token.SigningKey(a.k.Config())
	if err != nil {
		t.Fatal(err)
	}
	iss, err := token.NewIssuer(key, a.k.Config().Service.Security.Jwt.Issuer, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := iss.WithClock(func() time.Time { return time.Now().Add(-3 * time.Hour) }).
		Issue(token.Claims{UserID: 1, Account: "superAdmin", SessionID: sid, SuperAdmin: true}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fiberTestConfig gives requests that hash passwords time under -race.
var fiberTestConfig = fiber.TestConfig{Timeout: 60 * time.Second}
