package externalauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// authorizeChallenged starts a login with a binding challenge and returns
// the provider URL; no cookie may be set.
func (b *browser) authorizeChallenged(code, challenge string) string {
	b.e.t.Helper()
	r := b.send("GET", base+"/"+code+"/authorize?bindingChallenge="+url.QueryEscape(challenge), "", "")
	if r.Status != http.StatusFound {
		b.e.t.Fatalf("authorize with a challenge = HTTP %d %s, want 302", r.Status, r.Raw)
	}
	if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
		b.e.t.Errorf("a challenged authorize set cookies: %q", sc)
	}
	return r.Header.Get("Location")
}

// challengedSSO runs a challenged login as user in a browser that keeps no
// cookies at all (the app is on another site) and returns the result URL.
func (e *env) challengedSSO(user, challenge string) *url.URL {
	e.t.Helper()
	b := e.browser()
	cb := e.is.Login(e.t, b.authorizeChallenged("corp", challenge), user)
	r := b.send("GET", oidctest.Callback(cb), "", "")
	if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
		e.t.Errorf("a challenged callback set cookies: %q", sc)
	}
	return location(e.t, r)
}

// exchangeWith redeems a ticket without cookies, with the given body.
func (e *env) exchangeWith(body map[string]string) kerneltest.Reply {
	e.t.Helper()
	return e.k.Do("POST", base+"/exchange", "", body)
}

// A challenged login needs no cookie anywhere; the exchange needs the
// verifier, and the ticket is spent by any attempt.
func TestChallengedLogin(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")

	t.Run("happy path without any cookie", func(t *testing.T) {
		verifier, challenge := pkce(t)
		res := e.challengedSSO("bob", challenge)
		tk := res.Query().Get("ticket")
		if tk == "" {
			t.Fatalf("ended in %s, want a ticket", res)
		}
		r := e.exchangeWith(map[string]string{"ticket": tk, "bindingVerifier": verifier}).Expect(t, "exchange with the verifier", 200, 0)
		var out struct {
			AccessToken string `json:"accessToken"`
		}
		r.Decode(t, &out)
		e.k.Do("GET", base+"/bindings", out.AccessToken, nil).Expect(t, "a session route with the SSO token", 200, 0)
		e.exchangeWith(map[string]string{"ticket": tk, "bindingVerifier": verifier}).Expect(t, "replayed exchange", 200, 40014)
	})

	other, _ := pkce(t)
	tests := []struct {
		name     string
		verifier func(right, challenge string) string
	}{
		{"missing verifier", func(string, string) string { return "" }},
		{"wrong verifier", func(string, string) string { return other }},
		{"the challenge as verifier", func(_, challenge string) string { return challenge }},
		{"verifier too short", func(right, _ string) string { return right[:42] }},
		{"verifier with a bad character", func(right, _ string) string { return right[:50] + "+" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			verifier, challenge := pkce(t)
			tk := e.challengedSSO("bob", challenge).Query().Get("ticket")
			if tk == "" {
				t.Fatal("no ticket")
			}
			body := map[string]string{"ticket": tk}
			if v := tc.verifier(verifier, challenge); v != "" {
				body["bindingVerifier"] = v
			}
			e.exchangeWith(body).Expect(t, "exchange", 200, 40014)
			// The refused attempt spent the ticket.
			e.exchangeWith(map[string]string{"ticket": tk, "bindingVerifier": verifier}).Expect(t, "exchange after a refused attempt", 200, 40014)
		})
	}

	t.Run("a ticket cookie does not replace the verifier", func(t *testing.T) {
		b := e.browser()
		b.ticket("carol") // leaves a ticket cookie in the jar
		_, challenge := pkce(t)
		cb := e.is.Login(t, b.authorizeChallenged("corp", challenge), "bob")
		tk := b.callback(cb).Query().Get("ticket")
		b.exchange(tk).Expect(t, "challenged ticket with a cookie and no verifier", 200, 40014)
	})

	t.Run("unchallenged ticket keeps the cookie binding", func(t *testing.T) {
		b := e.browser()
		tk := b.ticket("bob")
		verifier, _ := pkce(t)
		e.exchangeWith(map[string]string{"ticket": tk, "bindingVerifier": verifier}).Expect(t, "unchallenged ticket with a verifier, no cookie", 200, 40014)
		b2 := e.browser()
		tk = b2.ticket("bob")
		b2.send("POST", base+"/exchange", "", `{"ticket":"`+tk+`","bindingVerifier":"`+verifier+`"}`).Expect(t, "unchallenged ticket with its cookie", 200, 0)
	})
}

