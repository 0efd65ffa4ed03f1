package host_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/token"
)

// tryLogin posts a login and returns the answer, whatever it is.
func tryLogin(k *kerneltest.Kernel, account, pw string) kerneltest.Reply {
	k.T.Helper()
	return k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
}

// refresh exchanges a refresh token; the pair is decoded on success.
func refresh(k *kerneltest.Kernel, rt string) (kerneltest.Tokens, kerneltest.Reply) {
	k.T.Helper()
	r := k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": rt})
	var tp kerneltest.Tokens
	if r.Code == 0 {
		r.Decode(k.T, &tp)
	}
	return tp, r
}

// addUser creates an enabled user directly, hashed with the given PBKDF2
// iterations, who must change the password, optionally granted the ping
// button (menu 301) through a role.
func addUser(t *testing.T, k *kerneltest.Kernel, account, pw string, iterations int, grantPing bool) int64 {
	t.Helper()
	ctx := context.Background()
	h, err := password.New(iterations).Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	u := k.Ent().SysUser.Create().SetAccount(account).SetName(account).SetPasswordHash(h).SetMustChangePassword(true).SaveX(ctx)
	if grantPing {
		role := k.Ent().SysRole.Create().SetName("ping-" + account).SetCode("ping_" + account).SaveX(ctx)
		k.Ent().SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(301).ExecX(ctx)
		k.Ent().SysUserRole.Create().SetUserID(u.ID).SetRoleID(role.ID).ExecX(ctx)
	}
	return u.ID
}

func TestLoginPingRefreshLogout(t *testing.T) {
	k, pw := kerneltest.Start(t, []string{"Service__Security__Session__RefreshGraceSeconds=1"}), kerneltest.AdminPassword
	tp := k.Login("superAdmin", pw)
	if !tp.IsSuperAdmin || tp.MustChangePassword {
		t.Fatalf("super-admin login output: %+v", tp)
	}
	r := k.Do("GET", "/api/v1/ping", tp.AccessToken, nil)
	r.Expect(t, "ping", 200, 0)
	if !strings.Contains(string(r.Data), `"pong":true`) || !strings.Contains(string(r.Data), `"account":"superAdmin"`) {
		t.Fatalf("ping data = %s", r.Data)
	}

	// Rotation: the new pair works.
	tp2, r := refresh(k, tp.RefreshToken)
	r.Expect(t, "refresh", 200, 0)
	if tp2.RefreshToken == tp.RefreshToken || tp2.AccessToken == "" {
		t.Fatal("refresh did not rotate")
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token response Cache-Control = %q, want no-store", r.Header.Get("Cache-Control"))
	}
	k.Do("GET", "/api/v1/ping", tp2.AccessToken, nil).Expect(t, "ping with the new token", 200, 0)

	// After the grace window the old token is reuse: the whole session dies.
	time.Sleep(1200 * time.Millisecond)
	_, r = refresh(k, tp.RefreshToken)
	r.Expect(t, "reuse of the rotated token", 200, 40007)
	_, r = refresh(k, tp2.RefreshToken)
	r.Expect(t, "newest refresh token after reuse", 200, 40007)
	k.Do("GET", "/api/v1/ping", tp2.AccessToken, nil).Expect(t, "access token of the revoked session", 401, 40006)

	// Logout: the next request with the same token is refused.
	tp3 := k.Login("superAdmin", pw)
	k.Do("POST", "/api/v1/auth/logout", tp3.AccessToken, nil).Expect(t, "logout", 200, 0)
	k.Do("GET", "/api/v1/ping", tp3.AccessToken, nil).Expect(t, "ping after logout", 401, 40006)
	k.Do("GET", "/api/v1/personal/profile", tp3.AccessToken, nil).Expect(t, "profile after logout", 401, 40006)
}

func TestRefreshGraceTwoTabs(t *testing.T) {
	k, pw := kerneltest.Start(t, []string{"Service__Security__Session__RefreshGraceSeconds=10"}), kerneltest.AdminPassword
	tp := k.Login("superAdmin", pw)
	tabA, r := refresh(k, tp.RefreshToken)
	r.Expect(t, "tab A refresh", 200, 0)
	tabB, r := refresh(k, tp.RefreshToken)
	r.Expect(t, "tab B refresh inside the grace window", 200, 0)
	k.Do("GET", "/api/v1/ping", tabA.AccessToken, nil).Expect(t, "tab A ping", 200, 0)
	k.Do("GET", "/api/v1/ping", tabB.AccessToken, nil).Expect(t, "tab B ping", 200, 0)
}

func TestParallelRefreshStrict(t *testing.T) {
	k, pw := kerneltest.Start(t, []string{"Service__Security__Session__RefreshGraceSeconds=0"}), kerneltest.AdminPassword
	tp := k.Login("superAdmin", pw)
	var wg sync.WaitGroup
	codes := make([]int, 5)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, r := refresh(k, tp.RefreshToken)
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
	k, pw := kerneltest.Start(t, nil), kerneltest.AdminPassword
	admin := k.Login("superAdmin", pw)
	uid := addUser(t, k, "alice", "Alice#Pass1", 100000, true)
	addUser(t, k, "bob", "Bob#Pass12", 100000, false)
	// Sessions of users who must change their password only change it
	// (TestMustChangePasswordEnforced): these two have done so.
	k.Ent().SysUser.Update().Where(sysuser.AccountIn("alice", "bob")).SetMustChangePassword(false).ExecX(context.Background())
	alice := k.Login("alice", "Alice#Pass1")
	if alice.MustChangePassword || alice.IsSuperAdmin {
		t.Fatalf("alice output %+v", alice)
	}
	k.Do("GET", "/api/v1/ping", alice.AccessToken, nil).Expect(t, "alice ping (granted)", 200, 0)
	bob := k.Login("bob", "Bob#Pass12")
	k.Do("GET", "/api/v1/ping", bob.AccessToken, nil).Expect(t, "bob ping (not granted)", 403, 41001)
	k.Do("GET", "/api/v1/sys/session/online", bob.AccessToken, nil).Expect(t, "bob online sessions (not granted)", 403, 41001)

	r := k.Do("GET", fmt.Sprintf("/api/v1/sys/session/online?UserId=%d", uid), admin.AccessToken, nil)
	r.Expect(t, "online sessions", 200, 0)
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
	k.Do("DELETE", "/api/v1/sys/session/"+page.Items[0].SessionID, admin.AccessToken, nil).Expect(t, "force logout", 200, 0)
	k.Do("GET", "/api/v1/ping", alice.AccessToken, nil).Expect(t, "alice after force logout", 401, 40006)
	k.Do("DELETE", "/api/v1/sys/session/nope", admin.AccessToken, nil).Expect(t, "force logout of an unknown session", 200, 42024)
}

