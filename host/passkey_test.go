//go:build !unit

package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysloginlog"
	"github.com/adminkernel/kernel/ent/sysnotice"
	"github.com/adminkernel/kernel/ent/sysnoticereceiver"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/ent/sysuserpasskey"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/mfa/passkey"
	"github.com/adminkernel/kernel/host/mfa/passkey/passkeytest"
)

const passkeyPassword = "Pa55key#Passw0rd"

// begun is the answer of a begin endpoint.
type begun struct {
	CeremonyID string          `json:"ceremonyId"`
	Options    json.RawMessage `json:"options"`
}

func begin(t *testing.T, r kerneltest.Reply, what string) begun {
	t.Helper()
	r.Expect(t, what, http.StatusOK, 0)
	var b begun
	r.Decode(t, &b)
	if !passkey.ValidCeremonyID(b.CeremonyID) || len(b.Options) == 0 {
		t.Fatalf("%s answer %s", what, r.Raw)
	}
	return b
}

// registerPasskey registers a passkey of the session's user on a and
// returns the item.
func registerPasskey(t *testing.T, k *kerneltest.Kernel, tok string, a *passkeytest.Authenticator, name string) passkey.Item {
	t.Helper()
	// Enrolling a factor needs a re-authentication window (whatever the
	// TOTP switch says).
	reauthPassword(k, tok, passkeyPassword).Expect(t, "re-auth before registering", http.StatusOK, 0)
	b := begin(t, k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil), "register begin")
	cred, err := a.Create(b.Options)
	if err != nil {
		t.Fatal(err)
	}
	var item passkey.Item
	k.Do("POST", "/api/v1/personal/passkeys/register/finish", tok, map[string]any{"ceremonyId": b.CeremonyID, "name": name, "credential": cred}).
		Expect(t, "register finish", http.StatusOK, 0).Decode(t, &item)
	if item.ID <= 0 || item.Name != name {
		t.Fatalf("registered item %+v", item)
	}
	return item
}

func passwordlessLogin(t *testing.T, k *kerneltest.Kernel, a *passkeytest.Authenticator) kerneltest.Reply {
	t.Helper()
	b := begin(t, k.Do("POST", "/api/v1/auth/passkey/passwordless/begin", "", nil), "passwordless begin")
	cred, err := a.Get(b.Options)
	if err != nil {
		t.Fatal(err)
	}
	return k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", map[string]any{"ceremonyId": b.CeremonyID, "credential": cred})
}