// With BindTicketToBrowser=false a challenged ticket still needs its
// verifier: the switch concerns unchallenged tickets only.
func TestChallengedTicketWithBindingSwitchedOff(t *testing.T) {
	e := start(t, "Service__ExternalAuth__BindTicketToBrowser=false")
	e.set("sys.externalauth.corp.provisioning", "provision")
	verifier, challenge := pkce(t)
	tk := e.challengedSSO("bob", challenge).Query().Get("ticket")
	e.exchangeWith(map[string]string{"ticket": tk}).Expect(t, "challenged ticket without verifier", 200, 40014)
	other, _ := pkce(t)
	tk = e.challengedSSO("bob", challenge).Query().Get("ticket")
	e.exchangeWith(map[string]string{"ticket": tk, "bindingVerifier": other}).Expect(t, "challenged ticket with another verifier", 200, 40014)
	tk = e.challengedSSO("bob", challenge).Query().Get("ticket")
	e.exchangeWith(map[string]string{"ticket": tk, "bindingVerifier": verifier}).Expect(t, "challenged ticket with its verifier", 200, 0)
}

// A malformed challenge is refused at authorize and bind with a 40014
// envelope (HTTP 200), nothing stored, no cookie.
func TestMalformedChallenge(t *testing.T) {
	e := start(t)
	e.k.User("erin", "Erin#Pass1234")
	erin := e.k.Login("erin", "Erin#Pass1234").AccessToken
	_, good := pkce(t)
	for _, tc := range []struct{ name, challenge string }{
		{"empty", ""},
		{"42 characters", good[:42]},
		{"44 characters", good + "A"},
		{"standard base64", good[:42] + "+"},
		{"padded", good[:42] + "="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			r := b.send("GET", base+"/corp/authorize?bindingChallenge="+url.QueryEscape(tc.challenge), "", "").Expect(t, "authorize", 200, 40014)
			if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
				t.Errorf("a refused authorize set cookies: %q", sc)
			}
			r = b.send("POST", base+"/corp/bind", erin, `{"bindingChallenge":"`+tc.challenge+`"}`).Expect(t, "bind", 200, 40014)
			if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
				t.Errorf("a refused bind set cookies: %q", sc)
			}
		})
	}
	// No challenge (absent or null): the start URL is bound to the browser.
	for _, body := range []string{"", "{}", `{"bindingChallenge":null}`} {
		b := e.browser()
		b.bindStartURL("corp", erin, body)
		if b.Cookie("tn_oauth_state") == "" {
			t.Errorf("bind with body %q set no state cookie", body)
		}
	}
	e.browser().send("POST", base+"/corp/bind", erin, `{"bindingChallenge":42}`).Expect(t, "bind with a number as challenge", 400, 48002)
}

// A challenged pending link is claimed with the verifier, no cookie.
func TestChallengedPendingLink(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("dave", "Dave#Pass1234")
	dave := k.Login("dave", "Dave#Pass1234").AccessToken
	pending := func(t *testing.T, challenge string) string {
		t.Helper()
		res := e.challengedSSO("dave", challenge)
		p := res.Query().Get("pendingLink")
		if p == "" || res.Query().Get("provider") != "corp" {
			t.Fatalf("ended in %s, want a pending link", res)
		}
		return p
	}
	claim := func(body string) kerneltest.Reply {
		return k.Do("POST", base+"/pending-link/claim", dave, body)
	}
	for _, tc := range []struct{ name, verifier string }{
		{"without the verifier", ""},
		{"with a wrong verifier", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verifier, challenge := pkce(t)
			p := pending(t, challenge)
			v := tc.verifier
			if v == "x" {
				v, _ = pkce(t)
			}
			claim(`{"pendingLink":"`+p+`","bindingVerifier":"`+v+`"}`).Expect(t, "claim", 200, 40014)
			claim(`{"pendingLink":"`+p+`","bindingVerifier":"`+verifier+`"}`).Expect(t, "claim after a refused attempt", 200, 40014)
		})
	}
	verifier, challenge := pkce(t)
	p := pending(t, challenge)
	claim(`{"pendingLink":"`+p+`","bindingVerifier":"`+verifier+`"}`).Expect(t, "claim with the verifier", 200, 0)
	claim(`{"pendingLink":"`+p+`","bindingVerifier":"`+verifier+`"}`).Expect(t, "replayed claim", 200, 40014)
	if n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("sub-dave"), sysuserexternal.IsDelete(false)).CountX(context.Background()); n != 1 {
		t.Errorf("%d bindings of sub-dave after the claim, want 1", n)
	}
}