func TestLockoutSameForExistingAndUnknownNames(t *testing.T) {
	k, pw := kerneltest.Start(t, nil), kerneltest.AdminPassword
	for _, account := range []string{"superAdmin", "ghost-user"} {
		for i := 1; i <= 5; i++ {
			r := tryLogin(k, account, "wrong-password")
			want := 40001
			if i == 5 {
				want = 40004
			}
			r.Expect(t, fmt.Sprintf("%s attempt %d", account, i), 200, want)
		}
		r := tryLogin(k, account, "wrong-password")
		r.Expect(t, account+" while locked", 200, 40004)
		if r.Args["lockMinutes"] == nil {
			t.Errorf("40004 without lockMinutes: %s", r.Raw)
		}
	}
	r := tryLogin(k, "superAdmin", pw)
	r.Expect(t, "right password while locked", 200, 40004)
}

func TestRateLimit(t *testing.T) {
	k := kerneltest.Start(t, nil)
	// kerneltest turns the rate limit off; this test is about it.
	// A small auth allowance keeps the loop short (the default is 1200).
	for key, v := range map[string]string{"sys.security.rateLimit.enabled": "true", "sys.security.rateLimit.authPermitPerWindow": "20"} {
		if err := k.Settings().Set(context.Background(), key, v); err != nil {
			t.Fatal(err)
		}
	}
	var last kerneltest.Reply
	for i := 0; i < 21; i++ {
		last = k.Do("GET", "/api/v1/auth/captcha", "", nil)
	}
	last.Expect(t, "21st auth request", 429, 40008)
	if ra := last.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
}

func TestCaptchaRequiredAndSingleUse(t *testing.T) {
	k, pw := kerneltest.Start(t, []string{"Service__Security__Captcha__Enabled=true"}), kerneltest.AdminPassword
	r := tryLogin(k, "superAdmin", pw)
	r.Expect(t, "login without captcha", 200, 40002)
	r = k.Do("GET", "/api/v1/auth/captcha", "", nil)
	r.Expect(t, "captcha", 200, 0)
	var ch struct {
		CaptchaID string `json:"captchaId"`
		SVG       string `json:"svg"`
	}
	if err := json.Unmarshal(r.Data, &ch); err != nil || ch.CaptchaID == "" || !strings.HasPrefix(strings.TrimSpace(ch.SVG), "<svg") {
		t.Fatalf("captcha data = %s", r.Data)
	}
	body := map[string]string{"account": "superAdmin", "password": pw, "captchaId": ch.CaptchaID, "captchaCode": "zzzz"}
	k.Do("POST", "/api/v1/auth/login", "", body).Expect(t, "wrong captcha", 200, 40003)
	k.Do("POST", "/api/v1/auth/login", "", body).Expect(t, "captcha reused after a wrong answer", 200, 40002)
}

func TestOldHashIsUpgradedAtLogin(t *testing.T) {
	// The default iterations: the user's 100000 are below them.
	k := kerneltest.Start(t, []string{"Service__Security__Password__Pbkdf2Iterations=600000"})
	addUser(t, k, "legacy", "Legacy#Pass1", 100000, false)
	k.Login("legacy", "Legacy#Pass1")
	u := k.Ent().SysUser.Query().Where(sysuser.Account("legacy")).OnlyX(context.Background())
	if n, _ := password.IterationsOf(u.PasswordHash); n != 600000 {
		t.Fatalf("hash iterations after login = %d, want 600000", n)
	}
	k.Login("legacy", "Legacy#Pass1")
}

func TestBadTokens(t *testing.T) {
	k, pw := kerneltest.Start(t, []string{"Service__Security__Jwt__ClockSkewSeconds=0"}), kerneltest.AdminPassword
	tp := k.Login("superAdmin", pw)
	k.Do("GET", "/api/v1/ping", tp.AccessToken, nil).Expect(t, "ping with the genuine token", 200, 0)
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
		"expired":          expiredToken(t, k, claims["sid"].(string)),
		"refresh token":    tp.RefreshToken,
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			k.Do("GET", "/api/v1/ping", tok, nil).Expect(t, "ping with a bad token", 401, 40006)
		})
	}
}

// expiredToken signs a correctly formed token for a live session with the
// kernel's own key, issued three hours ago for one hour.
func expiredToken(t *testing.T, k *kerneltest.Kernel, sid string) string {
	t.Helper()
	key, err := token.SigningKey(k.Config())
	if err != nil {
		t.Fatal(err)
	}
	iss, err := token.NewIssuer(key, k.Config().Service.Security.Jwt.Issuer, 0)
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
