// Package providertest is the conformance kit for identity providers: any
// pluginsdk.Provider (a vendor plugin's provider, the kernel's built-in
// OIDC provider, a plugin seen through the host's gRPC client) must pass
// Run. It is black-box: it only calls the four methods of the contract.
//
//	func TestConformance(t *testing.T) {
//		newProvider := func(t *testing.T) pluginsdk.Provider { return mine.New(hclog.NewNullLogger()) }
//		opts := providertest.Options{
//			Code:     "code_host",
//			Settings: pluginsdk.Settings{"ClientId": "id", "ClientSecret": "s3cret"},
//			Required: []string{"ClientId", "ClientSecret"},
//		}
//		providertest.Run(t, newProvider, opts)
//		t.Run("grpc", func(t *testing.T) {
//			providertest.Run(t, func(t *testing.T) pluginsdk.Provider {
//				return providertest.InProcess(t, newProvider(t))
//			}, opts)
//		})
//	}
//
// Run it with -race: one of the checks calls the provider from many
// goroutines at once.
package providertest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/adminkernel/kernel/pluginsdk"
)

// Limits checked by Run.
const (
	// MaxProviderData is the largest AuthorizeResponse.ProviderData
	// accepted (the kernel stores it with the one-time state).
	MaxProviderData = 4096
	// MaxSubjectLen is the longest Identity.Subject accepted.
	MaxSubjectLen = 256
	// CallTimeout bounds every call Run makes, so a hanging provider fails
	// the test instead of stalling it.
	CallTimeout = 10 * time.Second
	// CancelGrace is how quickly a call with an ended context must return.
	CancelGrace = 5 * time.Second
)

// Options adapt Run to one provider. The zero value checks a provider as
// newProvider returns it.
type Options struct {
	// Code is the code the provider must report ("" accepts any valid
	// code).
	Code string
	// Settings is a complete, working settings section. When set, every
	// provider Run gets is configured with it first (and Configure must
	// accept it, also a second time). When nil, providers are used as
	// newProvider returns them and the Configure checks are skipped.
	Settings pluginsdk.Settings
	// Required lists keys of Settings the provider cannot work without.
	// For each, a fresh provider is configured with that key blank, and
	// the failure must show consistently: Configure returns an error, or
	// else AuthorizeURL returns an error and Exchange does not succeed.
	Required []string
	// Secrets lists keys of Settings whose values must never appear in an
	// authorization URL, an error or a ProviderError message. Default:
	// every key of Settings whose name contains "secret", "password",
	// "token" or "privatekey" (case-insensitive).
	Secrets []string
	// RedirectURI is the callback URL sent in requests (default
	// https://kernel.example.test/api/v1/auth/external/<code>/callback).
	RedirectURI string
	// Login, when set, completes a login at the vendor (a test fake) for
	// an authorization URL and returns the callback's query. Run then
	// checks the whole round trip: Exchange yields an identity with a
	// valid subject, and an Exchange whose context has ended does not.
	Login func(t *testing.T, authorizeURL string) map[string]string
	// BadCode, when set, is an authorization code the vendor (a test fake)
	// refuses: Exchange with it must return a ProviderError. Leave it empty
	// when the provider would reach a real vendor.
	BadCode string
	// WantSubject, when set with Login, is the subject the round trip must
	// yield: the vendor's stable user id for the user Login signs in (not a
	// changeable field such as the username or the email address).
	WantSubject string
	// Concurrency is the number of simultaneous callers of the
	// concurrency check (default 16).
	Concurrency int
}

var codePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)

// Run checks that providers built by newProvider honour the
// pluginsdk.Provider contract. newProvider is called once per subtest (with
// the subtest's t) and must return a fresh provider.
func Run(t *testing.T, newProvider func(t *testing.T) pluginsdk.Provider, opts Options) {
	t.Helper()
	k := newKit(func(t TB) pluginsdk.Provider { return newProvider(t.(*testing.T)) }, opts)
	if opts.Login != nil {
		k.login = func(t TB, authorizeURL string) map[string]string { return opts.Login(t.(*testing.T), authorizeURL) }
	}
	k.run(t)
}