// Challenged bind: start URL → provider → ?bindTicket → bind/complete by
// the same user with the verifier.
func TestChallengedBind(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	k.User("erin", "Erin#Pass1234")
	k.User("finn", "Finn#Pass1234")
	erin := k.Login("erin", "Erin#Pass1234").AccessToken
	finn := k.Login("finn", "Finn#Pass1234").AccessToken
	bound := func() int {
		return k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("sub-bob"), sysuserexternal.IsDelete(false)).CountX(ctx)
	}
	// bindTicket runs a challenged bind for erin in a cookieless browser.
	bindTicket := func(t *testing.T, challenge string) string {
		t.Helper()
		b := e.browser()
		start := b.bindStartURL("corp", erin, `{"bindingChallenge":"`+challenge+`"}`)
		if b.LastSet("tn_oauth_state") != nil {
			t.Error("a challenged bind set the state cookie")
		}
		b.SetCookie("tn_oauth_state", "") // another site: no cookie reaches the kernel
		r := b.open(start)
		if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("a challenged bind start set cookies: %q", sc)
		}
		loc := location(t, r)
		res := b.callback(e.is.Login(t, loc.String(), "bob"))
		q := res.Query()
		if q.Get("bindTicket") == "" || q.Get("provider") != "corp" || q.Get("bind") != "" {
			t.Fatalf("challenged bind ended in %s, want ?bindTicket=…&provider=corp", res)
		}
		if bound() != 0 {
			t.Fatal("the callback bound the identity before bind/complete")
		}
		return q.Get("bindTicket")
	}
	complete := func(token, ticket, verifier string) kerneltest.Reply {
		return k.Do("POST", base+"/bind/complete", token, map[string]string{"bindTicket": ticket, "bindingVerifier": verifier})
	}
	other, _ := pkce(t)
	for _, tc := range []struct {
		name, token string
		verifier    func(right string) string
	}{
		{"another user", finn, func(right string) string { return right }},
		{"wrong verifier", erin, func(string) string { return other }},
		{"missing verifier", erin, func(string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verifier, challenge := pkce(t)
			tk := bindTicket(t, challenge)
			complete(tc.token, tk, tc.verifier(verifier)).Expect(t, "bind/complete", 200, 40014)
			complete(erin, tk, verifier).Expect(t, "bind/complete after a refused attempt", 200, 40014)
			if bound() != 0 {
				t.Error("a refused bind/complete bound the identity")
			}
		})
	}
	k.Do("POST", base+"/bind/complete", "", map[string]string{"bindTicket": "x", "bindingVerifier": "y"}).Expect(t, "bind/complete anonymous", 401, 40006)

	verifier, challenge := pkce(t)
	tk := bindTicket(t, challenge)
	complete(erin, tk, verifier).Expect(t, "bind/complete", 200, 0)
	complete(erin, tk, verifier).Expect(t, "replayed bind/complete", 200, 40014)
	row := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("sub-bob"), sysuserexternal.IsDelete(false)).OnlyX(ctx)
	if row.Issuer == nil || *row.Issuer != e.is.URL {
		t.Errorf("binding issuer = %v, want %s", row.Issuer, e.is.URL)
	}
	if tkn := e.browser().ssoTokens("bob"); k.Ent().SysUser.GetX(ctx, tkn.UserID).Account != "erin" {
		t.Error("SSO after the challenged bind did not sign in as erin")
	}

	t.Run("identity bound to another user", func(t *testing.T) {
		_, challenge := pkce(t)
		b := e.browser()
		start := b.bindStartURL("corp", finn, `{"bindingChallenge":"`+challenge+`"}`)
		res := b.callback(e.is.Login(t, location(t, b.open(start)).String(), "bob"))
		if errorOf(res) != "40017" || res.Query().Get("bindTicket") != "" {
			t.Errorf("ended in %s, want error 40017 and no bind ticket", res)
		}
	})
}

