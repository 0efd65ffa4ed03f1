//go:build !unit

package externalauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/adminkernel/kernel/ent/sysuser"
)

// An external login passes the second-factor gate: a user with TOTP bound
// gets ?totpChallenge=<id>&error=40018 and completes the login at POST
// /auth/login/totp; a user forced to TOTP without a binding gets
// ?error=40020. No ticket is issued before the second factor.
func TestExternalLoginTotpSignal(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	k.User("bob", "Bob#Pass12345")
	k.User("carol", "Carol#Pass1234")
	e.set("sys.externalauth.corp.linkByAccount", "true")
	e.set("sys.security.totp.enabled", "true")

	var start struct {
		BindChallengeID string `json:"bindChallengeId"`
		Seed            string `json:"seed"`
	}
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "bob", "currentPassword": "Bob#Pass12345"}).
		Expect(t, "bind start", 200, 0).Decode(t, &start)
	k.Leaks.Secrets = append(k.Leaks.Secrets, start.Seed)
	code := func(at time.Time) string {
		c, err := totp.GenerateCodeCustom(start.Seed, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	step := time.Now().Unix() / 30
	k.Do("POST", "/api/v1/auth/mfa/bind/complete", "", map[string]string{"bindChallengeId": start.BindChallengeID, "totpCode": code(time.Unix(step*30, 0))}).
		Expect(t, "bind complete", 200, 0)

	res := e.browser().sso("bob")
	id := res.Query().Get("totpChallenge")
	if errorOf(res) != "40018" || len(id) != 43 || res.Query().Get("ticket") != "" || res.Query().Has("passkey") {
		t.Fatalf("SSO of a user with TOTP ended in %s, want ?totpChallenge=<id>&error=40018 without the passkey hint", res)
	}
	var tk struct {
		UserID int64 `json:"userId"`
	}
	k.Do("POST", "/api/v1/auth/login/totp", "", map[string]string{"challengeId": id, "code": code(time.Unix((step+1)*30, 0))}).
		Expect(t, "TOTP after SSO", 200, 0).Decode(t, &tk)
	if tk.UserID != k.Ent().SysUser.Query().Where(sysuser.Account("bob")).OnlyIDX(ctx) {
		t.Fatalf("logged in as %d", tk.UserID)
	}

	// A user with a passkey is told so: the result page offers it.
	bob := k.Ent().SysUser.Query().Where(sysuser.Account("bob")).OnlyIDX(ctx)
	k.Ent().SysUserPasskey.Create().SetUserID(bob).SetCredentialID("AQID").SetCredentialHash(strings.Repeat("a", 64)).
		SetPublicKey([]byte{1}).SetName("key").SetCreatedAt(time.Now()).ExecX(ctx)
	if res := e.browser().sso("bob"); errorOf(res) != "40018" || res.Query().Get("passkey") != "1" {
		t.Fatalf("SSO of a user with a passkey ended in %s, want &passkey=1", res)
	}

	k.Ent().SysUser.Update().Where(sysuser.Account("carol")).SetForceTotp(true).ExecX(ctx)
	if res := e.browser().sso("carol"); errorOf(res) != "40020" || res.Query().Get("totpChallenge") != "" {
		t.Fatalf("SSO of a user forced to TOTP, unbound, ended in %s, want ?error=40020", res)
	}
}
