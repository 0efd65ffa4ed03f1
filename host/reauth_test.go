//go:build !unit

package host_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrecoverycode"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// A +R route (wire contract §4: an empty list does nothing) and a P route
// that is not +R.
const (
	plusR      = "/api/v1/sys/user/batch-delete"
	plainRoute = "/api/v1/sys/user/page"
)

func totpOn(t *testing.T, k *kerneltest.Kernel, on bool) {
	t.Helper()
	v := "false"
	if on {
		v = "true"
	}
	if err := k.Settings().Set(context.Background(), "sys.security.totp.enabled", v); err != nil {
		t.Fatal(err)
	}
}

func callPlusR(k *kerneltest.Kernel, token string) kerneltest.Reply {
	k.T.Helper()
	return k.Do("POST", plusR, token, map[string]any{"ids": []int64{}})
}

// sendEmpty sends a request whose success answer is the contract's empty
// 200; it returns the status and the raw body.
func sendEmpty(t *testing.T, k *kerneltest.Kernel, method, path, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func TestReauthWindowGuardsPlusRoutes(t *testing.T) {
	k := kerneltest.Start(t, nil)
	a := k.Admin()
	b := k.Admin() // a second session of the same user

	callPlusR(k, a).Expect(t, "+R with TOTP off", http.StatusOK, 0)
	totpOn(t, k, true)
	callPlusR(k, a).ExpectCode(t, "+R with TOTP on, no window (super-admin too)", errcode.ReauthRequired)
	k.Do("GET", plainRoute, a, nil).Expect(t, "a route that is not +R", http.StatusOK, 0)

	for _, tt := range []struct {
		name string
		body any
		want errcode.Code
	}{
		{"wrong password", map[string]any{"method": "password", "password": "nope"}, errcode.PasswordWrong},
		{"no password", map[string]any{"method": "password"}, errcode.RequestInvalid},
		{"unknown method", map[string]any{"method": "sms", "password": kerneltest.AdminPassword}, errcode.RequestInvalid},
		{"totp for a user without TOTP bound", map[string]any{"method": "totp", "totpCode": "123456"}, errcode.TotpNotBound},
		{"totp without a code", map[string]any{"method": "totp"}, errcode.RequestInvalid},
		{"no body", nil, errcode.RequestInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k.Do("POST", "/api/v1/auth/reauth", a, tt.body).ExpectCode(t, tt.name, tt.want)
			callPlusR(k, a).ExpectCode(t, "+R after a failed re-auth", errcode.ReauthRequired)
		})
	}
	k.Do("POST", "/api/v1/auth/reauth", "", map[string]any{"method": "password", "password": kerneltest.AdminPassword}).
		ExpectCode(t, "re-auth without a session", errcode.TokenInvalid)

	reauthPassword(k, a, kerneltest.AdminPassword).Expect(t, "re-auth", http.StatusOK, 0)
	callPlusR(k, a).Expect(t, "+R in the window", http.StatusOK, 0)
	callPlusR(k, b).ExpectCode(t, "+R from another session of the same user", errcode.ReauthRequired)

	totpOn(t, k, false)
	callPlusR(k, b).Expect(t, "+R with TOTP switched off again", http.StatusOK, 0)
}

func TestReauthWrongPasswordCountsTowardLockout(t *testing.T) {
	k := kerneltest.Start(t, nil)
	a := k.Admin()
	totpOn(t, k, true)
	ctx := context.Background()
	if err := k.Settings().Set(ctx, "sys.security.loginLock.maxFailCount", "2"); err != nil {
		t.Fatal(err)
	}
	reauthPassword(k, a, "wrong-1").ExpectCode(t, "first wrong password", errcode.PasswordWrong)
	reauthPassword(k, a, "wrong-2").ExpectCode(t, "second wrong password locks", errcode.AccountLocked)
	reauthPassword(k, a, kerneltest.AdminPassword).ExpectCode(t, "right password while locked", errcode.AccountLocked)
	callPlusR(k, a).ExpectCode(t, "+R", errcode.ReauthRequired)
}

