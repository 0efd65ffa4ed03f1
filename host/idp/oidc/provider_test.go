package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/idp/oidc"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/pluginsdk"
)

const redirectURI = "http://kernel.test/api/v1/auth/external/corp/callback"

func newProvider(t *testing.T, is *oidctest.Issuer, mod func(*oidc.Config)) *oidc.Provider {
	t.Helper()
	cfg := oidc.Config{
		Code: "corp", DisplayName: "Corp SSO", Icon: "mdi:key", Brand: "corp-sso",
		Authority: is.URL, ClientID: is.ClientID, ClientSecret: is.ClientSecret,
		UsePKCE: true,
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := oidc.New(cfg)
	if err != nil {
		t.Fatalf("oidc.New: %v", err)
	}
	return p
}

// flow is one login's host-side values.
type flow struct {
	state, nonce, verifier string
}

func newFlow() flow {
	return flow{state: strings.ToUpper(rand.Text() + rand.Text()), nonce: rand.Text(), verifier: rand.Text() + rand.Text()}
}

func (f flow) challenge() string {
	sum := sha256.Sum256([]byte(f.verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// login runs authorize → provider login → exchange and returns the result.
func login(t *testing.T, p *oidc.Provider, is *oidctest.Issuer, f flow, user string) (pluginsdk.ExchangeResponse, error) {
	t.Helper()
	ctx := context.Background()
	ar, err := p.AuthorizeURL(ctx, pluginsdk.AuthorizeRequest{
		State: f.state, RedirectURI: redirectURI, UserAgent: "test", Nonce: f.nonce,
		CodeChallenge: f.challenge(), CodeChallengeMethod: pluginsdk.CodeChallengeS256, Purpose: pluginsdk.PurposeLogin,
	})
	if err != nil {
		t.Fatalf("AuthorizeURL: %v", err)
	}
	cb := is.Login(t, ar.URL, user)
	q := map[string]string{}
	for k, v := range cb.Query() {
		q[k] = v[0]
	}
	if q["state"] != f.state {
		t.Fatalf("callback state = %q, want %q", q["state"], f.state)
	}
	return p.Exchange(ctx, pluginsdk.ExchangeRequest{
		Query: q, RedirectURI: redirectURI, ProviderData: ar.ProviderData, Nonce: f.nonce, CodeVerifier: f.verifier,
	})
}

func TestDescribeAndAuthorizeURL(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, nil)
	d, err := p.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := pluginsdk.Descriptor{Code: "corp", DisplayName: "Corp SSO", Icon: "mdi:key", Brand: "corp-sso", ProtocolVersion: pluginsdk.ProtocolVersion}
	if d != want {
		t.Errorf("Describe = %+v, want %+v", d, want)
	}
	f := newFlow()
	ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{
		State: f.state, RedirectURI: redirectURI, Nonce: f.nonce,
		CodeChallenge: f.challenge(), CodeChallengeMethod: pluginsdk.CodeChallengeS256,
	})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(ar.URL)
	q := u.Query()
	checks := map[string]string{
		"response_type": "code", "client_id": is.ClientID, "redirect_uri": redirectURI, "state": f.state,
		"nonce": f.nonce, "code_challenge": f.challenge(), "code_challenge_method": "S256", "scope": "openid profile email",
	}
	for k, v := range checks {
		if got := q.Get(k); got != v {
			t.Errorf("authorize %s = %q, want %q", k, got, v)
		}
	}
	if !strings.HasPrefix(ar.URL, is.URL+"/authorize?") {
		t.Errorf("authorize URL %q is not the discovered endpoint", ar.URL)
	}
}

func TestAuthorizeURLRequiresNonceAndChallenge(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, nil)
	f := newFlow()
	tests := []struct {
		name string
		req  pluginsdk.AuthorizeRequest
	}{
		{"no nonce", pluginsdk.AuthorizeRequest{State: f.state, RedirectURI: redirectURI, CodeChallenge: f.challenge(), CodeChallengeMethod: "S256"}},
		{"no challenge", pluginsdk.AuthorizeRequest{State: f.state, RedirectURI: redirectURI, Nonce: f.nonce}},
		{"plain challenge", pluginsdk.AuthorizeRequest{State: f.state, RedirectURI: redirectURI, Nonce: f.nonce, CodeChallenge: f.verifier, CodeChallengeMethod: "plain"}},
		{"no state", pluginsdk.AuthorizeRequest{RedirectURI: redirectURI, Nonce: f.nonce, CodeChallenge: f.challenge(), CodeChallengeMethod: "S256"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := p.AuthorizeURL(context.Background(), tc.req); err == nil {
				t.Error("AuthorizeURL succeeded, want an error")
			}
		})
	}
}

func TestExchange(t *testing.T) {
	is := oidctest.New(t)
	yes, no := true, false
	is.AddUser(oidctest.User{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob", Email: "bob@example.test", EmailVerified: &no})
	is.AddUser(oidctest.User{Subject: "sub-carol", PreferredUsername: "carol", Name: "Carol", Email: "carol@example.test", EmailVerified: &yes})
	p := newProvider(t, is, nil)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		user    string
		mutate  func(map[string]any)
		signer  *rsa.PrivateKey
		change  func(*flow, *pluginsdk.ExchangeRequest)
		want    *pluginsdk.Identity
		kind    pluginsdk.ErrorKind
		message string
	}{
		{name: "valid", want: &pluginsdk.Identity{Subject: "sub-alice", DisplayName: "Alice", Email: "alice@example.test"}},
		{name: "email not verified is dropped", user: "bob", want: &pluginsdk.Identity{Subject: "sub-bob", DisplayName: "Bob"}},
		{name: "email verified kept", user: "carol", want: &pluginsdk.Identity{Subject: "sub-carol", DisplayName: "Carol", Email: "carol@example.test"}},
		{name: "email_verified as string false", mutate: func(c map[string]any) { c["email_verified"] = "false" },
			want: &pluginsdk.Identity{Subject: "sub-alice", DisplayName: "Alice"}},
		{name: "azp equal to the client id with one audience", mutate: func(c map[string]any) { c["azp"] = "kernel-client" },
			want: &pluginsdk.Identity{Subject: "sub-alice", DisplayName: "Alice", Email: "alice@example.test"}},
		{name: "wrong nonce", mutate: func(c map[string]any) { c["nonce"] = "someone-else" }, kind: pluginsdk.ExchangeFailed, message: "nonce"},
		{name: "missing nonce", mutate: func(c map[string]any) { delete(c, "nonce") }, kind: pluginsdk.ExchangeFailed, message: "nonce"},
		{name: "wrong audience", mutate: func(c map[string]any) { c["aud"] = "another-client" }, kind: pluginsdk.ExchangeFailed, message: "audience"},
		{name: "several audiences without azp", mutate: func(c map[string]any) { c["aud"] = []string{"kernel-client", "other"} }, kind: pluginsdk.ExchangeFailed, message: "azp"},
		{name: "untrusted extra audience", mutate: func(c map[string]any) {
			c["aud"] = []string{"kernel-client", "other"}
			c["azp"] = "kernel-client"
		}, kind: pluginsdk.ExchangeFailed, message: "untrusted audience"},
		{name: "azp of another client", mutate: func(c map[string]any) { c["azp"] = "other" }, kind: pluginsdk.ExchangeFailed, message: "azp"},
		{name: "wrong issuer", mutate: func(c map[string]any) { c["iss"] = "https://evil.example" }, kind: pluginsdk.ExchangeFailed, message: "issued by a different provider"},
		{name: "expired", mutate: func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }, kind: pluginsdk.ExchangeFailed, message: "expired"},
		{name: "missing iat", mutate: func(c map[string]any) { delete(c, "iat") }, kind: pluginsdk.ExchangeFailed, message: "iat"},
		{name: "iat in the future", mutate: func(c map[string]any) { c["iat"] = time.Now().Add(10 * time.Minute).Unix() }, kind: pluginsdk.ExchangeFailed, message: "iat"},
		{name: "missing sub", mutate: func(c map[string]any) { delete(c, "sub") }, kind: pluginsdk.ExchangeFailed, message: "sub"},
		{name: "empty sub", mutate: func(c map[string]any) { c["sub"] = "" }, kind: pluginsdk.ExchangeFailed, message: "sub"},
		{name: "at_hash mismatch", mutate: func(c map[string]any) { c["at_hash"] = "AAAAAAAAAAAAAAAAAAAAAA" }, kind: pluginsdk.ExchangeFailed, message: "at_hash"},
		{name: "bad signature", signer: other, kind: pluginsdk.ExchangeFailed, message: "signature"},
		{name: "wrong PKCE verifier", change: func(_ *flow, r *pluginsdk.ExchangeRequest) { r.CodeVerifier = "x" + r.CodeVerifier[1:] },
			kind: pluginsdk.ExchangeFailed, message: "HTTP 400"},
		{name: "provider error", change: func(_ *flow, r *pluginsdk.ExchangeRequest) {
			r.Query = map[string]string{"error": "access_denied", "state": r.Query["state"]}
		},
			kind: pluginsdk.Denied},
		{name: "no code", change: func(_ *flow, r *pluginsdk.ExchangeRequest) { delete(r.Query, "code") }, kind: pluginsdk.InvalidCallback},
		{name: "iss parameter of another issuer", change: func(_ *flow, r *pluginsdk.ExchangeRequest) { r.Query["iss"] = "https://evil.example" },
			kind: pluginsdk.InvalidCallback},
		{name: "no stored nonce", change: func(_ *flow, r *pluginsdk.ExchangeRequest) { r.Nonce = "" }, kind: pluginsdk.Misconfigured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is.Mutate(tc.mutate)
			is.SignWith(tc.signer)
			t.Cleanup(func() { is.Mutate(nil); is.SignWith(nil) })
			f := newFlow()
			ctx := context.Background()
			ar, err := p.AuthorizeURL(ctx, pluginsdk.AuthorizeRequest{
				State: f.state, RedirectURI: redirectURI, Nonce: f.nonce,
				CodeChallenge: f.challenge(), CodeChallengeMethod: pluginsdk.CodeChallengeS256,
			})
			if err != nil {
				t.Fatal(err)
			}
			cb := is.Login(t, ar.URL, tc.user)
			req := pluginsdk.ExchangeRequest{Query: map[string]string{}, RedirectURI: redirectURI, Nonce: f.nonce, CodeVerifier: f.verifier}
			for k, v := range cb.Query() {
				req.Query[k] = v[0]
			}
			if tc.change != nil {
				tc.change(&f, &req)
			}
			resp, err := p.Exchange(ctx, req)
			if err != nil {
				t.Fatalf("Exchange error = %v, want data", err)
			}
			switch {
			case tc.want != nil:
				if resp.Error != nil || resp.Identity == nil {
					t.Fatalf("Exchange = %+v, want identity %+v", resp.Error, tc.want)
				}
				if *resp.Identity != *tc.want {
					t.Errorf("identity = %+v, want %+v", *resp.Identity, *tc.want)
				}
			default:
				if resp.Error == nil {
					t.Fatalf("Exchange succeeded with %+v, want %s", resp.Identity, tc.kind)
				}
				if resp.Error.Kind != tc.kind || !strings.Contains(resp.Error.Message, tc.message) {
					t.Errorf("error = %v, want kind %s mentioning %q", resp.Error, tc.kind, tc.message)
				}
			}
		})
	}
}