// newKit prepares the checks for opts.
func newKit(newProvider func(t TB) pluginsdk.Provider, opts Options) *kit {
	k := &kit{newProvider: newProvider, opts: opts}
	if k.opts.Concurrency <= 0 {
		k.opts.Concurrency = 16
	}
	if k.opts.Secrets == nil {
		for key := range opts.Settings {
			l := strings.ToLower(key)
			if strings.Contains(l, "secret") || strings.Contains(l, "password") || strings.Contains(l, "token") || strings.Contains(l, "privatekey") {
				k.opts.Secrets = append(k.opts.Secrets, key)
			}
		}
	}
	return k
}

// run runs every check as a subtest of t: the one list of checks, for go
// test (Run) and for Check alike.
func (k *kit) run(t TB) {
	subtest(t, "Describe", k.describe)
	if k.opts.Settings != nil {
		subtest(t, "Configure", k.configure)
	}
	subtest(t, "AuthorizeURL", k.authorizeURL)
	subtest(t, "ExchangeVendorError", k.exchangeVendorError)
	subtest(t, "ExchangeGarbage", k.exchangeGarbage)
	if k.opts.BadCode != "" {
		subtest(t, "ExchangeBadCode", k.exchangeBadCode)
	}
	if k.login != nil {
		subtest(t, "RoundTrip", k.roundTrip)
	}
	subtest(t, "Concurrency", k.concurrency)
	subtest(t, "Cancellation", k.cancellation)
}

type kit struct {
	newProvider func(t TB) pluginsdk.Provider
	// login is Options.Login (nil without one).
	login func(t TB, authorizeURL string) map[string]string
	opts  Options
}

