package externalauth_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const (
	base       = "/api/v1/auth/external"
	providerUA = "Mozilla/5.0 (kerneltest) wxwork/4.1"
)

// env is a kernel with one built-in OIDC provider "corp" backed by an
// in-test issuer.
type env struct {
	t  *testing.T
	k  *kerneltest.Kernel
	is *oidctest.Issuer
}

func oidcEnv(is *oidctest.Issuer, i int, code string) []string {
	p := "Service__ExternalAuth__Oidc__" + string(rune('0'+i)) + "__"
	return []string{
		p + "Code=" + code,
		p + "DisplayName=Corp SSO",
		p + "Icon=mdi:key",
		p + "Authority=" + is.URL,
		p + "ClientId=" + is.ClientID,
		p + "ClientSecret=" + is.ClientSecret,
	}
}

// byUsername makes the fixture provider take its account hint from
// preferred_username: the tests written before AccountClaim existed link
// and name accounts by it, which an operator now has to choose explicitly.
const byUsername = "Service__ExternalAuth__Oidc__0__AccountClaim=preferred_username"

// start is startBare with the account hint taken from preferred_username
// (byUsername); extra comes after it.
func start(t *testing.T, extra ...string) *env {
	t.Helper()
	return startBare(t, append([]string{byUsername}, extra...)...)
}

