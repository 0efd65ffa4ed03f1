//go:build !unit

package host_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/mfa/passkey/passkeytest"
)

// TestTotpBindBesideAnotherFactor: the password alone no longer binds TOTP
// to an account with another factor (a passkey, a phone under the SMS
// second factor): 40035; the signed-in path binds it after a
// re-authentication window (40024 without one, TOTP switch off); the
// documented 40020 path (TOTP required, nothing bound) stays open.
func TestTotpBindBesideAnotherFactor(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	uid := k.User("pkbind", passkeyPassword)
	k.Leaks.Secrets = append(k.Leaks.Secrets, passkeyPassword)
	tok := k.Login("pkbind", passkeyPassword).AccessToken
	registerPasskey(t, k, tok, passkeytest.New(config.DevPasskeyOrigin), "Key")

	// The attacker holding the password only.
	r := k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "pkbind", "currentPassword": passkeyPassword})
	r.ExpectCode(t, "password-only bind beside a passkey", errcode.MfaEnrolSessionRequired)
	if strings.Contains(r.Raw, "otpauth") {
		t.Fatalf("a seed was handed out: %s", r.Raw)
	}
	// TOTP on, the user forced: still refused (the login asks the passkey).
	setting(t, k, "sys.security.totp.enabled", "true")
	k.Ent().SysUser.UpdateOneID(uid).SetForceTotp(true).ExecX(ctx)
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "pkbind", "currentPassword": passkeyPassword}).
		ExpectCode(t, "password-only bind beside a passkey, TOTP forced", errcode.MfaEnrolSessionRequired)
	setting(t, k, "sys.security.totp.enabled", "false")
	k.Ent().SysUser.UpdateOneID(uid).SetForceTotp(false).ExecX(ctx)

	// The owner, signed in: a new session needs a window.
	other := k.Login("pkbind", passkeyPassword).AccessToken
	own := k.Login("pkbind", passkeyPassword).AccessToken
	k.Do("POST", "/api/v1/personal/mfa/bind/start", own, nil).Expect(t, "signed-in bind without a window", http.StatusForbidden, int(errcode.ReauthRequired))
	k.Do("POST", "/api/v1/personal/mfa/bind/start", "", nil).Expect(t, "signed-in bind without a session", http.StatusUnauthorized, int(errcode.TokenInvalid))
	reauthPassword(k, own, passkeyPassword).Expect(t, "re-auth", http.StatusOK, 0)
	var start mfa.BindStartOutput
	k.Do("POST", "/api/v1/personal/mfa/bind/start", own, nil).Expect(t, "signed-in bind", http.StatusOK, 0).Decode(t, &start)
	k.Leaks.Secrets = append(k.Leaks.Secrets, start.Seed)
	var done mfa.BindCompleteOutput
	k.Do("POST", "/api/v1/auth/mfa/bind/complete", "", map[string]string{"bindChallengeId": start.BindChallengeID, "totpCode": steps{}.fresh(t, start.Seed)}).
		Expect(t, "bind complete", http.StatusOK, 0).Decode(t, &done)
	if len(done.RecoveryCodes) != 10 || !k.Ent().SysUser.Query().Where(sysuser.ID(uid)).OnlyX(ctx).TotpEnabled {
		t.Fatalf("bind answer %+v", done)
	}
	k.Leaks.Secrets = append(k.Leaks.Secrets, done.RecoveryCodes...)
	// The binding session goes on (it shows the recovery codes); the
	// user's other sessions end.
	k.Do("GET", "/api/v1/personal/profile", own, nil).Expect(t, "the binding session after the bind", http.StatusOK, 0)
	k.Do("GET", "/api/v1/personal/profile", other, nil).ExpectCode(t, "another session after the bind", errcode.TokenInvalid)

	// A phone under the SMS second factor is a factor too.
	k.User("smsbind", totpUserPassword)
	k.Ent().SysUser.Update().Where(sysuser.Account("smsbind")).SetPhone("13800005555").ExecX(ctx)
	setting(t, k, mfa.KeyMfaEnabled, "true")
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "smsbind", "currentPassword": totpUserPassword}).
		ExpectCode(t, "password-only bind beside an SMS second factor", errcode.MfaEnrolSessionRequired)
	// The 40020 path: TOTP required of the user, nothing bound (the login
	// answers 40020 before asking the SMS code): the password binds.
	setting(t, k, "sys.security.totp.enabled", "true")
	k.Ent().SysUser.Update().Where(sysuser.Account("smsbind")).SetForceTotp(true).ExecX(ctx)
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "smsbind", "password": totpUserPassword}).
		ExpectCode(t, "forced, not bound", errcode.TotpNotBound)
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "smsbind", "currentPassword": totpUserPassword}).
		Expect(t, "the 40020 enrolment path", http.StatusOK, 0)
	// An account without any factor binds with the password, as before.
	k.User("nofactor", totpUserPassword)
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "nofactor", "currentPassword": totpUserPassword}).
		Expect(t, "password-only bind without a factor", http.StatusOK, 0)
}