func TestReauthWindowExpires(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Security__Reauth__WindowSeconds=1"})
	a := k.Admin()
	totpOn(t, k, true)
	reauthPassword(k, a, kerneltest.AdminPassword).Expect(t, "re-auth", http.StatusOK, 0)
	start := time.Now()
	poll.Until(t, 10*time.Second, "the window to close", func() bool {
		return callPlusR(k, a).Code == int(errcode.ReauthRequired)
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a 1 s window closed after %s", d)
	}
	reauthPassword(k, a, kerneltest.AdminPassword).Expect(t, "re-auth again", http.StatusOK, 0)
	callPlusR(k, a).Expect(t, "+R in the new window", http.StatusOK, 0)
}

type hsList struct {
	Defaults []string `json:"defaults"`
	Customs  []struct {
		ID             int64   `json:"id"`
		PermissionCode string  `json:"permissionCode"`
		Remark         *string `json:"remark"`
	} `json:"customs"`
}

func TestHighSensitivityList(t *testing.T) {
	k := kerneltest.Start(t, nil)
	a := k.Admin()
	b := k.Admin()
	const hs = "/api/v1/sys/mfa/high-sensitivity"

	var l hsList
	k.Do("GET", hs, a, nil).Expect(t, "list", http.StatusOK, 0).Decode(t, &l)
	for _, code := range []string{
		"POST:/api/v1/sys/user/batch-delete", "PUT:/api/v1/sys/role/menu", "PUT:/api/v1/sys/config/batch",
		"DELETE:/api/v1/sys/menu/{id}", "DELETE:/api/v1/sys/session/{sessionid}",
		"POST:/api/v1/sys/mfa/clear", "POST:/api/v1/sys/mfa/high-sensitivity", "DELETE:/api/v1/sys/mfa/high-sensitivity/{id:long}",
		"POST:/api/v1/sys/job", "PUT:/api/v1/sys/job/{id}", "DELETE:/api/v1/sys/job/{id}", "POST:/api/v1/sys/job/batch-delete",
		"POST:/api/v1/sys/job/{id}/run",
	} {
		if !slices.Contains(l.Defaults, code) {
			t.Errorf("defaults lack %s: %v", code, l.Defaults)
		}
	}
	if slices.Contains(l.Defaults, "GET:/api/v1/sys/user/page") || len(l.Customs) != 0 {
		t.Fatalf("unexpected list %+v", l)
	}

	totpOn(t, k, true)
	add := map[string]any{"permissionCode": "get:/api/v1/sys/user/page", "remark": "user list"}
	k.Do("POST", hs, a, add).ExpectCode(t, "add without a window (itself +R)", errcode.ReauthRequired)
	reauthPassword(k, a, kerneltest.AdminPassword).Expect(t, "re-auth", http.StatusOK, 0)

	k.Do("GET", plainRoute, b, nil).Expect(t, "the page before it is listed (caches the list)", http.StatusOK, 0)
	var item struct {
		ID             int64  `json:"id"`
		PermissionCode string `json:"permissionCode"`
		Remark         string `json:"remark"`
	}
	k.Do("POST", hs, a, add).Expect(t, "add", http.StatusOK, 0).Decode(t, &item)
	if item.ID == 0 || item.PermissionCode != "GET:/api/v1/sys/user/page" || item.Remark != "user list" {
		t.Fatalf("added item %+v", item)
	}
	k.Do("GET", plainRoute, b, nil).ExpectCode(t, "the listed page without a window", errcode.ReauthRequired)
	k.Do("GET", plainRoute, a, nil).Expect(t, "the listed page in the window", http.StatusOK, 0)

	for _, tt := range []struct {
		name string
		code string
		want errcode.Code
	}{
		{"duplicate", "GET:/api/v1/sys/user/page", errcode.RequestInvalid},
		{"a default", "POST:/api/v1/sys/user/batch-delete", errcode.RequestInvalid},
		{"not a route", "GET:/api/v1/nothing", errcode.MenuPermissionInvalid},
		{"a session route", "GET:/api/v1/personal/profile", errcode.MenuPermissionInvalid},
		{"empty", " ", errcode.RequestInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k.Do("POST", hs, a, map[string]any{"permissionCode": tt.code}).ExpectCode(t, tt.name, tt.want)
		})
	}
	k.Do("GET", hs, a, nil).Expect(t, "list", http.StatusOK, 0).Decode(t, &l)
	if len(l.Customs) != 1 || l.Customs[0].ID != item.ID {
		t.Fatalf("customs %+v", l.Customs)
	}

	path := hs + "/" + itoa(item.ID)
	if st, body := sendEmpty(t, k, "DELETE", path, b, ""); st != http.StatusForbidden || !strings.Contains(body, "40024") {
		t.Fatalf("delete without a window = %d %s", st, body)
	}
	if st, body := sendEmpty(t, k, "DELETE", path, a, ""); st != http.StatusOK || body != "" {
		t.Fatalf("delete = %d %q, want an empty 200", st, body)
	}
	k.Do("GET", plainRoute, b, nil).Expect(t, "the page once removed from the list", http.StatusOK, 0)
	k.Do("DELETE", path, a, nil).ExpectCode(t, "delete again", errcode.RequestInvalid)
}