func TestTrustedAudience(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, func(c *oidc.Config) { c.TrustedAudiences = []string{"gateway"} })
	is.Mutate(func(c map[string]any) {
		c["aud"] = []string{"kernel-client", "gateway"}
		c["azp"] = "kernel-client"
	})
	resp, err := login(t, p, is, newFlow(), "")
	if err != nil || resp.Identity == nil {
		t.Fatalf("Exchange = %+v, %v; want an identity", resp.Error, err)
	}
}

func TestWithoutPKCE(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, func(c *oidc.Config) { c.UsePKCE = false; c.ClientSecret = is.ClientSecret })
	f := newFlow()
	ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{
		State: f.state, RedirectURI: redirectURI, Nonce: f.nonce,
		CodeChallenge: f.challenge(), CodeChallengeMethod: pluginsdk.CodeChallengeS256,
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ar.URL, "code_challenge") {
		t.Errorf("authorize URL %q carries a code challenge with UsePkce off", ar.URL)
	}
	cb := is.Login(t, ar.URL, "")
	q := map[string]string{"code": cb.Query().Get("code"), "state": f.state}
	// The host always has a verifier; it must not be sent when PKCE is off
	// (the test provider refuses a verifier without a challenge).
	resp, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI, Nonce: f.nonce, CodeVerifier: f.verifier})
	if err != nil || resp.Identity == nil {
		t.Fatalf("Exchange = %+v, %v; want an identity", resp.Error, err)
	}
}

