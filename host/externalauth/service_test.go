package externalauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/pluginsdk"
)

// vendor is a provider fake that records what the kernel sends.
type vendor struct {
	mu          sync.Mutex
	authorize   pluginsdk.AuthorizeRequest
	exchange    pluginsdk.ExchangeRequest
	authURL     string
	authErr     error
	result      pluginsdk.ExchangeResponse
	exchangeErr error
}

func (v *vendor) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{Code: "acme", DisplayName: "Acme", ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}
func (v *vendor) Configure(context.Context, pluginsdk.Settings) error { return nil }
func (v *vendor) AuthorizeURL(_ context.Context, r pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.authorize = r
	if v.authErr != nil {
		return pluginsdk.AuthorizeResponse{}, v.authErr
	}
	u := v.authURL
	if u == "" {
		u = "https://vendor.example/oauth?state=" + r.State
	}
	return pluginsdk.AuthorizeResponse{URL: u, ProviderData: []byte("opaque:" + r.UserAgent)}, nil
}
func (v *vendor) Exchange(_ context.Context, r pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.exchange = r
	return v.result, v.exchangeErr
}

func newService(t *testing.T, k *kerneltest.Kernel, v *vendor, base string) *externalauth.Service {
	t.Helper()
	reg := idp.NewRegistry()
	if err := reg.Register("acme", v, idp.PluginSource("test")); err != nil {
		t.Fatal(err)
	}
	return externalauth.NewService(externalauth.Options{
		Providers: reg, Switches: externalauth.NewSwitches(k.Settings()), Store: k.Cache(), Client: k.Ent(),
		Tokens: k.Auth(), Hasher: password.New(100000), CallbackBaseURL: base,
	})
}

func code(err error) errcode.Code {
	if be, ok := errcode.As(err); ok {
		return be.Code
	}
	return -1
}

func TestServiceWithAPluginProvider(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	v := &vendor{}
	svc := newService(t, k, v, "https://api.example/gw/")

	res, err := svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin, UserAgent: "Mozilla wxwork/4.1"})
	if err != nil {
		t.Fatal(err)
	}
	got := v.authorize
	if got.UserAgent != "Mozilla wxwork/4.1" || got.Purpose != pluginsdk.PurposeLogin || got.CodeChallengeMethod != "S256" {
		t.Errorf("authorize request = %+v", got)
	}
	if got.RedirectURI != "https://api.example/gw/api/v1/auth/external/acme/callback" {
		t.Errorf("redirect URI = %q", got.RedirectURI)
	}
	if !strings.HasPrefix(res.URL, "https://vendor.example/oauth?state=") || len(res.Binder) != 43 {
		t.Errorf("result = %+v", res)
	}

	tests := []struct {
		name    string
		result  pluginsdk.ExchangeResponse
		err     error
		want    errcode.Code
		pending bool
	}{
		{name: "denied", result: pluginsdk.Fail(pluginsdk.Denied, "user said no"), want: errcode.OAuthExchangeFailed},
		{name: "misconfigured", result: pluginsdk.Fail(pluginsdk.Misconfigured, "no secret"), want: errcode.OAuthExchangeFailed},
		{name: "transport", err: errors.New("plugin crashed"), want: errcode.OAuthExchangeFailed},
		{name: "neither identity nor error", want: errcode.OAuthExchangeFailed},
		{name: "empty subject", result: pluginsdk.Succeed(pluginsdk.Identity{}), want: errcode.OAuthExchangeFailed},
		{name: "oversized subject", result: pluginsdk.Succeed(pluginsdk.Identity{Subject: strings.Repeat("s", 257)}), want: errcode.OAuthExchangeFailed},
		{name: "identity", result: pluginsdk.Succeed(pluginsdk.Identity{Subject: "u-1", DisplayName: "Uno"}), pending: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v.result, v.exchangeErr = tc.result, tc.err
			res, err := svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin, UserAgent: "UA-" + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			state := v.authorize.State
			out, err := svc.Callback(ctx, externalauth.CallbackInput{
				Provider: "acme", Query: map[string]string{"code": "c", "state": state, "extra": "x"}, Binder: res.Binder, Client: auth.Client{IP: "203.0.113.9"},
			})
			x := v.exchange
			sum := sha256.Sum256([]byte(x.CodeVerifier))
			if string(x.ProviderData) != "opaque:UA-"+tc.name || x.Query["extra"] != "x" || x.Nonce != v.authorize.Nonce ||
				base64.RawURLEncoding.EncodeToString(sum[:]) != v.authorize.CodeChallenge || x.RedirectURI != v.authorize.RedirectURI {
				t.Errorf("exchange request = %+v does not carry what authorize stored", x)
			}
			if tc.pending {
				if err != nil || out.Pending == nil || out.Pending.DisplayName != "Uno" || out.Pending.Provider != "acme" {
					t.Errorf("Callback = %+v, %v; want a pending link", out, err)
				}
				return
			}
			if code(err) != tc.want {
				t.Errorf("Callback error = %v, want %d", err, tc.want)
			}
		})
	}

	t.Run("authorize failures", func(t *testing.T) {
		v.authErr = errors.New("vendor down")
		_, err := svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin})
		if code(err) != errcode.OAuthExchangeFailed {
			t.Errorf("vendor down: %v, want 40015", err)
		}
		v.authErr, v.authURL = nil, "javascript:alert(1)"
		_, err = svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin})
		if code(err) != errcode.OAuthExchangeFailed {
			t.Errorf("unusable URL: %v, want 40015", err)
		}
		v.authURL = ""
	})
	t.Run("no callback base in production", func(t *testing.T) {
		prod := newService(t, k, v, "")
		if _, err := prod.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin, RequestBase: "http://evil.example"}); err == nil || code(err) != -1 {
			t.Errorf("Authorize without CallbackBaseUrl and without request fallback = %v, want a configuration error", err)
		}
	})
}