// The whole life of a passkey through the API: registration (one-time
// ceremony, options as the brief fixes them, the user's other sessions
// end, operation-logged), the second factor instead of TOTP (40018 with
// passkey: true, even without TOTP bound under forceTotp), the
// passwordless login behind its switch, a cloned authenticator refused,
// and removal (only the owner's own; a removed passkey logs in no more).
func TestPasskeyLifecycle(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	uid := k.User("pkuser", passkeyPassword)
	k.Leaks.Secrets = append(k.Leaks.Secrets, passkeyPassword)
	tok := k.Login("pkuser", passkeyPassword).AccessToken
	other := k.Login("pkuser", passkeyPassword).AccessToken
	a := passkeytest.New(config.DevPasskeyOrigin)

	var list []passkey.Item
	k.Do("GET", "/api/v1/personal/passkeys", tok, nil).Expect(t, "empty list", http.StatusOK, 0).Decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("list before registering: %+v", list)
	}

	k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil).ExpectCode(t, "register begin without a window (TOTP off)", errcode.ReauthRequired)
	reauthPassword(k, tok, passkeyPassword).Expect(t, "re-auth", http.StatusOK, 0)
	b := begin(t, k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil), "register begin")
	var opts struct {
		RP struct {
			ID string `json:"id"`
		} `json:"rp"`
		Sel struct {
			ResidentKey      string `json:"residentKey"`
			UserVerification string `json:"userVerification"`
		} `json:"authenticatorSelection"`
	}
	if err := json.Unmarshal(b.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if opts.RP.ID != "localhost" || opts.Sel.ResidentKey != "required" || opts.Sel.UserVerification != "required" {
		t.Fatalf("creation options %s", b.Options)
	}
	cred, err := a.Create(b.Options)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"ceremonyId": b.CeremonyID, "name": "Laptop", "credential": cred}
	var item passkey.Item
	k.Do("POST", "/api/v1/personal/passkeys/register/finish", tok, body).Expect(t, "register finish", http.StatusOK, 0).Decode(t, &item)
	k.Do("POST", "/api/v1/personal/passkeys/register/finish", tok, body).ExpectCode(t, "the same ceremony again", errcode.PasskeyCeremonyInvalid)
	k.Do("GET", "/api/v1/personal/profile", other, nil).ExpectCode(t, "the user's other session after a passkey was added", errcode.TokenInvalid)
	k.Do("GET", "/api/v1/personal/profile", tok, nil).Expect(t, "the registering session", http.StatusOK, 0)
	expectSecurityNotice(t, k, tok, 1, "passkey was added", "添加了通行密钥")
	k.Do("GET", "/api/v1/personal/passkeys", tok, nil).Expect(t, "list", http.StatusOK, 0).Decode(t, &list)
	if len(list) != 1 || list[0].ID != item.ID || list[0].Name != "Laptop" || list[0].LastUsedAt != nil {
		t.Fatalf("list after registering: %+v", list)
	}
	// The same credential again (another ceremony): 40034.
	b2 := begin(t, k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil), "register begin 2")
	again, err := json.Marshal(map[string]any{"ceremonyId": b2.CeremonyID, "credential": cred})
	if err != nil {
		t.Fatal(err)
	}
	// The old attestation answers another challenge: refused by verification.
	k.Do("POST", "/api/v1/personal/passkeys/register/finish", tok, string(again)).ExpectCode(t, "an attestation of another ceremony", errcode.PasskeyInvalid)
	poll.Until(t, 10*time.Second, "the registration in the operation log", func() bool {
		return k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/personal/passkeys/register/finish"), sysoplog.ResultCode(0)).CountX(ctx) == 1
	})

	// Second factor: TOTP on, the user forced to use it and without TOTP:
	// 40018 with passkey: true instead of 40020.
	totpOn(t, k, true)
	k.Ent().SysUser.UpdateOneID(uid).SetForceTotp(true).ExecX(ctx)
	r := k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "pkuser", "password": passkeyPassword})
	r.ExpectCode(t, "password login with a passkey", errcode.TotpRequired)
	challenge, _ := r.Args["challengeId"].(string)
	if r.Args["passkey"] != true || len(challenge) != 43 {
		t.Fatalf("40018 args %v", r.Args)
	}
	lb := begin(t, k.Do("POST", "/api/v1/auth/passkey/login/begin", "", map[string]string{"challengeId": challenge}), "login begin")
	var ro struct {
		UV    string `json:"userVerification"`
		Allow []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
	}
	if err := json.Unmarshal(lb.Options, &ro); err != nil {
		t.Fatal(err)
	}
	if ro.UV != "required" || len(ro.Allow) != 1 {
		t.Fatalf("request options %s", lb.Options)
	}
	assertion, err := a.Get(lb.Options)
	if err != nil {
		t.Fatal(err)
	}
	var out kerneltest.Tokens
	k.Do("POST", "/api/v1/auth/passkey/login/finish", "", map[string]any{"ceremonyId": lb.CeremonyID, "credential": assertion}).
		Expect(t, "second factor with the passkey", http.StatusOK, 0).Decode(t, &out)
	if out.UserID != uid || out.AccessToken == "" {
		t.Fatalf("second-factor login answer %+v", out)
	}
	tok = out.AccessToken
	k.Do("POST", "/api/v1/auth/passkey/login/begin", "", map[string]string{"challengeId": challenge}).ExpectCode(t, "the spent login challenge", errcode.PasskeyCeremonyInvalid)
	if n := k.Ent().SysLoginLog.Query().Where(sysloginlog.LoginMethod(passkey.MethodPasskey), sysloginlog.Success(true), sysloginlog.UserID(uid)).CountX(ctx); n != 1 {
		t.Errorf("%d successful passkey rows in the login log, want 1", n)
	}

	// Passwordless: off by default.
	k.Do("POST", "/api/v1/auth/passkey/passwordless/begin", "", nil).ExpectCode(t, "passwordless switched off", errcode.PasskeyDisabled)
	setting(t, k, passkey.KeyPasswordless, "true")
	// A copy of the credential as it is now (a clone made today).
	clone := passkeytest.New(config.DevPasskeyOrigin)
	clone.Add(*a.Last())
	passwordlessLogin(t, k, a).Expect(t, "passwordless login", http.StatusOK, 0).Decode(t, &out)
	if out.UserID != uid {
		t.Fatalf("passwordless login as %d, want %d", out.UserID, uid)
	}
	// The clone's counter is behind the original's: a cloned authenticator.
	r = passwordlessLogin(t, k, clone)
	r.ExpectCode(t, "a cloned authenticator (counter going back)", errcode.PasskeyInvalid)
	if r.Args["reason"] != "counter" {
		t.Fatalf("clone refused with %v", r.Args)
	}
	passwordlessLogin(t, k, a).Expect(t, "the original after the clone", http.StatusOK, 0)

	// Authority: nobody removes another user's passkey.
	k.User("pkother", passkeyPassword)
	totpOn(t, k, false)
	otherTok := k.Login("pkother", passkeyPassword).AccessToken
	k.Do("DELETE", "/api/v1/personal/passkeys/"+itoa(item.ID), tok, nil).ExpectCode(t, "removing a passkey without a window (TOTP off)", errcode.ReauthRequired)
	reauthPassword(k, tok, passkeyPassword).Expect(t, "re-auth", http.StatusOK, 0)
	reauthPassword(k, otherTok, passkeyPassword).Expect(t, "re-auth of the other user", http.StatusOK, 0)
	k.Do("DELETE", "/api/v1/personal/passkeys/"+itoa(item.ID), otherTok, nil).ExpectCode(t, "removing another user's passkey", errcode.PasskeyNotFound)
	k.Do("DELETE", "/api/v1/personal/passkeys/abc", tok, nil).ExpectCode(t, "a malformed id", errcode.RequestInvalid)
	if n := k.Ent().SysUserPasskey.Query().Where(sysuserpasskey.UserID(uid)).CountX(ctx); n != 1 {
		t.Fatalf("%d passkeys after a refused removal", n)
	}
	second := k.Login("pkuser", passkeyPassword).AccessToken
	if st, raw := sendEmpty(t, k, "DELETE", "/api/v1/personal/passkeys/"+itoa(item.ID), tok, ""); st != http.StatusOK || raw != "" {
		t.Fatalf("removal = %d %q, want an empty 200", st, raw)
	}
	k.Do("GET", "/api/v1/personal/profile", second, nil).ExpectCode(t, "the other session after a removal", errcode.TokenInvalid)
	expectSecurityNotice(t, k, tok, 2, "passkey was removed", "删除了通行密钥")
	k.Do("DELETE", "/api/v1/personal/passkeys/"+itoa(item.ID), tok, nil).ExpectCode(t, "removing it twice", errcode.PasskeyNotFound)
	passwordlessLogin(t, k, a).ExpectCode(t, "a removed passkey", errcode.PasskeyInvalid)
	poll.Until(t, 10*time.Second, "the removal in the operation log", func() bool {
		return k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/personal/passkeys/"+itoa(item.ID)), sysoplog.ResultCode(0)).CountX(ctx) == 1
	})
}