func TestDiscoveryFailures(t *testing.T) {
	is := oidctest.New(t)
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"` + strings.Repeat("x", 2<<20) + `"}`))
	}))
	t.Cleanup(big.Close)
	redirecting := httptest.NewServer(http.RedirectHandler(is.URL+"/.well-known/openid-configuration", http.StatusFound))
	t.Cleanup(redirecting.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name      string
		authority string
		wantErr   error
	}{
		{"issuer mismatch (trailing slash)", is.URL + "/", nil},
		{"unreachable", closed.URL, nil},
		{"oversized discovery document", big.URL, oidc.ErrResponseTooLarge},
		{"redirect not followed", redirecting.URL, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, is, func(c *oidc.Config) { c.Authority = tc.authority })
			f := newFlow()
			_, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{
				State: f.state, RedirectURI: redirectURI, Nonce: f.nonce, CodeChallenge: f.challenge(), CodeChallengeMethod: "S256",
			})
			if err == nil {
				t.Fatal("AuthorizeURL succeeded, want a discovery error")
			}
			// go-oidc flattens errors with %v: compare the text.
			if tc.wantErr != nil && !strings.Contains(err.Error(), tc.wantErr.Error()) {
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// The token call never follows a redirect (the code would travel to
// another host).
func TestTokenRedirectNotFollowed(t *testing.T) {
	is := oidctest.New(t)
	var hits atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(elsewhere.Close)
	mux := http.NewServeMux()
	var proxyURL string
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"` + proxyURL + `","authorization_endpoint":"` + is.URL + `/authorize","token_endpoint":"` + proxyURL +
			`/token","jwks_uri":"` + is.URL + `/keys","id_token_signing_alg_values_supported":["RS256"]}`))
	})
	mux.Handle("POST /token", http.RedirectHandler(elsewhere.URL+"/token", http.StatusTemporaryRedirect))
	proxy := httptest.NewServer(mux)
	t.Cleanup(proxy.Close)
	proxyURL = proxy.URL
	p := newProvider(t, is, func(c *oidc.Config) { c.Authority = proxy.URL })
	resp, err := login(t, p, is, newFlow(), "")
	if err != nil {
		t.Fatalf("Exchange error = %v, want data", err)
	}
	if resp.Error == nil || resp.Error.Kind != pluginsdk.ExchangeFailed {
		t.Errorf("Exchange = %+v / %+v, want ExchangeFailed", resp.Identity, resp.Error)
	}
	if hits.Load() != 0 {
		t.Errorf("the redirect target was called %d times", hits.Load())
	}
}