// The bind start URL is one-time and, unchallenged, bound to the browser
// that asked for it.
func TestBindStartURL(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("erin", "Erin#Pass1234")
	erin := k.Login("erin", "Erin#Pass1234").AccessToken

	t.Run("with the cookie", func(t *testing.T) {
		b := e.browser()
		start := b.bindStartURL("corp", erin, "")
		binder := b.Cookie("tn_oauth_state")
		if binder == "" {
			t.Fatal("POST bind set no state cookie")
		}
		r := b.open(start)
		loc := location(t, r)
		if c := b.LastSet("tn_oauth_state"); c == nil || c.Value != binder || c.MaxAge != 300 || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			t.Errorf("the start response's state cookie = %+v, want the same binder re-set (HttpOnly, Lax, Max-Age=300)", c)
		}
		// Replaying the start URL in the same browser: spent.
		if res := location(t, b.open(start)); errorOf(res) != "40014" || res.Path != "/oauth/callback" {
			t.Errorf("replayed start URL ended in %s, want ?error=40014", res)
		}
		res := b.callback(e.is.Login(t, loc.String(), "bob"))
		if res.Query().Get("bind") != "corp" {
			t.Fatalf("bind ended in %s, want ?bind=corp", res)
		}
		k.Do("DELETE", base+"/corp/binding", erin, nil).Expect(t, "unbind", 200, 0)
	})
	t.Run("without the cookie", func(t *testing.T) {
		b := e.browser()
		start := b.bindStartURL("corp", erin, "")
		b.SetCookie("tn_oauth_state", "")
		calls := e.is.TokenCalls()
		if res := location(t, b.open(start)); errorOf(res) != "40014" {
			t.Errorf("start URL without the cookie ended in %s, want ?error=40014", res)
		}
		if e.is.TokenCalls() != calls {
			t.Error("the provider was called")
		}
	})
	t.Run("another provider's path", func(t *testing.T) {
		b := e.browser()
		start := b.bindStartURL("corp", erin, "")
		if res := location(t, b.open(strings.Replace(start, "/corp/", "/nope/", 1))); errorOf(res) != "40014" {
			t.Errorf("start token at another provider ended in %s, want ?error=40014", res)
		}
		if res := location(t, b.open(start)); errorOf(res) != "40014" {
			t.Errorf("start token after use at another provider ended in %s, want ?error=40014", res)
		}
	})
	for _, bad := range []string{"", "short", strings.Repeat("A", 43)} {
		t.Run("bad token "+bad, func(t *testing.T) {
			if res := location(t, e.browser().send("GET", base+"/corp/bind/start?start="+bad, "", "")); errorOf(res) != "40014" {
				t.Errorf("ended in %s, want ?error=40014", res)
			}
		})
	}
	t.Run("behind a gateway", func(t *testing.T) {
		e := start(t, "Service__ExternalAuth__CallbackBaseUrl=https://gw.example/admin")
		e.k.User("erin", "Erin#Pass1234")
		tok := e.k.Login("erin", "Erin#Pass1234").AccessToken
		b := e.browser()
		u := b.bindStartURL("corp", tok, "")
		if !strings.HasPrefix(u, "https://gw.example/admin/api/v1/auth/external/corp/bind/start?start=") {
			t.Errorf("start URL = %q, want it under CallbackBaseUrl", u)
		}
	})
}

// POST bind/complete is a fixed path: it never reaches {provider}/bind
// (nor the other way round), in either registration order.
func TestBindCompleteRoute(t *testing.T) {
	e := start(t)
	e.k.User("erin", "Erin#Pass1234")
	erin := e.k.Login("erin", "Erin#Pass1234").AccessToken
	// bind/complete answers as itself: 40014 for an unknown ticket (the
	// {provider}/bind handler would answer {authorizeUrl} or 40013).
	e.k.Do("POST", base+"/bind/complete", erin, map[string]string{"bindTicket": strings.Repeat("A", 43), "bindingVerifier": strings.Repeat("v", 43)}).Expect(t, "bind/complete", 200, 40014)
	e.k.Do("POST", base+"/bind/complete", erin, map[string]string{}).Expect(t, "bind/complete without a ticket", 200, 40014)
	// A provider called "bind" or "complete" is just an unknown provider.
	e.k.Do("POST", base+"/bind/bind", erin, nil).Expect(t, "bind of a provider named bind", 200, 40013)
	e.k.Do("POST", base+"/complete/bind", erin, nil).Expect(t, "bind of a provider named complete", 200, 40013)
	e.browser().bindStartURL("corp", erin, "")
}
