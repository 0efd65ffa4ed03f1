package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// trustAll makes X-Forwarded-For name the client (every peer is a trusted
// proxy), so that one kernel sees several clients.
var trustAll = []string{"Service__Http__TrustedProxies__0=0.0.0.0/0", "Service__Http__TrustedProxies__1=::/0"}

// from sends a JSON request as the client ip.
func from(k *kerneltest.Kernel, ip, method, path, tok string, body string) kerneltest.Reply {
	k.T.Helper()
	req := httptest.NewRequestWithContext(k.T.Context(), method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return k.Send(req)
}

func loginBody(account, pw, captchaID, captchaCode string) string {
	b := `{"account":"` + account + `","password":"` + pw + `"`
	if captchaID != "" {
		b += `,"captchaId":"` + captchaID + `","captchaCode":"` + captchaCode + `"`
	}
	return b + "}"
}

// captchaWith fetches a challenge (as ip) and sets its answer.
func captchaWith(t *testing.T, k *kerneltest.Kernel, ip, answer string) string {
	t.Helper()
	var ch struct {
		CaptchaID string `json:"captchaId"`
	}
	from(k, ip, "GET", "/api/v1/auth/captcha", "", "").Expect(t, "captcha", 200, 0).Decode(t, &ch)
	if err := k.Captcha().SetAnswer(context.Background(), ch.CaptchaID, answer); err != nil {
		t.Fatal(err)
	}
	return ch.CaptchaID
}

// TestLockoutAttackerCannotHoldTheAdminOut: an attacker hammering the only
// super-admin's account from one client, well beyond the per-client lock
// (5) and the account-wide captcha threshold (20), only locks itself out.
// The super-admin, from another client, is asked for a captcha (40029),
// answers it and logs in; the attacker stays locked (40004), also with the
// right password. An unknown name behaves the same, and case variants of
// the account share its counters.
func TestLockoutAttackerCannotHoldTheAdminOut(t *testing.T) {
	k := kerneltest.Start(t, trustAll)
	const attacker, admin, other = "203.0.113.7", "198.51.100.9", "2001:db8::5"
	for _, account := range []string{"superAdmin", "ghost-user"} {
		t.Run(account, func(t *testing.T) {
			for i := 1; i <= 30; i++ {
				want := errcode.PasswordWrong
				if i >= 5 {
					want = errcode.AccountLocked
				}
				r := from(k, attacker, "POST", "/api/v1/auth/login", "", loginBody(account, "wrong-password", "", ""))
				r.ExpectCode(t, "attack "+account, want)
				if want == errcode.AccountLocked && r.Args["lockMinutes"] == nil {
					t.Fatalf("40004 without lockMinutes: %s", r.Raw)
				}
			}
			pw := "wrong-password"
			if account == "superAdmin" {
				pw = kerneltest.AdminPassword
			}
			// From a fresh client: a captcha is required, with the right
			// password or not, and in any letter case of the account.
			from(k, admin, "POST", "/api/v1/auth/login", "", loginBody(account, pw, "", "")).
				ExpectCode(t, "fresh client without captcha", errcode.CaptchaRequired)
			from(k, other, "POST", "/api/v1/auth/login", "", loginBody(strings.ToUpper(account), pw, "", "")).
				ExpectCode(t, "upper-case variant without captcha", errcode.CaptchaRequired)
			id := captchaWith(t, k, admin, "K7PX")
			from(k, admin, "POST", "/api/v1/auth/login", "", loginBody(account, pw, id, "zzzz")).
				ExpectCode(t, "wrong captcha", errcode.CaptchaWrong)
			from(k, admin, "POST", "/api/v1/auth/login", "", loginBody(account, pw, id, "k7px")).
				ExpectCode(t, "used captcha", errcode.CaptchaExpired)
			id = captchaWith(t, k, admin, "K7PX")
			r := from(k, admin, "POST", "/api/v1/auth/login", "", loginBody(account, pw, id, "k7px"))
			if account == "superAdmin" {
				r.Expect(t, "super-admin with captcha from a fresh client", 200, 0)
				var tp kerneltest.Tokens
				r.Decode(t, &tp)
				if tp.AccessToken == "" || !tp.IsSuperAdmin {
					t.Fatalf("login answer %s", r.Raw)
				}
			} else {
				r.ExpectCode(t, "unknown name with captcha", errcode.PasswordWrong)
			}
			from(k, attacker, "POST", "/api/v1/auth/login", "", loginBody(account, pw, "", "")).
				ExpectCode(t, "attacker still locked", errcode.AccountLocked)
			id = captchaWith(t, k, attacker, "K7PX")
			from(k, attacker, "POST", "/api/v1/auth/login", "", loginBody(account, pw, id, "K7PX")).
				ExpectCode(t, "attacker locked with a captcha too", errcode.AccountLocked)
		})
	}
}

// TestUnlockClearsEveryCounter: the administrator's password reset (and
// the CLI, through the same auth.ClearLockout) lifts the per-client locks
// and the captcha threshold of the account.
func TestUnlockClearsEveryCounter(t *testing.T) {
	k := kerneltest.Start(t, trustAll)
	const attacker = "203.0.113.8"
	for i := 0; i < 25; i++ {
		from(k, attacker, "POST", "/api/v1/auth/login", "", loginBody("SUPERADMIN", "nope", "", ""))
	}
	from(k, attacker, "POST", "/api/v1/auth/login", "", loginBody("superAdmin", kerneltest.AdminPassword, "", "")).
		ExpectCode(t, "locked", errcode.AccountLocked)
	if err := k.Auth().Unlock(context.Background(), "SuperAdmin"); err != nil {
		t.Fatal(err)
	}
	from(k, attacker, "POST", "/api/v1/auth/login", "", loginBody("superAdmin", kerneltest.AdminPassword, "", "")).
		Expect(t, "after unlock: no lock, no captcha", 200, 0)
}

// TestPersonalPasswordCountsTowardLockout: wrong old passwords in PUT
// /personal/password count for the account from the session's client; at
// maxFailCount that client is locked (40004) and the change is refused even
// with the right old password; login from that client is locked too, from
// another client it works.
func TestPersonalPasswordCountsTowardLockout(t *testing.T) {
	k := kerneltest.Start(t, trustAll)
	k.User("erin", "Erin#Pass12")
	const client, elsewhere = "203.0.113.20", "198.51.100.20"
	var tp kerneltest.Tokens
	from(k, client, "POST", "/api/v1/auth/login", "", loginBody("erin", "Erin#Pass12", "", "")).Expect(t, "login", 200, 0).Decode(t, &tp)
	change := func(old string) kerneltest.Reply {
		return from(k, client, "PUT", "/api/v1/personal/password", tp.AccessToken, `{"oldPassword":"`+old+`","newPassword":"Newer#Pass34"}`)
	}
	for i := 1; i <= 4; i++ {
		change("wrong").ExpectCode(t, "wrong old password", errcode.PasswordWrong)
	}
	change("wrong").ExpectCode(t, "5th wrong old password", errcode.AccountLocked)
	change("Erin#Pass12").ExpectCode(t, "right old password while locked", errcode.AccountLocked)
	from(k, client, "POST", "/api/v1/auth/login", "", loginBody("erin", "Erin#Pass12", "", "")).
		ExpectCode(t, "login from the locked client", errcode.AccountLocked)
	from(k, elsewhere, "POST", "/api/v1/auth/login", "", loginBody("erin", "Erin#Pass12", "", "")).
		Expect(t, "login from another client", 200, 0)
}

// TestMustChangePasswordEnforced: a user created by an administrator must
// change the password; until then its session may only change it, read the
// profile and log out (403 / 40028 elsewhere, permission-gated or not).
// After the change the same session works. The seeded super-admin is not
// restricted.
func TestMustChangePasswordEnforced(t *testing.T) {
	k := kerneltest.Start(t, nil)
	adminLogin := k.Login("superAdmin", kerneltest.AdminPassword)
	if adminLogin.MustChangePassword {
		t.Fatal("the seeded super-admin must not have to change the password")
	}
	k.Do("GET", "/api/v1/personal/permissions", adminLogin.AccessToken, nil).Expect(t, "admin permissions", 200, 0)

	var created struct {
		InitialPassword string `json:"initialPassword"`
	}
	k.Do("POST", "/api/v1/sys/user", adminLogin.AccessToken, map[string]any{"account": "newbie", "name": "Newbie", "password": "Init#Pass123"}).
		Expect(t, "create user", 200, 0).Decode(t, &created)
	tp := k.Login("newbie", "Init#Pass123")
	if !tp.MustChangePassword {
		t.Fatal("an admin-created user must change the password")
	}
	other := k.Login("newbie", "Init#Pass123")

	restricted := []struct{ method, path string }{
		{"GET", "/api/v1/personal/permissions"},
		{"GET", "/api/v1/ping"},
		{"GET", "/api/v1/personal/sessions"},
		{"PUT", "/api/v1/personal/profile"},
		{"GET", "/api/v1/sys/user/page"},
	}
	for _, r := range restricted {
		k.Do(r.method, r.path, tp.AccessToken, map[string]any{"name": "x"}).
			Expect(t, "restricted "+r.method+" "+r.path, http.StatusForbidden, int(errcode.PasswordChangeRequired))
	}
	k.Do("GET", "/api/v1/personal/profile", tp.AccessToken, nil).Expect(t, "profile", 200, 0)
	k.Do("GET", "/api/v1/sys/config/password-policy", tp.AccessToken, nil).Expect(t, "the policy the change form shows", 200, 0)
	k.Do("GET", "/api/v1/auth/captcha", "", nil).Expect(t, "anonymous route", 200, 0)
	k.Do("POST", "/api/v1/auth/logout", other.AccessToken, nil).Expect(t, "logout while restricted", 200, 0)

	k.Do("PUT", "/api/v1/personal/password", tp.AccessToken, map[string]string{"oldPassword": "Init#Pass123", "newPassword": "Chosen#Pass456"}).
		Expect(t, "change password", 200, 0)
	k.Do("GET", "/api/v1/personal/permissions", tp.AccessToken, nil).Expect(t, "permissions after the change", 200, 0)
	k.Do("GET", "/api/v1/ping", tp.AccessToken, nil).Expect(t, "ping after the change (not granted)", 403, int(errcode.NoPermission))
	if again := k.Login("newbie", "Chosen#Pass456"); again.MustChangePassword {
		t.Fatal("mustChangePassword still set after the change")
	}
}

// TestAccountsCaseInsensitive: creating "superadmin" beside "superAdmin" is
// 42006 (and the database refuses it too); login matches any case.
func TestAccountsCaseInsensitive(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	for _, account := range []string{"superadmin", "SUPERADMIN"} {
		k.Do("POST", "/api/v1/sys/user", tok, map[string]any{"account": account, "name": "Copy"}).
			ExpectCode(t, "create "+account, errcode.AccountExists)
	}
	if _, err := k.Ent().SysUser.Create().SetAccount("SuperAdmin").SetName("x").Save(context.Background()); !ent.IsConstraintError(err) {
		t.Fatalf("database insert of a case variant: %v, want a constraint error", err)
	}
	if tp := k.Login("SUPERADMIN", kerneltest.AdminPassword); !tp.IsSuperAdmin {
		t.Fatal("case-insensitive login did not reach the super-admin")
	}
}