func TestConfigure(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, nil)
	ctx := context.Background()
	if err := p.Configure(ctx, pluginsdk.Settings{"displayname": "Renamed", "Icon": "mdi:lock", "brand": "lock", "UsePkce": "false"}); err != nil {
		t.Fatal(err)
	}
	d, _ := p.Describe(ctx)
	if d.DisplayName != "Renamed" || d.Icon != "mdi:lock" || d.Brand != "lock" || d.Code != "corp" {
		t.Errorf("Describe after Configure = %+v", d)
	}
	for _, bad := range []pluginsdk.Settings{{"Code": "other"}, {"UsePkce": "maybe"}, {"Authority": "not a url"}, {"ClientId": ""}} {
		if err := p.Configure(ctx, bad); err == nil {
			t.Errorf("Configure(%v) succeeded, want an error", bad)
		}
	}
	resp, err := login(t, p, is, newFlow(), "")
	if err != nil || resp.Identity == nil {
		t.Fatalf("login after Configure = %+v, %v", resp.Error, err)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []oidc.Config{
		{Authority: "https://idp.example", ClientID: "c"},
		{Code: "x", Authority: "idp.example", ClientID: "c"},
		{Code: "x", Authority: "https://idp.example"},
	}
	for _, cfg := range tests {
		if _, err := oidc.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
}

func TestIssuer(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, nil)
	var r interface{ Issuer() string } = p
	if r.Issuer() != is.URL {
		t.Errorf("Issuer = %q, want %q", r.Issuer(), is.URL)
	}
	if err := p.Configure(context.Background(), pluginsdk.Settings{"Authority": "https://other.example"}); err != nil {
		t.Fatal(err)
	}
	if r.Issuer() != "https://other.example" {
		t.Errorf("Issuer after Configure = %q", r.Issuer())
	}
}

