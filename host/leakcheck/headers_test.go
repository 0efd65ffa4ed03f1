package leakcheck_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// TestSecurityHeaders checks the headers the security page promises: token
// answers (password login, refresh, SMS login, ticket exchange) and other
// answers carrying a secret (a generated or reset password, a captcha, a bind
// URL) are not stored by browsers or proxies; the external-login redirects
// send no Referer onwards; every 401 carries the Bearer challenge.
func TestSecurityHeaders(t *testing.T) {
	is := oidctest.New(t)
	gw := &webhook{codes: map[string]string{}}
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)
	env := append([]string{
		"Service__Security__Sms__Sender=Webhook",
		"Service__Security__Sms__WebhookUrl=" + gwSrv.URL,
		"Service__Security__Sms__WebhookSecret=" + webhookSecret,
	}, oidcEnv(0, "corp", is, is.ClientSecret)...)
	k := kerneltest.Start(t, env, host.Module{Name: "HeaderTest", Routes: func(_ *module.Deps, api *route.Group) error {
		// A module refusing a caller on its own, with the kernel's 401 code.
		api.Get("/hdrtest/refuse", route.Anonymous, func(fiber.Ctx) error { return errcode.New(errcode.TokenInvalid) })
		return nil
	}})
	for key, v := range map[string]string{"sys.security.smsLogin.enabled": "true", "sys.externalauth.corp.provisioning": "provision"} {
		if err := k.Settings().Set(context.Background(), key, v); err != nil {
			t.Fatal(err)
		}
	}
	s := &scenario{t: t, k: k, is: is, secrets: map[string]string{}}

	noStore := func(what string, r kerneltest.Reply) {
		t.Helper()
		if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Errorf("%s: Cache-Control %q, want no-store", what, cc)
		}
	}
	noReferrer := func(what string, r kerneltest.Reply) {
		t.Helper()
		if r.Status != http.StatusFound {
			t.Fatalf("%s: HTTP %d %s, want 302", what, r.Status, r.Raw)
		}
		if rp := r.Header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q, want no-referrer", what, rp)
		}
		noStore(what, r)
	}
	challenge := func(what string, r kerneltest.Reply, want string) {
		t.Helper()
		r.Expect(t, what, 401, 40006)
		if got := r.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", what, got, want)
		}
	}

	// Token answers.
	login := s.do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword})
	noStore("password login", login)
	tp := s.tokens("login", login)
	refresh := s.do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": tp.RefreshToken})
	noStore("refresh", refresh)
	admin := s.tokens("refresh", refresh).AccessToken

	created := s.do("POST", "/api/v1/sys/user", admin, map[string]any{"account": "hdruser", "name": "Header User", "phone": userPhone, "orgId": 1}).
		Expect(t, "create a user with a generated password", 200, 0)
	noStore("create user (initial password in the answer)", created)
	var u struct {
		ID int64 `json:"id"`
	}
	created.Decode(t, &u)
	reset := s.do("PUT", fmt.Sprintf("/api/v1/sys/user/%d/password", u.ID), admin, map[string]any{}).Expect(t, "reset to a generated password", 200, 0)
	noStore("reset password (new password in the answer)", reset)

	s.do("POST", "/api/v1/auth/sms/send", "", map[string]string{"phone": userPhone}).Expect(t, "send SMS code", 200, 0)
	sms := s.do("POST", "/api/v1/auth/sms/login", "", map[string]string{"phone": userPhone, "code": gw.code(userPhone)}).Expect(t, "SMS login", 200, 0)
	noStore("SMS login", sms)

	noStore("captcha", s.do("GET", "/api/v1/auth/captcha", "", nil).Expect(t, "captcha", 200, 0))

	// External login: authorize and callback redirects, then the exchange.
	b := newBrowser(s)
	authz := b.request("GET", "/api/v1/auth/external/corp/authorize", nil)
	noReferrer("authorize", authz)
	cb := is.Login(t, authz.Header.Get("Location"), "alice")
	done := b.request("GET", cb.RequestURI(), nil)
	noReferrer("callback (ticket)", done)
	ticket := locationQuery(t, done, "ticket")
	exchange := b.post("/api/v1/auth/external/exchange", map[string]string{"ticket": ticket}).Expect(t, "exchange", 200, 0)
	noStore("exchange", exchange)
	noReferrer("callback (error)", b.request("GET", "/api/v1/auth/external/corp/callback?state=nope&code=nope", nil))
	noStore("bind (authorize URL in the answer)", s.do("POST", "/api/v1/auth/external/corp/bind", admin, nil).Expect(t, "bind", 200, 0))

	// The Bearer challenge on every 401, whatever the access level.
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/auth/logout"},     // token level
		{"GET", "/api/v1/personal/profile"}, // session level
		{"GET", "/api/v1/sys/user/page"},    // permission level
	} {
		challenge(c.method+" "+c.path+" without a token", s.do(c.method, c.path, "", nil), "Bearer")
		challenge(c.method+" "+c.path+" with a bad token", s.do(c.method, c.path, admin+"x", nil), `Bearer error="invalid_token"`)
	}
	req := httptest.NewRequest("GET", "/api/v1/ping", nil)
	req.Header.Set("Authorization", "Basic dXNlcjpwdw==")
	challenge("ping with another scheme", s.send(req), "Bearer")
	challenge("a module's own 401", s.do("GET", "/api/v1/hdrtest/refuse", "", nil), "Bearer")
	s.do("POST", "/api/v1/auth/logout", admin, nil).Expect(t, "logout", 200, 0)
	challenge("ping after logout", s.do("GET", "/api/v1/ping", admin, nil), `Bearer error="invalid_token"`)
}

func locationQuery(t *testing.T, r kerneltest.Reply, name string) string {
	t.Helper()
	u, err := http.NewRequest("GET", r.Header.Get("Location"), nil)
	if err != nil {
		t.Fatal(err)
	}
	v := u.URL.Query().Get(name)
	if v == "" {
		t.Fatalf("redirect to %s carries no %s", r.Header.Get("Location"), name)
	}
	return v
}