// The ceremony rules: one-time under parallel finishes, expiry, a ceremony
// of one flow not finishing another, wrong origin and RP id and a missing
// user verification refused (and counted toward the lockout), malformed
// input answered without a 500, and an administrator's MFA clear removing
// the passkeys.
func TestPasskeyCeremonyRules(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	uid := k.User("pkrules", passkeyPassword)
	k.Leaks.Secrets = append(k.Leaks.Secrets, passkeyPassword)
	tok := k.Login("pkrules", passkeyPassword).AccessToken
	a := passkeytest.New(config.DevPasskeyOrigin)
	registerPasskey(t, k, tok, a, "Key")
	setting(t, k, passkey.KeyPasswordless, "true")

	// Parallel finishes of one ceremony: exactly one logs in.
	b := begin(t, k.Do("POST", "/api/v1/auth/passkey/passwordless/begin", "", nil), "passwordless begin")
	cred, err := a.Get(b.Options)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			codes[i] = k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", map[string]any{"ceremonyId": b.CeremonyID, "credential": cred}).Code
		})
	}
	wg.Wait()
	ok, spent := 0, 0
	for _, c := range codes {
		switch c {
		case 0:
			ok++
		case int(errcode.PasskeyCeremonyInvalid):
			spent++
		}
	}
	if ok != 1 || spent != n-1 {
		t.Fatalf("parallel finishes answered %v: %d logins, want 1\n%s", codes, ok, k.Log())
	}

	// A registration ceremony does not finish a login.
	rb := begin(t, k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil), "register begin")
	lb := begin(t, k.Do("POST", "/api/v1/auth/passkey/passwordless/begin", "", nil), "passwordless begin")
	cred, err = a.Get(lb.Options)
	if err != nil {
		t.Fatal(err)
	}
	k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", map[string]any{"ceremonyId": rb.CeremonyID, "credential": cred}).
		ExpectCode(t, "a registration ceremony at a login", errcode.PasskeyCeremonyInvalid)
	k.Do("POST", "/api/v1/auth/passkey/login/finish", "", map[string]any{"ceremonyId": lb.CeremonyID, "credential": cred}).
		ExpectCode(t, "a passwordless ceremony at the second factor", errcode.PasskeyCeremonyInvalid)
	k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", map[string]any{"ceremonyId": lb.CeremonyID, "credential": cred}).
		Expect(t, "the ceremony at its own finish", http.StatusOK, 0)

	// An expired ceremony.
	pk := k.Mfa().Passkeys()
	eb := begin(t, k.Do("POST", "/api/v1/auth/passkey/passwordless/begin", "", nil), "passwordless begin")
	cred, err = a.Get(eb.Options)
	if err != nil {
		t.Fatal(err)
	}
	pk.SetClock(func() time.Time { return time.Now().Add(passkey.CeremonyTTL + time.Second) })
	k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", map[string]any{"ceremonyId": eb.CeremonyID, "credential": cred}).
		ExpectCode(t, "an expired ceremony", errcode.PasskeyCeremonyInvalid)
	pk.SetClock(time.Now)

	// Malformed input: never a 500.
	for _, tt := range []struct {
		name, body string
		code       errcode.Code
	}{
		{"no body fields", `{}`, errcode.RequestInvalid},
		{"a bad ceremony id", `{"ceremonyId":"x","credential":{}}`, errcode.PasskeyCeremonyInvalid},
		{"an unknown ceremony", `{"ceremonyId":"` + strings.Repeat("A", 43) + `","credential":{}}`, errcode.PasskeyCeremonyInvalid},
		{"a credential of the wrong type", `{"ceremonyId":"` + strings.Repeat("A", 43) + `","credential":"x"}`, errcode.PasskeyCeremonyInvalid},
	} {
		k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", tt.body).ExpectCode(t, tt.name, tt.code)
	}
	mb := begin(t, k.Do("POST", "/api/v1/auth/passkey/passwordless/begin", "", nil), "passwordless begin")
	k.Do("POST", "/api/v1/auth/passkey/passwordless/finish", "", map[string]any{"ceremonyId": mb.CeremonyID, "credential": map[string]any{"id": "AA", "type": "public-key"}}).
		ExpectCode(t, "a malformed assertion", errcode.PasskeyInvalid)
	k.Do("POST", "/api/v1/auth/passkey/login/begin", "", map[string]string{"challengeId": strings.Repeat("B", 43)}).
		ExpectCode(t, "an unknown login challenge", errcode.PasskeyCeremonyInvalid)

	// Wrong origin, wrong RP id, no user verification: 40030, counted
	// toward the owner's lockout (5 failures lock it).
	tamper := []struct {
		name string
		set  func(*passkeytest.Authenticator)
	}{
		{"another origin", func(x *passkeytest.Authenticator) { x.Origin = "https://evil.example" }},
		{"another RP id", func(x *passkeytest.Authenticator) { x.RPID = "example.com" }},
		{"no user verification", func(x *passkeytest.Authenticator) { x.NoUV = true }},
		{"an origin on another port", func(x *passkeytest.Authenticator) { x.Origin = "http://localhost:5101" }},
	}
	for _, tt := range tamper {
		bad := passkeytest.New(config.DevPasskeyOrigin)
		bad.Add(*a.Last())
		tt.set(bad)
		r := passwordlessLogin(t, k, bad)
		r.ExpectCode(t, tt.name, errcode.PasskeyInvalid)
		a.Last().SignCount = bad.Last().SignCount // keep the original ahead of what the server saw
	}
	// The registration side: an attestation from another origin.
	evil := passkeytest.New("https://evil.example")
	eb = begin(t, k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil), "register begin")
	ecred, err := evil.Create(eb.Options)
	if err != nil {
		t.Fatal(err)
	}
	k.Do("POST", "/api/v1/personal/passkeys/register/finish", tok, map[string]any{"ceremonyId": eb.CeremonyID, "credential": ecred}).
		ExpectCode(t, "an attestation from another origin", errcode.PasskeyInvalid)
	bad := passkeytest.New(config.DevPasskeyOrigin)
	bad.Add(*a.Last())
	bad.NoUV = true
	passwordlessLogin(t, k, bad).ExpectCode(t, "the fifth failure locks the account", errcode.AccountLocked)
	passwordlessLogin(t, k, a).ExpectCode(t, "a good passkey of a locked account", errcode.AccountLocked)
	if n := k.Ent().SysUserPasskey.Query().Where(sysuserpasskey.UserID(uid)).CountX(ctx); n != 1 {
		t.Fatalf("%d passkeys after refused registrations, want 1", n)
	}

	// An administrator's clear removes the passkeys.
	admin := k.Admin()
	totpOn(t, k, true)
	reauthPassword(k, admin, kerneltest.AdminPassword).Expect(t, "re-auth", http.StatusOK, 0)
	if st, raw := sendEmpty(t, k, "POST", "/api/v1/sys/mfa/clear", admin, `{"userId":`+itoa(uid)+`}`); st != http.StatusOK || raw != "" {
		t.Fatalf("clear = %d %q", st, raw)
	}
	if n := k.Ent().SysUserPasskey.Query().Where(sysuserpasskey.UserID(uid)).CountX(ctx); n != 0 {
		t.Fatalf("%d passkeys after the administrator's clear", n)
	}
	// The user is told in a notice addressed to the user alone.
	last := k.Ent().SysNotice.Query().Order(ent.Desc(sysnotice.FieldID)).FirstX(ctx)
	to := k.Ent().SysNoticeReceiver.Query().Where(sysnoticereceiver.NoticeID(last.ID)).AllX(ctx)
	if last.Content == nil || !strings.Contains(*last.Content, "administrator removed the second factors") || len(to) != 1 || to[0].ReceiverID != uid {
		t.Fatalf("the newest notice after the clear: %+v to %+v", last, to)
	}
}

// Register/begin is +R: with TOTP on, a session without a re-authentication
// window is refused 40024.
func TestPasskeyRegistrationNeedsReauth(t *testing.T) {
	k := kerneltest.Start(t, nil)
	k.User("pkreauth", passkeyPassword)
	k.Leaks.Secrets = append(k.Leaks.Secrets, passkeyPassword)
	tok := k.Login("pkreauth", passkeyPassword).AccessToken
	totpOn(t, k, true)
	k.Do("POST", "/api/v1/personal/passkeys/register/begin", tok, nil).ExpectCode(t, "register begin without a window", errcode.ReauthRequired)
	reauthPassword(k, tok, passkeyPassword).Expect(t, "re-auth", http.StatusOK, 0)
	a := passkeytest.New(config.DevPasskeyOrigin)
	registerPasskey(t, k, tok, a, "After re-auth")
}