// UserInfo is called only when the ID token lacks name or email, only
// after the ID token passed, and its sub must equal the ID token's.
func TestUserInfo(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, func(c *oidc.Config) { c.AccountClaim = "preferred_username" })
	noProfile := func(c map[string]any) { delete(c, "name"); delete(c, "email"); delete(c, "preferred_username") }
	var elsewhereHits atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhereHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"sub":"sub-alice","name":"Elsewhere"}`))
	}))
	t.Cleanup(elsewhere.Close)
	tests := []struct {
		name     string
		mutate   func(map[string]any)
		userinfo func(map[string]any)
		handler  http.Handler
		calls    int64
		want     *pluginsdk.Identity
		message  string
	}{
		{name: "profile in the ID token: no call", calls: 0,
			want: &pluginsdk.Identity{Subject: "sub-alice", AccountHint: "alice", DisplayName: "Alice", Email: "alice@example.test"}},
		{name: "missing email only", mutate: func(c map[string]any) { delete(c, "email") }, calls: 1,
			want: &pluginsdk.Identity{Subject: "sub-alice", AccountHint: "alice", DisplayName: "Alice", Email: "alice@example.test"}},
		{name: "profile completed", mutate: noProfile, calls: 1,
			want: &pluginsdk.Identity{Subject: "sub-alice", AccountHint: "alice", DisplayName: "Alice", Email: "alice@example.test"}},
		{name: "ID token claims win", mutate: func(c map[string]any) { delete(c, "email") },
			userinfo: func(c map[string]any) { c["name"] = "Mallory"; c["preferred_username"] = "mallory" }, calls: 1,
			want: &pluginsdk.Identity{Subject: "sub-alice", AccountHint: "alice", DisplayName: "Alice", Email: "alice@example.test"}},
		{name: "unverified userinfo email dropped", mutate: noProfile, userinfo: func(c map[string]any) { c["email_verified"] = false }, calls: 1,
			want: &pluginsdk.Identity{Subject: "sub-alice", AccountHint: "alice", DisplayName: "Alice"}},
		{name: "sub differs", mutate: noProfile, userinfo: func(c map[string]any) { c["sub"] = "sub-bob" }, calls: 1, message: "sub does not match"},
		{name: "sub missing", mutate: noProfile, userinfo: func(c map[string]any) { delete(c, "sub") }, calls: 1, message: "sub does not match"},
		{name: "error status", mutate: noProfile, handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, strings.Repeat("x", 5000), http.StatusUnauthorized)
		}), calls: 1, message: "request failed"},
		{name: "redirect not followed", mutate: noProfile, handler: http.RedirectHandler(elsewhere.URL, http.StatusFound), calls: 1, message: "request failed"},
		{name: "oversized", mutate: noProfile, handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"sub":"sub-alice","name":"` + strings.Repeat("x", oidc.MaxResponseBytes) + `"}`))
		}), calls: 1, message: "size limit"},
		{name: "bad ID token: never called", mutate: func(c map[string]any) { noProfile(c); c["nonce"] = "forged" }, calls: 0, message: "nonce"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is.Mutate(tc.mutate)
			is.MutateUserInfo(tc.userinfo)
			is.SetUserInfoHandler(tc.handler)
			t.Cleanup(func() { is.Mutate(nil); is.MutateUserInfo(nil); is.SetUserInfoHandler(nil) })
			before := is.UserInfoCalls()
			resp, err := login(t, p, is, newFlow(), "")
			if err != nil {
				t.Fatalf("Exchange error = %v, want data", err)
			}
			if got := is.UserInfoCalls() - before; got != tc.calls {
				t.Errorf("userinfo called %d times, want %d", got, tc.calls)
			}
			if tc.want != nil {
				if resp.Identity == nil || *resp.Identity != *tc.want {
					t.Errorf("Exchange = %+v / %v, want %+v", resp.Identity, resp.Error, *tc.want)
				}
				return
			}
			if resp.Error == nil || resp.Error.Kind != pluginsdk.ExchangeFailed || !strings.Contains(resp.Error.Message, tc.message) {
				t.Errorf("Exchange = %+v / %v, want ExchangeFailed mentioning %q", resp.Identity, resp.Error, tc.message)
			}
			if len(resp.Error.Message) > 600 {
				t.Errorf("error message is %d bytes long", len(resp.Error.Message))
			}
		})
	}
	if elsewhereHits.Load() != 0 {
		t.Errorf("the userinfo redirect was followed %d times", elsewhereHits.Load())
	}
}