func callCtx(t TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// fresh returns a new provider, configured with Settings when set.
func (k *kit) fresh(t TB) pluginsdk.Provider {
	t.Helper()
	p := k.newProvider(t)
	if p == nil {
		t.Fatal("newProvider returned nil")
	}
	if k.opts.Settings != nil {
		if err := p.Configure(callCtx(t), maps.Clone(k.opts.Settings)); err != nil {
			t.Fatalf("Configure(Settings) = %v, want nil", err)
		}
	}
	return p
}

func (k *kit) code(t TB, p pluginsdk.Provider) string {
	t.Helper()
	d, err := p.Describe(callCtx(t))
	if err != nil {
		t.Fatalf("Describe() error = %v", err)
	}
	return d.Code
}

func (k *kit) redirectURI(code string) string {
	if k.opts.RedirectURI != "" {
		return k.opts.RedirectURI
	}
	return "https://kernel.example.test/api/v1/auth/external/" + code + "/callback"
}

// login is one authorization as the kernel prepares it.
type login struct {
	req      pluginsdk.AuthorizeRequest
	verifier string
}

func newLogin(redirectURI, purpose, userAgent string) login {
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	return login{
		req: pluginsdk.AuthorizeRequest{
			State:               "pt" + strings.ToLower(rand.Text()),
			RedirectURI:         redirectURI,
			UserAgent:           userAgent,
			Nonce:               rand.Text(),
			CodeChallenge:       base64.RawURLEncoding.EncodeToString(sum[:]),
			CodeChallengeMethod: pluginsdk.CodeChallengeS256,
			Purpose:             purpose,
		},
		verifier: verifier,
	}
}

func (l login) exchange(resp pluginsdk.AuthorizeResponse, query map[string]string) pluginsdk.ExchangeRequest {
	return pluginsdk.ExchangeRequest{
		Query:        query,
		RedirectURI:  l.req.RedirectURI,
		ProviderData: resp.ProviderData,
		Nonce:        l.req.Nonce,
		CodeVerifier: l.verifier,
	}
}

const (
	desktopUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
	mobileUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
)

// authorize runs AuthorizeURL and checks the answer.
func (k *kit) authorize(t TB, ctx context.Context, p pluginsdk.Provider, l login) pluginsdk.AuthorizeResponse {
	t.Helper()
	resp, err := p.AuthorizeURL(ctx, l.req)
	if err != nil {
		t.Fatalf("AuthorizeURL(purpose %q) error = %v", l.req.Purpose, err)
	}
	if msg := checkAuthorizeURL(resp, l.req); msg != "" {
		t.Errorf("AuthorizeURL(purpose %q) = %q: %s", l.req.Purpose, resp.URL, msg)
	}
	k.noSecrets(t, "AuthorizeURL URL", resp.URL)
	return resp
}

// checkAuthorizeURL returns what is wrong with an authorization URL, or "".
func checkAuthorizeURL(resp pluginsdk.AuthorizeResponse, req pluginsdk.AuthorizeRequest) string {
	u, err := url.Parse(resp.URL)
	if err != nil {
		return fmt.Sprintf("not a URL: %v", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "not an absolute http or https URL"
	}
	if len(resp.ProviderData) > MaxProviderData {
		return fmt.Sprintf("provider data is %d bytes, more than %d", len(resp.ProviderData), MaxProviderData)
	}
	values := u.Query()
	// Some vendors carry the parameters after the fragment.
	if fq, err := url.ParseQuery(u.Fragment); err == nil {
		for key, vs := range fq {
			values[key] = append(values[key], vs...)
		}
	}
	var hasState, hasRedirect bool
	for _, vs := range values {
		for _, v := range vs {
			hasState = hasState || v == req.State
			hasRedirect = hasRedirect || v == req.RedirectURI
		}
	}
	switch {
	case !hasState:
		return fmt.Sprintf("no parameter carries the state %q unchanged", req.State)
	case !hasRedirect:
		return fmt.Sprintf("no parameter carries the redirect URI %q", req.RedirectURI)
	}
	return ""
}

// noSecrets fails when s contains the value of a secret setting.
func (k *kit) noSecrets(t TB, what, s string) {
	t.Helper()
	for _, key := range k.opts.Secrets {
		v := k.opts.Settings[key]
		if len(v) >= 4 && strings.Contains(s, v) {
			t.Errorf("%s contains the value of the secret setting %s", what, key)
		}
	}
}

func (k *kit) errText(t TB, what string, err error) {
	t.Helper()
	if err != nil {
		k.noSecrets(t, what, err.Error())
	}
}

func (k *kit) describe(t TB) {
	p := k.newProvider(t)
	if p == nil {
		t.Fatal("newProvider returned nil")
	}
	ctx := callCtx(t)
	d, err := p.Describe(ctx)
	if err != nil {
		t.Fatalf("Describe() before Configure: error = %v", err)
	}
	if !codePattern.MatchString(d.Code) {
		t.Errorf("Describe().Code = %q: want letters, digits and underscores, 1 to 32 characters", d.Code)
	}
	if k.opts.Code != "" && d.Code != k.opts.Code {
		t.Errorf("Describe().Code = %q, want %q", d.Code, k.opts.Code)
	}
	if d.ProtocolVersion != pluginsdk.ProtocolVersion {
		t.Errorf("Describe().ProtocolVersion = %d, want %d", d.ProtocolVersion, pluginsdk.ProtocolVersion)
	}
	if strings.TrimSpace(d.DisplayName) == "" {
		t.Error("Describe().DisplayName is empty")
	}
	// Optional, but when given they must be usable: the kernel drops an
	// invalid one (with a warning) and the login page shows no icon.
	if d.Icon != "" && !pluginsdk.ValidIcon(d.Icon) {
		t.Errorf("Describe().Icon = %q: want an Iconify name prefix:name (lowercase letters, digits and hyphens, at most %d characters) or nothing; the kernel drops it", d.Icon, pluginsdk.MaxIconLen)
	}
	if d.Brand != "" && !pluginsdk.ValidBrand(d.Brand) {
		t.Errorf("Describe().Brand = %q: want a brand key (lowercase letters, digits, '_' and '-', at most %d characters) or nothing; the kernel drops it", d.Brand, pluginsdk.MaxBrandLen)
	}
	again, err := p.Describe(ctx)
	if err != nil || again != d {
		t.Errorf("second Describe() = %+v, %v; want %+v, nil", again, err, d)
	}
	if k.opts.Settings != nil {
		if err := p.Configure(ctx, maps.Clone(k.opts.Settings)); err != nil {
			t.Fatalf("Configure(Settings) = %v", err)
		}
		after, err := p.Describe(ctx)
		if err != nil || after.Code != d.Code {
			t.Errorf("Describe() after Configure = %+v, %v; want code %q", after, err, d.Code)
		}
	}
}

func (k *kit) configure(t TB) {
	subtest(t, "Accepted", func(t TB) {
		p := k.fresh(t)
		if err := p.Configure(callCtx(t), maps.Clone(k.opts.Settings)); err != nil {
			t.Errorf("Configure(Settings) a second time = %v, want nil", err)
		}
	})
	for _, key := range k.opts.Required {
		subtest(t, "Missing"+key, func(t TB) {
			if _, ok := k.opts.Settings[key]; !ok {
				t.Fatalf("Options.Required names %q, which Options.Settings lacks", key)
			}
			p := k.newProvider(t)
			ctx := callCtx(t)
			s := maps.Clone(k.opts.Settings)
			s[key] = ""
			err := p.Configure(ctx, s)
			if err != nil {
				k.errText(t, "Configure error", err)
				return
			}
			// Accepted: the provider must then fail at use, consistently.
			code := k.code(t, p)
			l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
			resp, aerr := p.AuthorizeURL(ctx, l.req)
			if aerr == nil {
				t.Errorf("Configure accepted settings with %s blank and AuthorizeURL still answered %q; want an error from Configure (or at least from AuthorizeURL)", key, resp.URL)
			}
			k.errText(t, "AuthorizeURL error", aerr)
			x, xerr := p.Exchange(ctx, l.exchange(resp, map[string]string{"code": "providertest-code", "state": l.req.State}))
			if xerr == nil && x.Error == nil {
				t.Errorf("Configure accepted settings with %s blank and Exchange answered %+v; want a ProviderError or an error", key, x)
			}
		})
	}
}

func (k *kit) authorizeURL(t TB) {
	p := k.fresh(t)
	ctx := callCtx(t)
	code := k.code(t, p)
	seen := map[string]bool{}
	for _, purpose := range []string{pluginsdk.PurposeLogin, pluginsdk.PurposeBind} {
		for _, ua := range []string{desktopUA, mobileUA, ""} {
			l := newLogin(k.redirectURI(code), purpose, ua)
			resp := k.authorize(t, ctx, p, l)
			if seen[resp.URL] {
				t.Errorf("AuthorizeURL answered the same URL for two different states: %q", resp.URL)
			}
			seen[resp.URL] = true
		}
	}
}

// checkFailure checks that an Exchange answered a ProviderError as data.
func (k *kit) checkFailure(t TB, what string, resp pluginsdk.ExchangeResponse, err error) {
	t.Helper()
	switch {
	case err != nil:
		t.Errorf("Exchange(%s) error = %v; want a ProviderError in the response (errors mean transport trouble)", what, err)
	case resp.Identity != nil:
		t.Errorf("Exchange(%s) = identity %+v; want a ProviderError", what, *resp.Identity)
	case resp.Error == nil:
		t.Errorf("Exchange(%s) = empty response; want a ProviderError", what)
	default:
		switch resp.Error.Kind {
		case pluginsdk.ExchangeFailed, pluginsdk.InvalidCallback, pluginsdk.Misconfigured, pluginsdk.Denied:
		default:
			t.Errorf("Exchange(%s) ProviderError.Kind = %q, not one of the pluginsdk kinds", what, resp.Error.Kind)
		}
		k.noSecrets(t, "ProviderError message", resp.Error.Message)
	}
}

// exchange calls Exchange, turning a panic into a test failure.
func exchange(t TB, ctx context.Context, p pluginsdk.Provider, req pluginsdk.ExchangeRequest) (resp pluginsdk.ExchangeResponse, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Exchange(%v) panicked: %v", req.Query, r)
		}
	}()
	return p.Exchange(ctx, req)
}