// TestProfilePhoneChange: changing the phone needs a re-authentication
// window (TOTP off), a phone another live user holds answers 40036, and
// the old phone is told of the change through the SMS sender.
func TestProfilePhoneChange(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	k.User("phone-a", totpUserPassword)
	k.User("phone-b", totpUserPassword)
	k.Ent().SysUser.Update().Where(sysuser.Account("phone-a")).SetPhone("13800001111").ExecX(ctx)
	a := k.Login("phone-a", totpUserPassword).AccessToken
	b := k.Login("phone-b", totpUserPassword).AccessToken

	k.Do("PUT", "/api/v1/personal/profile", a, map[string]any{"name": "A", "phone": "13800002222"}).
		Expect(t, "a phone change without a window", http.StatusForbidden, int(errcode.ReauthRequired))
	k.Do("PUT", "/api/v1/personal/profile", a, map[string]any{"name": "A", "phone": "13800001111"}).
		Expect(t, "a name change keeping the phone", http.StatusOK, 0)
	k.Do("PUT", "/api/v1/personal/profile", a, map[string]any{"name": "A", "phone": "13800001111", "email": "a@example.com"}).
		Expect(t, "an e-mail change without a window", http.StatusForbidden, int(errcode.ReauthRequired))

	reauthPassword(k, b, totpUserPassword).Expect(t, "re-auth b", http.StatusOK, 0)
	r := k.Do("PUT", "/api/v1/personal/profile", b, map[string]any{"name": "B", "phone": "13800001111"})
	r.ExpectCode(t, "copying another user's phone", errcode.PhoneTaken)
	if r.Args["field"] != "phone" {
		t.Fatalf("40036 args %v", r.Args)
	}

	reauthPassword(k, a, totpUserPassword).Expect(t, "re-auth a", http.StatusOK, 0)
	k.Do("PUT", "/api/v1/personal/profile", a, map[string]any{"name": "A", "phone": "13800002222"}).Expect(t, "a phone change", http.StatusOK, 0)
	if log := k.Log(); !strings.Contains(log, "template=phoneChanged") || !strings.Contains(log, "138****1111") {
		t.Fatalf("the old phone was not told of the change:\n%s", log)
	}
	k.Do("PUT", "/api/v1/personal/profile", b, map[string]any{"name": "B", "phone": "13800001111"}).Expect(t, "the freed phone", http.StatusOK, 0)

	// The console tells the owner too, in a personal notice in both
	// languages: the phone change, then an e-mail change.
	expectSecurityNotice(t, k, a, 1, "phone number", "手机号")
	reauthPassword(k, a, totpUserPassword).Expect(t, "re-auth a", http.StatusOK, 0)
	k.Do("PUT", "/api/v1/personal/profile", a, map[string]any{"name": "A", "phone": "13800002222", "email": "a@example.com"}).
		Expect(t, "an e-mail change", http.StatusOK, 0)
	expectSecurityNotice(t, k, a, 2, "e-mail address", "电子邮箱")
	k.Do("PUT", "/api/v1/personal/profile", a, map[string]any{"name": "A2", "phone": "13800002222", "email": "a@example.com"}).
		Expect(t, "a name change", http.StatusOK, 0)
	expectSecurityNotice(t, k, a, 2, "e-mail address", "电子邮箱")
}

// expectSecurityNotice checks that the user holding tok has n notices, the
// newest a security alert naming en and zh.
func expectSecurityNotice(t *testing.T, k *kerneltest.Kernel, tok string, n int, en, zh string) {
	t.Helper()
	var p struct {
		Total int `json:"total"`
		Items []struct {
			Title   string `json:"title"`
			Content string `json:"content"`
		} `json:"items"`
	}
	k.Do("GET", "/api/v1/sys/notice/mine", tok, nil).Expect(t, "my notices", http.StatusOK, 0).Decode(t, &p)
	if p.Total != n || len(p.Items) == 0 {
		t.Fatalf("%d notices, want %d: %+v", p.Total, n, p.Items)
	}
	got := p.Items[0]
	if !strings.Contains(got.Title, "Security alert") || !strings.Contains(got.Content, en) || !strings.Contains(got.Content, zh) {
		t.Fatalf("the newest notice is not the security alert about %q/%q: %+v", en, zh, got)
	}
}
