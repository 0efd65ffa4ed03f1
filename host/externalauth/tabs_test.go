package externalauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
)

// One binder per browser: every authorize reuses the browser's
// well-formed state cookie and refreshes its Max-Age; a malformed one is
// replaced.
func TestOneBinderPerBrowser(t *testing.T) {
	e := start(t)
	b := e.browser()
	b.authorize("corp")
	first := b.Cookie("tn_oauth_state")
	b.authorize("corp")
	if c := b.LastSet("tn_oauth_state"); c == nil || c.Value != first || c.MaxAge != 300 {
		t.Errorf("second authorize set %+v, want the same binder with Max-Age=300", c)
	}
	for _, junk := range []string{"short", strings.Repeat("A", 42) + "!", strings.Repeat("A", 44)} {
		b.SetCookie("tn_oauth_state", junk)
		b.authorize("corp")
		if got := b.Cookie("tn_oauth_state"); got == junk || len(got) != 43 {
			t.Errorf("authorize with the state cookie %q set %q, want a fresh binder", junk, got)
		}
	}
}

// Two tabs of one browser start a login each; their callbacks arrive in
// either order and both end in a ticket that its tab can exchange.
func TestTwoTabs(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	for _, tc := range []struct {
		name  string
		order [2]int
	}{
		{"callbacks in order", [2]int{0, 1}},
		{"callbacks in reverse order", [2]int{1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			var cbs [2]*url.URL
			for i, user := range []string{"bob", "carol"} {
				cbs[i] = e.is.Login(t, b.authorize("corp"), user)
			}
			for _, i := range tc.order {
				r := b.send("GET", oidctest.Callback(cbs[i]), "", "")
				res := location(t, r)
				tk := res.Query().Get("ticket")
				if tk == "" {
					t.Fatalf("tab %d ended in %s, want a ticket", i, res)
				}
				for _, line := range r.Header.Values("Set-Cookie") {
					if strings.HasPrefix(line, "tn_oauth_state=") {
						t.Errorf("tab %d's callback touched the shared binder: %q", i, line)
					}
				}
				// The result page exchanges at once.
				b.exchange(tk).Expect(t, "exchange", 200, 0)
			}
		})
	}
}

// A lost state cookie fails the callback with 40014; a fresh authorize in
// the same browser then works. A junk cookie is cleared by the callback.
func TestLostStateCookie(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	b := e.browser()
	cb := e.is.Login(t, b.authorize("corp"), "bob")
	b.SetCookie("tn_oauth_state", "")
	if res := b.callback(cb); errorOf(res) != "40014" {
		t.Fatalf("callback without the cookie ended in %s, want ?error=40014", res)
	}
	b.ssoTokens("bob")

	t.Run("a mismatched cookie is cleared", func(t *testing.T) {
		b := e.browser()
		cb := e.is.Login(t, b.authorize("corp"), "bob")
		b.SetCookie("tn_oauth_state", strings.Repeat("A", 43))
		if res := b.callback(cb); errorOf(res) != "40014" {
			t.Fatalf("ended in %s, want ?error=40014", res)
		}
		if c := b.LastSet("tn_oauth_state"); c == nil || c.MaxAge >= 0 {
			t.Errorf("state cookie after a mismatch = %+v, want cleared", c)
		}
	})
	t.Run("a malformed cookie is cleared", func(t *testing.T) {
		b := e.browser()
		b.SetCookie("tn_oauth_state", "junk")
		r := b.send("GET", base+"/corp/callback?code=x&state="+strings.Repeat("A", 64), "", "")
		if res := location(t, r); errorOf(res) != "40014" {
			t.Fatalf("ended in %s, want ?error=40014", res)
		}
		if c := b.LastSet("tn_oauth_state"); c == nil || c.MaxAge >= 0 {
			t.Errorf("state cookie after a malformed value = %+v, want cleared", c)
		}
	})
	t.Run("an unknown state leaves a well-formed cookie", func(t *testing.T) {
		b := e.browser()
		b.authorize("corp")
		binder := b.Cookie("tn_oauth_state")
		r := b.send("GET", base+"/corp/callback?code=x&state="+strings.Repeat("A", 64), "", "")
		if res := location(t, r); errorOf(res) != "40014" {
			t.Fatalf("ended in %s, want ?error=40014", res)
		}
		if got := b.Cookie("tn_oauth_state"); got != binder {
			t.Errorf("state cookie after an unknown state = %q, want %q kept for the browser's other tabs", got, binder)
		}
	})
}

// Parallel exchanges of one challenged ticket with the right verifier:
// exactly one succeeds.
func TestParallelExchangeOfOneChallengedTicket(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	verifier, challenge := pkce(t)
	tk := e.challengedSSO("bob", challenge).Query().Get("ticket")
	if tk == "" {
		t.Fatal("no ticket")
	}
	replies := race(t, func(int) (rawReply, error) {
		return e.rawSend("POST", base+"/exchange", "", `{"ticket":"`+tk+`","bindingVerifier":"`+verifier+`"}`, nil)
	})
	ok, refused := 0, 0
	for _, r := range replies {
		switch {
		case r.status == http.StatusOK && r.code == 0:
			ok++
		case r.status == http.StatusOK && r.code == 40014:
			refused++
		default:
			t.Errorf("exchange reply %+v", r)
		}
	}
	if ok != 1 || refused != parallel-1 {
		t.Errorf("%d successes and %d × 40014, want 1 and %d", ok, refused, parallel-1)
	}
}