// Key rotation: a token signed with a new key under an unknown kid is
// verified after exactly one more key-set fetch; a kid that is still
// unknown after the fetch is refused.
func TestKeyRotation(t *testing.T) {
	is := oidctest.New(t)
	p := newProvider(t, is, nil)
	if resp, err := login(t, p, is, newFlow(), ""); err != nil || resp.Identity == nil {
		t.Fatalf("first login = %+v, %v", resp.Error, err)
	}
	fetches := is.KeysCalls()
	is.Rotate(t)
	is.RetireOldKeys()
	if resp, err := login(t, p, is, newFlow(), ""); err != nil || resp.Identity == nil {
		t.Fatalf("login after rotation = %+v, %v", resp.Error, err)
	}
	if got := is.KeysCalls() - fetches; got != 1 {
		t.Errorf("%d key-set fetches after the rotation, want 1", got)
	}
	if resp, err := login(t, p, is, newFlow(), ""); err != nil || resp.Identity == nil || is.KeysCalls()-fetches != 1 {
		t.Fatalf("second login after rotation = %+v, %v (fetches %d)", resp.Error, err, is.KeysCalls()-fetches)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.SignWithKeyID(other, "never-published")
	t.Cleanup(func() { is.SignWithKeyID(nil, "") })
	resp, err := login(t, p, is, newFlow(), "")
	if err != nil || resp.Error == nil || resp.Error.Kind != pluginsdk.ExchangeFailed || !strings.Contains(resp.Error.Message, "signature") {
		t.Errorf("unknown kid = %+v / %+v, %v; want ExchangeFailed (signature)", resp.Identity, resp.Error, err)
	}
	// The retired key no longer verifies.
	is.SignWithKeyID(is.Key, is.KeyID)
	resp, _ = login(t, p, is, newFlow(), "")
	if resp.Error == nil {
		t.Error("a token signed with the retired key was accepted")
	}
}

// The account hint comes from the claim the operator names (AccountClaim),
// never from preferred_username by default (OIDC Core §5.7: neither unique
// nor stable); email and phone_number count only when verified.
func TestAccountClaim(t *testing.T) {
	is := oidctest.New(t)
	tests := []struct {
		name     string
		claim    string
		mutate   func(map[string]any)
		userinfo func(map[string]any)
		want     string
	}{
		{name: "no account claim: no hint", claim: "", want: ""},
		{name: "preferred_username named explicitly", claim: "preferred_username", want: "alice"},
		{name: "email without email_verified", claim: "email", want: ""},
		{name: "email with email_verified false", claim: "email", mutate: func(c map[string]any) { c["email_verified"] = false }, want: ""},
		{name: "email with email_verified \"false\"", claim: "email", mutate: func(c map[string]any) { c["email_verified"] = "false" }, want: ""},
		{name: "email with email_verified 1", claim: "email", mutate: func(c map[string]any) { c["email_verified"] = 1 }, want: ""},
		{name: "email with email_verified true", claim: "email", mutate: func(c map[string]any) { c["email_verified"] = true }, want: "alice@example.test"},
		{name: "email with email_verified \"true\"", claim: "email", mutate: func(c map[string]any) { c["email_verified"] = "true" }, want: "alice@example.test"},
		{name: "phone_number unverified", claim: "phone_number", mutate: func(c map[string]any) { c["phone_number"] = "+15550100" }, want: ""},
		{name: "phone_number verified", claim: "phone_number", mutate: func(c map[string]any) {
			c["phone_number"] = "+15550100"
			c["phone_number_verified"] = true
		}, want: "+15550100"},
		{name: "custom string claim", claim: "employee_id", mutate: func(c map[string]any) { c["employee_id"] = "E-1001" }, want: "E-1001"},
		{name: "custom numeric claim", claim: "employee_id", mutate: func(c map[string]any) { c["employee_id"] = 1001 }, want: "1001"},
		{name: "custom claim of another type", claim: "employee_id", mutate: func(c map[string]any) { c["employee_id"] = []string{"a"} }, want: ""},
		{name: "custom claim absent", claim: "employee_id", want: ""},
		{name: "custom claim from userinfo when the ID token lacks it", claim: "employee_id",
			userinfo: func(c map[string]any) { c["employee_id"] = "E-2002" }, want: "E-2002"},
		{name: "ID token wins over userinfo", claim: "employee_id", mutate: func(c map[string]any) { c["employee_id"] = "E-1001"; delete(c, "email") },
			userinfo: func(c map[string]any) { c["employee_id"] = "E-6666" }, want: "E-1001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, is, func(c *oidc.Config) { c.AccountClaim = tc.claim })
			is.Mutate(tc.mutate)
			is.MutateUserInfo(tc.userinfo)
			t.Cleanup(func() { is.Mutate(nil); is.MutateUserInfo(nil) })
			resp, err := login(t, p, is, newFlow(), "")
			if err != nil || resp.Identity == nil {
				t.Fatalf("Exchange = %+v, %v", resp.Error, err)
			}
			if resp.Identity.AccountHint != tc.want {
				t.Errorf("account hint = %q, want %q", resp.Identity.AccountHint, tc.want)
			}
		})
	}
}