// failingStore is the kernel's cache with one-time operations failing on
// demand.
type failingStore struct {
	cache.Store
	mu   sync.Mutex
	fail bool
}

func (s *failingStore) setFail(v bool) { s.mu.Lock(); s.fail = v; s.mu.Unlock() }

func (s *failingStore) broken() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.fail }

func (s *failingStore) Take(ctx context.Context, key string) ([]byte, bool, error) {
	if s.broken() {
		return nil, false, errors.New("cache down")
	}
	return s.Store.Take(ctx, key)
}

func (s *failingStore) PutOnce(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if s.broken() {
		return errors.New("cache down")
	}
	return s.Store.PutOnce(ctx, key, val, ttl)
}

// A cache error never counts as a valid state, ticket or pending link, and
// an authorization whose state cannot be stored does not start.
func TestCacheErrorsFailClosed(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	store := &failingStore{Store: k.Cache()}
	v := &vendor{result: pluginsdk.Succeed(pluginsdk.Identity{Subject: "u-1"})}
	reg := idp.NewRegistry()
	if err := reg.Register("acme", v, idp.PluginSource("test")); err != nil {
		t.Fatal(err)
	}
	svc := externalauth.NewService(externalauth.Options{
		Providers: reg, Switches: externalauth.NewSwitches(k.Settings()), Store: store, Client: k.Ent(),
		Tokens: k.Auth(), Hasher: password.New(100000), CallbackBaseURL: "https://api.example",
	})
	res, err := svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin})
	if err != nil {
		t.Fatal(err)
	}
	state := v.authorize.State
	store.setFail(true)
	if _, err := svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin}); err == nil {
		t.Error("Authorize succeeded without storing its state")
	}
	_, err = svc.Callback(ctx, externalauth.CallbackInput{Provider: "acme", Query: map[string]string{"code": "c", "state": state}, Binder: res.Binder})
	if err == nil || code(err) != -1 {
		t.Errorf("Callback with the cache down = %v, want a system error", err)
	}
	if _, err := svc.Exchange(ctx, strings.Repeat("A", 43), externalauth.Proof{Binder: "b"}); err == nil || code(err) != -1 {
		t.Errorf("Exchange with the cache down = %v, want a system error", err)
	}
	if err := svc.Claim(ctx, 1, strings.Repeat("A", 43), externalauth.Proof{Binder: "b"}); err == nil || code(err) != -1 {
		t.Errorf("Claim with the cache down = %v, want a system error", err)
	}
	// The state survived the outage (Take failed before removing it).
	store.setFail(false)
	out, err := svc.Callback(ctx, externalauth.CallbackInput{Provider: "acme", Query: map[string]string{"code": "c", "state": state}, Binder: res.Binder})
	if err != nil || out.Pending == nil {
		t.Errorf("Callback after the outage = %+v, %v", out, err)
	}
}