func (k *kit) exchangeVendorError(t TB) {
	p := k.fresh(t)
	ctx := callCtx(t)
	code := k.code(t, p)
	for _, e := range []string{"access_denied", "server_error", "invalid_request"} {
		l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
		auth := k.authorize(t, ctx, p, l)
		q := map[string]string{"error": e, "error_description": "providertest: the vendor said no", "state": l.req.State}
		resp, err := exchange(t, ctx, p, l.exchange(auth, q))
		k.checkFailure(t, "error="+e, resp, err)
	}
}

func (k *kit) exchangeGarbage(t TB) {
	p := k.fresh(t)
	ctx := callCtx(t)
	code := k.code(t, p)
	l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
	auth := k.authorize(t, ctx, p, l)
	cases := []struct {
		name string
		req  pluginsdk.ExchangeRequest
	}{
		{"empty query", l.exchange(auth, map[string]string{})},
		{"nil query", l.exchange(auth, nil)},
		{"state only", l.exchange(auth, map[string]string{"state": l.req.State})},
		{"blank code", l.exchange(auth, map[string]string{"code": "", "state": l.req.State})},
		{"unrelated parameters", l.exchange(auth, map[string]string{"foo": "bar", "\x00": "\xff\xfe"})},
		{"blank error", l.exchange(auth, map[string]string{"error": "", "state": l.req.State})},
		{"no code, no provider data", pluginsdk.ExchangeRequest{Query: map[string]string{"state": "x"}}},
		{"zero request", pluginsdk.ExchangeRequest{}},
	}
	for _, c := range cases {
		resp, err := exchange(t, ctx, p, c.req)
		k.checkFailure(t, c.name, resp, err)
	}
}