func TestMfaClear(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	admin := k.Admin()
	const pw = "Str0ng#Passw0rd"
	const clear = "POST:/api/v1/sys/mfa/clear"
	target := k.User("mfatarget", pw, "GET:/api/v1/sys/user/page", "GET:/api/v1/sys/role/page")
	k.Ent().SysUser.UpdateOneID(target).SetTotpEnabled(true).SetTotpSecret("sealed-seed").ExecX(ctx)
	k.User("weakadmin", pw, clear, "GET:/api/v1/sys/user/page")
	// Everyone in scope: what stops the weaker admin is authority.
	role := k.Ent().SysRole.Query().Where(sysrole.Code("test_weakadmin")).OnlyX(ctx)
	k.Ent().SysRoleDataScope.Create().SetRoleID(role.ID).SetScopeType(1).ExecX(ctx)
	weak := k.Login("weakadmin", pw).AccessToken
	targetTok := k.Login("mfatarget", pw).AccessToken
	body := `{"userId":` + itoa(target) + `}`

	totpOn(t, k, true)
	if st, raw := sendEmpty(t, k, "POST", "/api/v1/sys/mfa/clear", weak, body); st != http.StatusForbidden || !strings.Contains(raw, "40024") {
		t.Fatalf("clear without a window = %d %s", st, raw)
	}
	reauthPassword(k, weak, pw).Expect(t, "re-auth", http.StatusOK, 0)
	k.Do("POST", "/api/v1/sys/mfa/clear", weak, body).ExpectCode(t, "clear of a user holding more", errcode.AuthorityExceeded)
	superID := k.Ent().SysUser.Query().Where(sysuser.IsSuperAdmin(true)).OnlyIDX(ctx)
	k.Do("POST", "/api/v1/sys/mfa/clear", weak, `{"userId":`+itoa(superID)+`}`).ExpectCode(t, "clear of the super-admin", errcode.SuperAdminProtected)
	k.Do("POST", "/api/v1/sys/mfa/clear", weak, `{"userId":0}`).ExpectCode(t, "no user", errcode.RequestInvalid)
	if u := k.Ent().SysUser.GetX(ctx, target); !u.TotpEnabled || u.TotpSecret == nil {
		t.Fatal("a refused clear changed the user")
	}
	k.Do("GET", "/api/v1/personal/profile", targetTok, nil).Expect(t, "target's session", http.StatusOK, 0)

	reauthPassword(k, admin, kerneltest.AdminPassword).Expect(t, "re-auth", http.StatusOK, 0)
	k.Do("POST", "/api/v1/sys/mfa/clear", admin, `{"userId":999999999}`).ExpectCode(t, "unknown user", errcode.UserNotFound)
	if st, raw := sendEmpty(t, k, "POST", "/api/v1/sys/mfa/clear", admin, body); st != http.StatusOK || raw != "" {
		t.Fatalf("clear = %d %q, want an empty 200", st, raw)
	}
	if u := k.Ent().SysUser.GetX(ctx, target); u.TotpEnabled || u.TotpSecret != nil {
		t.Fatalf("after clear: totp_enabled %v, secret set %v", u.TotpEnabled, u.TotpSecret != nil)
	}
	k.Do("GET", "/api/v1/personal/profile", targetTok, nil).ExpectCode(t, "target's session after clear", errcode.TokenInvalid)
	k.Do("GET", "/api/v1/personal/profile", admin, nil).Expect(t, "the admin's own session", http.StatusOK, 0)
	poll.Until(t, 10*time.Second, "the clear in the operation log", func() bool {
		return k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/sys/mfa/clear"), sysoplog.ResultCode(0)).CountX(ctx) == 1
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A user with TOTP bound re-authenticates with a code (once per step: a
// replayed code is refused), and an administrator's clear removes the seed
// and the recovery codes, which then recover nothing.
func TestReauthTotpAndClearWithTheTotpArea(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	id := k.User("reauthtotp", totpUserPassword, "GET:/api/v1/sys/user/page")
	used := steps{}
	seed, codes := bindTotp(t, k, "reauthtotp", used)
	tok := k.Login("reauthtotp", totpUserPassword).AccessToken // TOTP is off: the password alone logs in
	code := used.fresh(t, seed)
	k.Do("POST", "/api/v1/auth/reauth", tok, map[string]string{"method": "totp", "totpCode": code}).Expect(t, "re-auth with a TOTP code", http.StatusOK, 0)
	k.Do("POST", "/api/v1/auth/reauth", tok, map[string]string{"method": "totp", "totpCode": code}).ExpectCode(t, "re-auth replaying the code", errcode.TotpWrong)
	k.Do("POST", "/api/v1/auth/reauth", tok, map[string]string{"method": "totp", "totpCode": wrongCode(t, seed)}).ExpectCode(t, "re-auth with a wrong code", errcode.TotpWrong)

	admin := k.Admin()
	totpOn(t, k, true)
	reauthPassword(k, admin, kerneltest.AdminPassword).Expect(t, "admin re-auth", http.StatusOK, 0)
	if st, raw := sendEmpty(t, k, "POST", "/api/v1/sys/mfa/clear", admin, `{"userId":`+itoa(id)+`}`); st != http.StatusOK || raw != "" {
		t.Fatalf("clear = %d %q, want an empty 200", st, raw)
	}
	if n := k.Ent().SysUserRecoveryCode.Query().Where(sysuserrecoverycode.UserID(id)).CountX(ctx); n != 0 {
		t.Errorf("%d recovery codes left after the clear", n)
	}
	k.Do("POST", "/api/v1/auth/mfa/recovery", "", map[string]string{"account": "reauthtotp", "currentPassword": totpUserPassword, "recoveryCode": codes[0]}).
		ExpectCode(t, "a recovery code after the clear", errcode.RecoveryCodeInvalid)
}
