package codehost

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/internal/vendorfake"
	"github.com/adminkernel/kernel/internal/vendortest"
	"github.com/adminkernel/kernel/pluginsdk"
)

const (
	redirectURI = "https://kernel.example.com/api/v1/auth/external/code_host/callback"
	state       = "St4te0123456789abcdef"
	verifier    = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func settingsFor(f *vendorfake.GitHub) pluginsdk.Settings {
	return pluginsdk.Settings{
		"ClientId":     f.ClientID,
		"ClientSecret": f.Secret,
		"WebBase":      f.URL(),
		"ApiBase":      f.URL(),
	}
}

func newProvider(t *testing.T, f *vendorfake.GitHub, tweak func(p *Provider, s pluginsdk.Settings)) *Provider {
	t.Helper()
	s := settingsFor(f)
	secret := s["ClientSecret"]
	p := New(vendortest.Logger(t, func() []string {
		f.Lock()
		out := []string{secret, f.Secret, "gho_"}
		f.Unlock()
		return append(out, f.Issued()...)
	}))
	if tweak != nil {
		tweak(p, s)
	}
	if err := p.Configure(context.Background(), s); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return p
}

func authorize(t *testing.T, p *Provider, redirect string) *url.URL {
	t.Helper()
	ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirect, Nonce: "n0nce", CodeChallenge: challenge(verifier), CodeChallengeMethod: pluginsdk.CodeChallengeS256})
	if err != nil {
		t.Fatalf("AuthorizeURL: %v", err)
	}
	return vendortest.Follow(t, ar.URL)
}

func login(t *testing.T, p *Provider) map[string]string {
	t.Helper()
	return vendortest.Callback(t, authorize(t, p, redirectURI), redirectURI, state)
}

func exchangeWith(t *testing.T, p *Provider, req pluginsdk.ExchangeRequest) pluginsdk.ExchangeResponse {
	t.Helper()
	resp, err := p.Exchange(context.Background(), req)
	if err != nil {
		t.Fatalf("Exchange: unexpected transport error %v", err)
	}
	if (resp.Identity == nil) == (resp.Error == nil) {
		t.Fatalf("Exchange: exactly one of Identity and Error must be set: %+v", resp)
	}
	return resp
}

func exchange(t *testing.T, p *Provider, q map[string]string) pluginsdk.ExchangeResponse {
	t.Helper()
	return exchangeWith(t, p, pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI, CodeVerifier: verifier, Nonce: "n0nce"})
}

func TestDescribe(t *testing.T) {
	d, err := New(nil).Describe(context.Background())
	want := pluginsdk.Descriptor{Code: "code_host", DisplayName: "Code Host", Icon: "ant-design:github-outlined", Brand: "github", ProtocolVersion: pluginsdk.ProtocolVersion}
	if err != nil || d != want {
		t.Errorf("Describe = %+v, %v; want %+v", d, err, want)
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name string
		s    pluginsdk.Settings
		want string
	}{
		{"minimal", pluginsdk.Settings{"ClientId": "Iv1.x", "ClientSecret": "s3cr3tvalue"}, ""},
		{"any case", pluginsdk.Settings{"clientID": "Iv1.x", "CLIENTSECRET": "s3cr3tvalue", "usepkce": "TRUE", "webbase": "https://ghe.example.com/"}, ""},
		{"nothing", pluginsdk.Settings{}, "ClientId, ClientSecret required"},
		{"no secret", pluginsdk.Settings{"ClientId": "Iv1.x"}, "ClientSecret required"},
		{"no id", pluginsdk.Settings{"ClientSecret": "s3cr3tvalue"}, "ClientId required"},
		{"id with spaces", pluginsdk.Settings{"ClientId": "a b", "ClientSecret": "s3cr3tvalue"}, "ClientId"},
		{"bad WebBase", pluginsdk.Settings{"ClientId": "Iv1.x", "ClientSecret": "s3cr3tvalue", "WebBase": "github.com"}, "WebBase"},
		{"bad ApiBase", pluginsdk.Settings{"ClientId": "Iv1.x", "ClientSecret": "s3cr3tvalue", "ApiBase": "https://u:p@api.github.com"}, "ApiBase"},
		{"bad UsePkce", pluginsdk.Settings{"ClientId": "Iv1.x", "ClientSecret": "s3cr3tvalue", "UsePkce": "yes please"}, "UsePkce"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New(nil).Configure(context.Background(), tt.s)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Configure: %v", err)
				}
				return
			}
			var pe *pluginsdk.ProviderError
			if !errors.As(err, &pe) || pe.Kind != pluginsdk.Misconfigured || !strings.Contains(pe.Message, tt.want) {
				t.Fatalf("Configure error = %v, want Misconfigured mentioning %q", err, tt.want)
			}
			vendortest.NoSecrets(t, "message", pe.Message, "s3cr3tvalue")
		})
	}
}