func (k *kit) exchangeBadCode(t TB) {
	p := k.fresh(t)
	ctx := callCtx(t)
	l := newLogin(k.redirectURI(k.code(t, p)), pluginsdk.PurposeLogin, desktopUA)
	auth := k.authorize(t, ctx, p, l)
	resp, err := exchange(t, ctx, p, l.exchange(auth, map[string]string{"code": k.opts.BadCode, "state": l.req.State}))
	k.checkFailure(t, "refused code", resp, err)
}

// checkIdentity checks a successful Exchange.
func checkIdentity(t TB, resp pluginsdk.ExchangeResponse, err error) {
	t.Helper()
	switch {
	case err != nil:
		t.Fatalf("Exchange(login callback) error = %v", err)
	case resp.Error != nil:
		t.Fatalf("Exchange(login callback) = ProviderError %v; want an identity", resp.Error)
	case resp.Identity == nil:
		t.Fatal("Exchange(login callback) = empty response; want an identity")
	}
	s := resp.Identity.Subject
	if s == "" || len(s) > MaxSubjectLen || strings.ContainsFunc(s, unicode.IsControl) {
		t.Errorf("Identity.Subject = %q: want 1 to %d characters without control characters", s, MaxSubjectLen)
	}
}

func (k *kit) roundTrip(t TB) {
	p := k.fresh(t)
	ctx := callCtx(t)
	code := k.code(t, p)
	for _, purpose := range []string{pluginsdk.PurposeLogin, pluginsdk.PurposeBind} {
		l := newLogin(k.redirectURI(code), purpose, desktopUA)
		auth := k.authorize(t, ctx, p, l)
		q := k.login(t, auth.URL)
		resp, err := exchange(t, ctx, p, l.exchange(auth, q))
		checkIdentity(t, resp, err)
		k.checkSubject(t, resp)
	}
}

// checkSubject compares a round trip's subject with Options.WantSubject.
func (k *kit) checkSubject(t TB, resp pluginsdk.ExchangeResponse) {
	t.Helper()
	if k.opts.WantSubject != "" && resp.Identity != nil && resp.Identity.Subject != k.opts.WantSubject {
		t.Errorf("Identity.Subject = %q, want %q: the subject must be the vendor's stable user id, not a changeable field such as the username", resp.Identity.Subject, k.opts.WantSubject)
	}
}