// startBare starts a kernel with the provider "corp" configured by
// oidcEnv alone (no AccountClaim) and the extra settings.
func startBare(t *testing.T, extra ...string) *env {
	t.Helper()
	is := oidctest.New(t)
	for _, u := range []oidctest.User{
		{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"},
		{Subject: "sub-carol", PreferredUsername: "carol", Name: "Carol"},
		{Subject: "sub-dave", PreferredUsername: "dave", Name: "Dave"},
		{Subject: "sub-admin", PreferredUsername: "superAdmin", Name: "Impostor"},
	} {
		is.AddUser(u)
	}
	k := kerneltest.Start(t, append(oidcEnv(is, 0, "corp"), extra...))
	// Whatever the test does, no password, client secret or token (by
	// shape: access and ID tokens, refresh tokens) may reach the log, the
	// operation log or the exception log.
	k.Leaks.Secrets = append(k.Leaks.Secrets, is.ClientSecret, "Bob#Pass12345", "Carol#Pass1234", "Dave#Pass1234",
		"Erin#Pass1234", "Finn#Pass1234", "Ivan#Pass1234", "Nobody#Pass123", "Viewer#Pass123")
	return &env{t: t, k: k, is: is}
}

// set changes a runtime switch through the config service.
func (e *env) set(key, value string) {
	e.t.Helper()
	if err := e.k.Settings().Set(context.Background(), key, value); err != nil {
		e.t.Fatal(err)
	}
}

// browser keeps cookies like a browser would (one jar, paths not
// enforced: every request here is under the cookies' path) and records the
// attributes of the last Set-Cookie of each name.
type browser struct {
	*kerneltest.Jar
	e       *env
	ua      string
	headers map[string]string
}

func (e *env) browser() *browser {
	return &browser{Jar: e.k.NewJar(), e: e, ua: providerUA, headers: map[string]string{}}
}

// send issues a request carrying the jar; token is a Bearer token or "".
func (b *browser) send(method, target, token, body string) kerneltest.Reply {
	b.e.t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Header.Set("User-Agent", b.ua)
	for k, v := range b.headers {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r := b.Send(req)
	return r
}

// authorize starts a login and returns the provider URL.
func (b *browser) authorize(code string) string {
	b.e.t.Helper()
	r := b.send("GET", base+"/"+code+"/authorize", "", "")
	if r.Status != http.StatusFound {
		b.e.t.Fatalf("authorize %s = HTTP %d %s, want 302", code, r.Status, r.Raw)
	}
	return r.Header.Get("Location")
}

// callback sends the provider's redirect back to the kernel and returns the
// frontend result URL.
func (b *browser) callback(cb *url.URL) *url.URL {
	b.e.t.Helper()
	r := b.send("GET", oidctest.Callback(cb), "", "")
	return location(b.e.t, r)
}

// sso runs authorize → provider login as user → callback.
func (b *browser) sso(user string) *url.URL {
	b.e.t.Helper()
	return b.callback(b.e.is.Login(b.e.t, b.authorize("corp"), user))
}

func location(t *testing.T, r kerneltest.Reply) *url.URL {
	t.Helper()
	if r.Status != http.StatusFound {
		t.Fatalf("HTTP %d %s, want 302", r.Status, r.Raw)
	}
	if got := r.Header.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy = %q, want no-referrer", got)
	}
	if got := r.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	u, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// exchange redeems a ticket without any cookie (another browser, or a
// frontend on another site).
func (e *env) exchange(ticket string) kerneltest.Reply {
	e.t.Helper()
	return e.k.Do("POST", base+"/exchange", "", map[string]string{"ticket": ticket})
}

// exchange redeems a ticket with the browser's cookies (the ticket cookie
// of its callback).
func (b *browser) exchange(ticket string) kerneltest.Reply {
	b.e.t.Helper()
	return b.send("POST", base+"/exchange", "", `{"ticket":"`+ticket+`"}`)
}

// ssoTokens runs a whole login that must end in a ticket and exchanges it.
func (b *browser) ssoTokens(user string) kerneltest.Tokens {
	b.e.t.Helper()
	res := b.sso(user)
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		b.e.t.Fatalf("SSO as %s ended in %s, want a ticket", user, res)
	}
	var tk kerneltest.Tokens
	b.exchange(ticket).Expect(b.e.t, "exchange", 200, 0).Decode(b.e.t, &tk)
	return tk
}

// claim posts a pending link with the browser's cookies.
func (b *browser) claim(token, pending string) kerneltest.Reply {
	b.e.t.Helper()
	return b.send("POST", base+"/pending-link/claim", token, `{"pendingLink":"`+pending+`"}`)
}

func errorOf(u *url.URL) string { return u.Query().Get("error") }

// pkce returns a fresh binding verifier and its S256 challenge, as an app
// keeps them (the verifier in sessionStorage).
func pkce(t *testing.T) (verifier, challenge string) {
	t.Helper()
	b := make([]byte, 48)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// bindStartURL posts {code}/bind (body "" for none) and returns the
// one-time kernel start URL it answers.
func (b *browser) bindStartURL(code, token, body string) string {
	b.e.t.Helper()
	r := b.send("POST", base+"/"+code+"/bind", token, body).Expect(b.e.t, "bind", 200, 0)
	var out struct {
		AuthorizeURL string `json:"authorizeUrl"`
	}
	r.Decode(b.e.t, &out)
	u, err := url.Parse(out.AuthorizeURL)
	if err != nil || !strings.HasSuffix(u.Path, base+"/"+code+"/bind/start") || len(u.Query().Get("start")) != 43 {
		b.e.t.Fatalf("authorizeUrl = %q, want the kernel's one-time start URL", out.AuthorizeURL)
	}
	return out.AuthorizeURL
}

// open navigates the browser to a kernel URL (top level) and returns the
// reply.
func (b *browser) open(kernelURL string) kerneltest.Reply {
	b.e.t.Helper()
	u, err := url.Parse(kernelURL)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.send("GET", u.RequestURI(), "", "")
}

// bindAuthorize starts a bind (POST bind, then the start URL) and returns
// the provider URL the start URL redirects to.
func (b *browser) bindAuthorize(code, token, body string) string {
	b.e.t.Helper()
	loc := location(b.e.t, b.open(b.bindStartURL(code, token, body)))
	if !strings.HasPrefix(loc.String(), b.e.is.URL+"/authorize") {
		b.e.t.Fatalf("bind start redirected to %s, want the provider", loc)
	}
	return loc.String()
}