func TestHosts(t *testing.T) {
	tests := []struct {
		s            pluginsdk.Settings
		web, api     string
		wantAuthorze string
	}{
		{pluginsdk.Settings{}, DefaultWebBase, DefaultAPIBase, "https://github.com/login/oauth/authorize?"},
		{pluginsdk.Settings{"WebBase": "https://ghe.example.com"}, "https://ghe.example.com", "https://ghe.example.com/api/v3", "https://ghe.example.com/login/oauth/authorize?"},
		{pluginsdk.Settings{"WebBase": "https://ghe.example.com/", "ApiBase": "https://api.ghe.example.com/"}, "https://ghe.example.com", "https://api.ghe.example.com", "https://ghe.example.com/login/oauth/authorize?"},
	}
	for _, tt := range tests {
		p := New(nil)
		tt.s["ClientId"], tt.s["ClientSecret"] = "Iv1.x", "s3cr3tvalue"
		if err := p.Configure(context.Background(), tt.s); err != nil {
			t.Fatal(err)
		}
		c := p.cur.Load().cfg
		if c.webBase != tt.web || c.apiBase != tt.api {
			t.Errorf("%v: web %q api %q, want %q %q", tt.s, c.webBase, c.apiBase, tt.web, tt.api)
		}
		r, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI})
		if err != nil || !strings.HasPrefix(r.URL, tt.wantAuthorze) {
			t.Errorf("URL = %q, %v", r.URL, err)
		}
	}
}

func TestUnconfigured(t *testing.T) {
	p := New(nil)
	if _, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI}); err == nil {
		t.Error("AuthorizeURL succeeded before Configure")
	}
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c0de"}})
	if err != nil || r.Error == nil || r.Error.Kind != pluginsdk.Misconfigured {
		t.Errorf("Exchange before Configure = %+v, %v", r, err)
	}
}

func TestAuthorizeURL(t *testing.T) {
	f := vendorfake.NewGitHub(t)
	enc := url.QueryEscape(redirectURI)
	base := f.URL() + "/login/oauth/authorize?client_id=" + f.ClientID + "&redirect_uri=" + enc + "&scope=read%3Auser&state=" + state
	for _, tt := range []struct {
		name string
		pkce string
		want string
	}{
		{"plain", "false", base},
		{"pkce", "true", base + "&code_challenge=" + challenge(verifier) + "&code_challenge_method=S256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["UsePkce"] = tt.pkce })
			r, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI, Nonce: "n", CodeChallenge: challenge(verifier), CodeChallengeMethod: "S256"})
			if err != nil {
				t.Fatal(err)
			}
			if r.URL != tt.want {
				t.Errorf("URL =\n %s\nwant\n %s", r.URL, tt.want)
			}
			u, _ := url.Parse(r.URL)
			if got := u.Query().Get("scope"); got != "read:user" {
				t.Errorf("scope = %q, want read:user only", got)
			}
			vendortest.NoSecrets(t, "URL", r.URL, f.Secret)
		})
	}
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["UsePkce"] = "true" })
	for _, r := range []pluginsdk.AuthorizeRequest{
		{State: "", RedirectURI: redirectURI, CodeChallenge: "x", CodeChallengeMethod: "S256"},
		{State: state, RedirectURI: "", CodeChallenge: "x", CodeChallengeMethod: "S256"},
		{State: state, RedirectURI: redirectURI},                                                   // PKCE on, no challenge
		{State: state, RedirectURI: redirectURI, CodeChallenge: "x", CodeChallengeMethod: "plain"}, // not S256
	} {
		if _, err := p.AuthorizeURL(context.Background(), r); err == nil {
			t.Errorf("AuthorizeURL(%+v) succeeded", r)
		}
	}
}