// concurrency runs n goroutines at once, each calling every method:
// Configure (the settings again, as the kernel does after a restart),
// Describe, AuthorizeURL, an Exchange of a vendor error and, with Login, a
// whole round trip whose callback was prepared beforehand (Login may fail
// the test, which only the test's goroutine may do). Under -race a provider
// whose Configure writes what the other methods read without a lock fails
// here.
func (k *kit) concurrency(t TB) {
	p := k.fresh(t)
	code := k.code(t, p)
	n := k.opts.Concurrency
	type prepared struct {
		l     login
		auth  pluginsdk.AuthorizeResponse
		query map[string]string
	}
	var trips []prepared
	if k.login != nil {
		for range n {
			l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
			auth := k.authorize(t, callCtx(t), p, l)
			trips = append(trips, prepared{l, auth, k.login(t, auth.URL)})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 6*n)
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
			defer cancel()
			if k.opts.Settings != nil {
				if err := p.Configure(ctx, maps.Clone(k.opts.Settings)); err != nil {
					errs <- fmt.Sprintf("Configure(Settings) = %v, want nil", err)
				}
			}
			if d, err := p.Describe(ctx); err != nil || d.Code != code {
				errs <- fmt.Sprintf("Describe() = %q, %v; want %q, nil", d.Code, err, code)
			}
			l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
			auth, err := p.AuthorizeURL(ctx, l.req)
			if err != nil {
				errs <- fmt.Sprintf("AuthorizeURL() error = %v", err)
				return
			}
			if msg := checkAuthorizeURL(auth, l.req); msg != "" {
				errs <- fmt.Sprintf("AuthorizeURL() = %q: %s", auth.URL, msg)
			}
			x, err := p.Exchange(ctx, l.exchange(auth, map[string]string{"error": "access_denied", "state": l.req.State}))
			if err != nil || x.Error == nil {
				errs <- fmt.Sprintf("Exchange(error=access_denied) = %+v, %v; want a ProviderError", x, err)
			}
			if i < len(trips) {
				tr := trips[i]
				x, err := p.Exchange(ctx, tr.l.exchange(tr.auth, tr.query))
				switch {
				case err != nil || x.Error != nil || x.Identity == nil:
					errs <- fmt.Sprintf("Exchange(login callback) = %+v, %v; want an identity", x, err)
				case k.opts.WantSubject != "" && x.Identity.Subject != k.opts.WantSubject:
					errs <- fmt.Sprintf("Exchange(login callback): Identity.Subject = %q, want %q", x.Identity.Subject, k.opts.WantSubject)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error("concurrent call: " + e)
	}
}

// bounded runs f and fails the test when it does not return within
// CancelGrace.
func bounded(t TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(CancelGrace):
		t.Fatalf("%s with an ended context did not return within %v", what, CancelGrace)
	}
}

func (k *kit) cancellation(t TB) {
	p := k.fresh(t)
	code := k.code(t, p)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()

	for name, ctx := range map[string]context.Context{"canceled": canceled, "expired": expired} {
		subtest(t, name, func(t TB) {
			l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
			var auth pluginsdk.AuthorizeResponse
			bounded(t, "AuthorizeURL", func() { auth, _ = p.AuthorizeURL(ctx, l.req) })
			var resp pluginsdk.ExchangeResponse
			bounded(t, "Exchange", func() {
				resp, _ = p.Exchange(ctx, l.exchange(auth, map[string]string{"code": "providertest-code", "state": l.req.State}))
			})
			if resp.Identity != nil {
				t.Errorf("Exchange with an ended context = identity %+v; want an error or a ProviderError", *resp.Identity)
			}
		})
	}
	if k.login == nil {
		return
	}
	subtest(t, "RealCode", func(t TB) {
		// A code the vendor would accept: with an ended context the
		// exchange must not complete.
		l := newLogin(k.redirectURI(code), pluginsdk.PurposeLogin, desktopUA)
		auth := k.authorize(t, callCtx(t), p, l)
		q := k.login(t, auth.URL)
		var resp pluginsdk.ExchangeResponse
		var err error
		bounded(t, "Exchange", func() { resp, err = p.Exchange(canceled, l.exchange(auth, q)) })
		if err == nil && resp.Error == nil {
			t.Errorf("Exchange with a canceled context = %+v; want an error", resp)
		}
	})
}