func TestExchangeHappyPath(t *testing.T) {
	for _, tt := range []struct {
		name  string
		tweak func(f *vendorfake.GitHub, s pluginsdk.Settings)
	}{
		{"json answer", nil},
		{"form-encoded answer", func(f *vendorfake.GitHub, _ pluginsdk.Settings) { f.FormAnswer = true }},
		{"pkce", func(_ *vendorfake.GitHub, s pluginsdk.Settings) { s["UsePkce"] = "true" }},
		{"enterprise layout", func(_ *vendorfake.GitHub, s pluginsdk.Settings) { delete(s, "ApiBase") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := vendorfake.NewGitHub(t)
			p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) {
				if tt.tweak != nil {
					tt.tweak(f, s)
				}
			})
			r := exchange(t, p, login(t, p))
			want := pluginsdk.Identity{Subject: "583231", AccountHint: "octocat", DisplayName: "The Octocat"}
			if r.Identity == nil || *r.Identity != want {
				t.Fatalf("Exchange = %+v %+v, want %+v", r.Identity, r.Error, want)
			}
			if f.LastUA == "" || !strings.HasPrefix(f.LastAuth, "Bearer gho_") {
				t.Errorf("/user called with User-Agent %q, Authorization %q", f.LastUA, f.LastAuth)
			}
			if n := f.Count("/user/emails") + f.Count("/api/v3/user/emails"); n != 0 {
				t.Errorf("/user/emails called %d times; read:user does not grant it", n)
			}
		})
	}
}

func TestRenamedLoginKeepsSubject(t *testing.T) {
	f := vendorfake.NewGitHub(t)
	p := newProvider(t, f, nil)
	first := exchange(t, p, login(t, p))
	f.Lock()
	f.Users["octocat"].Login = "octo-renamed"
	f.Unlock()
	second := exchange(t, p, login(t, p))
	if first.Identity == nil || second.Identity == nil {
		t.Fatal(first.Error, second.Error)
	}
	if first.Identity.Subject != second.Identity.Subject || second.Identity.AccountHint != "octo-renamed" {
		t.Errorf("after a rename: %+v then %+v; want the same subject and the new login", first.Identity, second.Identity)
	}
}

func TestNullNameAndLargeID(t *testing.T) {
	f := vendorfake.NewGitHub(t)
	f.NextUser = "nameless"
	p := newProvider(t, f, nil)
	r := exchange(t, p, login(t, p))
	want := pluginsdk.Identity{Subject: "9007199254740993", AccountHint: "nameless", DisplayName: "nameless"}
	if r.Identity == nil || *r.Identity != want {
		t.Fatalf("Exchange = %+v %+v, want %+v", r.Identity, r.Error, want)
	}
}

func TestExchangeErrors(t *testing.T) {
	type tc struct {
		name  string
		setup func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest
		kind  pluginsdk.ErrorKind
		want  string
	}
	req := func(q map[string]string) pluginsdk.ExchangeRequest {
		return pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI, CodeVerifier: verifier}
	}
	tests := []tc{
		{"used code", func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			q := login(t, p)
			if r := exchange(t, p, q); r.Identity == nil {
				t.Fatalf("first exchange: %+v", r.Error)
			}
			return req(q)
		}, pluginsdk.ExchangeFailed, "bad_verification_code"},
		{"unknown code", func(*vendorfake.GitHub, *Provider) pluginsdk.ExchangeRequest {
			return req(map[string]string{"code": "0000forged0000", "state": state})
		}, pluginsdk.ExchangeFailed, "bad_verification_code"},
		{"expired code", func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			q := login(t, p)
			f.Lock()
			f.Clock = f.Clock.Add(11 * time.Minute)
			f.Unlock()
			return req(q)
		}, pluginsdk.ExchangeFailed, "bad_verification_code"},
		{"wrong secret", func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			q := login(t, p)
			f.Secret = "rotated-secret"
			return req(q)
		}, pluginsdk.Misconfigured, "incorrect_client_credentials"},
		{"redirect URI differs from authorization", func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			r := req(login(t, p))
			r.RedirectURI = redirectURI + "/other"
			return r
		}, pluginsdk.Misconfigured, "redirect_uri_mismatch"},
		{"redirect URI not registered (callback error)", func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			// The vendor sends the error to the registered callback.
			loc := authorize(t, p, "https://kernel.example.com:8443/api/v1/auth/external/code_host/callback")
			return req(vendortest.Callback(t, loc, redirectURI, state))
		}, pluginsdk.Misconfigured, "redirect_uri_mismatch"},
		{"user denied", func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			f.NextUser = "deny"
			return req(login(t, p))
		}, pluginsdk.Denied, "access_denied"},
		{"no code", func(*vendorfake.GitHub, *Provider) pluginsdk.ExchangeRequest {
			return req(map[string]string{"state": state})
		}, pluginsdk.InvalidCallback, "no code"},
		{"malformed code", func(*vendorfake.GitHub, *Provider) pluginsdk.ExchangeRequest {
			return req(map[string]string{"code": "a\x00b", "state": state})
		}, pluginsdk.InvalidCallback, "malformed"},
	}
	for _, m := range append(vendorfake.Misbehaviours, vendorfake.Misbehaviour{Name: "huge-declared", Want: "exceeds"}) {
		tests = append(tests, tc{"vendor " + m.Name, func(f *vendorfake.GitHub, p *Provider) pluginsdk.ExchangeRequest {
			q := login(t, p)
			f.Misbehave = m.Name
			return req(q)
		}, pluginsdk.ExchangeFailed, m.Want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := vendorfake.NewGitHub(t)
			p := newProvider(t, f, nil)
			secret := f.Secret
			r := tt.setup(f, p)
			resp := exchangeWith(t, p, r)
			if resp.Error == nil {
				t.Fatalf("Exchange succeeded: %+v", resp.Identity)
			}
			if resp.Error.Kind != tt.kind || !strings.Contains(resp.Error.Message, tt.want) {
				t.Errorf("Exchange error = %v, want kind %s mentioning %q", resp.Error, tt.kind, tt.want)
			}
			vendortest.NoSecrets(t, "error message", resp.Error.Message, secret, r.Query["code"], "gho_")
			if f.Count(vendorfake.StolenPath) != 0 {
				t.Error("a vendor redirect was followed")
			}
		})
	}
}

func TestPKCEVerifierChecked(t *testing.T) {
	f := vendorfake.NewGitHub(t)
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["UsePkce"] = "true" })
	q := login(t, p)
	r := exchangeWith(t, p, pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI, CodeVerifier: "wrong-verifier-wrong-verifier-wrong-verifier"})
	if r.Error == nil || r.Error.Kind != pluginsdk.ExchangeFailed {
		t.Fatalf("wrong verifier = %+v %+v", r.Identity, r.Error)
	}
	r = exchangeWith(t, p, pluginsdk.ExchangeRequest{Query: login(t, p), RedirectURI: redirectURI})
	if r.Error == nil || r.Error.Kind != pluginsdk.Misconfigured {
		t.Fatalf("no verifier = %+v %+v, want Misconfigured", r.Identity, r.Error)
	}
}

func TestBadCredentialsAtUser(t *testing.T) {
	f := vendorfake.NewGitHub(t)
	p := newProvider(t, f, nil)
	// A fake API host that knows no token: /user answers 401 Bad credentials.
	other := vendorfake.NewGitHub(t)
	s := settingsFor(f)
	s["ApiBase"] = other.URL()
	if err := p.Configure(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	r := exchange(t, p, login(t, p))
	if r.Error == nil || r.Error.Kind != pluginsdk.ExchangeFailed || !strings.Contains(r.Error.Message, "HTTP 401: Bad credentials") {
		t.Fatalf("Exchange = %+v %+v, want ExchangeFailed with Bad credentials", r.Identity, r.Error)
	}
	vendortest.NoSecrets(t, "error message", r.Error.Message, "gho_")
}

func TestSlowVendorTimesOut(t *testing.T) {
	f := vendorfake.NewGitHub(t)
	p := newProvider(t, f, func(p *Provider, _ pluginsdk.Settings) { p.timeout = 150 * time.Millisecond })
	q := login(t, p)
	f.Misbehave = "slow"
	start := time.Now()
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI})
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Exchange against a hanging vendor = %+v, %v; want a timeout error", r, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	vendortest.NoSecrets(t, "transport error", err.Error(), f.Secret, q["code"])
}
