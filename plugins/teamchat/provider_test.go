package teamchat

import (
	"context"
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
	redirectURI = "https://kernel.example.com:8443/api/v1/auth/external/team_chat/callback"
	state       = "St4te0123456789abcdef"
)

// newFake starts a fake DingTalk whose app's registered redirect URL is
// redirectURI.
func newFake(t *testing.T) *vendorfake.DingTalk {
	f := vendorfake.NewDingTalk(t)
	f.Redirect = redirectURI
	return f
}

func settingsFor(f *vendorfake.DingTalk) pluginsdk.Settings {
	return pluginsdk.Settings{
		"ClientId":     f.ClientID,
		"ClientSecret": f.Secret,
		"LoginBase":    f.URL(),
		"ApiBase":      f.URL(),
	}
}

func newProvider(t *testing.T, f *vendorfake.DingTalk, tweak func(p *Provider, s pluginsdk.Settings)) *Provider {
	t.Helper()
	s := settingsFor(f)
	secret := s["ClientSecret"]
	p := New(vendortest.Logger(t, func() []string {
		f.Lock()
		out := []string{secret, f.Secret}
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

func login(t *testing.T, p *Provider) map[string]string {
	t.Helper()
	ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI, UserAgent: "Mozilla/5.0 AliApp(DingTalk/7.8.1)"})
	if err != nil {
		t.Fatalf("AuthorizeURL: %v", err)
	}
	return vendortest.Callback(t, vendortest.Follow(t, ar.URL), redirectURI, state)
}

func exchange(t *testing.T, p *Provider, q map[string]string) pluginsdk.ExchangeResponse {
	t.Helper()
	resp, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI})
	if err != nil {
		t.Fatalf("Exchange: unexpected transport error %v", err)
	}
	if (resp.Identity == nil) == (resp.Error == nil) {
		t.Fatalf("Exchange: exactly one of Identity and Error must be set: %+v", resp)
	}
	return resp
}

func TestDescribe(t *testing.T) {
	d, err := New(nil).Describe(context.Background())
	want := pluginsdk.Descriptor{Code: "team_chat", DisplayName: "Team Chat", Icon: "ant-design:dingtalk-outlined", Brand: "dingtalk", ProtocolVersion: pluginsdk.ProtocolVersion}
	if err != nil || d != want {
		t.Errorf("Describe = %+v, %v; want %+v", d, err, want)
	}
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name string
		s    pluginsdk.Settings
		want string // "" = accepted, else a substring of the Misconfigured message
	}{
		{"minimal", pluginsdk.Settings{"ClientId": "ding1", "ClientSecret": "s3cr3tvalue"}, ""},
		{"AppKey/AppSecret aliases, any case", pluginsdk.Settings{"appkey": "ding1", "APPSECRET": "s3cr3tvalue"}, ""},
		{"all options", pluginsdk.Settings{"clientid": "ding1", "clientsecret": "s3cr3tvalue", "CorpId": "dingcorp", "LoginBase": "https://login.internal/", "ApiBase": "http://api.internal:8080"}, ""},
		{"nothing", pluginsdk.Settings{}, "ClientId, ClientSecret required"},
		{"no secret", pluginsdk.Settings{"ClientId": "ding1"}, "ClientSecret required"},
		{"no client id", pluginsdk.Settings{"ClientSecret": "s3cr3tvalue"}, "ClientId required"},
		{"client id with query chars", pluginsdk.Settings{"ClientId": "a&b", "ClientSecret": "s3cr3tvalue"}, "ClientId"},
		{"bad LoginBase", pluginsdk.Settings{"ClientId": "ding1", "ClientSecret": "s3cr3tvalue", "LoginBase": "login.dingtalk.com"}, "LoginBase"},
		{"bad ApiBase", pluginsdk.Settings{"ClientId": "ding1", "ClientSecret": "s3cr3tvalue", "ApiBase": "https://api.example/#x"}, "ApiBase"},
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

func TestUnconfigured(t *testing.T) {
	p := New(nil)
	if _, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI}); err == nil {
		t.Error("AuthorizeURL succeeded before Configure")
	}
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"authCode": "c0de"}})
	if err != nil || r.Error == nil || r.Error.Kind != pluginsdk.Misconfigured {
		t.Errorf("Exchange before Configure = %+v, %v", r, err)
	}
}

func TestAuthorizeURL(t *testing.T) {
	f := newFake(t)
	enc := url.QueryEscape(redirectURI)
	tests := []struct {
		name  string
		tweak func(*Provider, pluginsdk.Settings)
		want  string
	}{
		{"default hosts", func(_ *Provider, s pluginsdk.Settings) { delete(s, "LoginBase") },
			"https://login.dingtalk.com/oauth2/auth?redirect_uri=" + enc + "&response_type=code&client_id=" + f.ClientID + "&scope=openid&state=" + state + "&prompt=consent"},
		{"corp restriction asks for corpid", func(_ *Provider, s pluginsdk.Settings) {
			s["LoginBase"], s["CorpId"] = "https://login.internal/", "dingcorp1"
		},
			"https://login.internal/oauth2/auth?redirect_uri=" + enc + "&response_type=code&client_id=" + f.ClientID + "&scope=openid%20corpid&state=" + state + "&prompt=consent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, f, tt.tweak)
			for _, ua := range []string{"", "Mozilla/5.0 (Windows NT 10.0) Chrome/129.0", "Mozilla/5.0 AliApp(DingTalk/7.8.1)"} {
				r, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI, UserAgent: ua, Nonce: "n", CodeChallenge: "x", CodeChallengeMethod: "S256"})
				if err != nil {
					t.Fatal(err)
				}
				if r.URL != tt.want {
					t.Errorf("UA %q: URL =\n %s\nwant\n %s", ua, r.URL, tt.want)
				}
				vendortest.NoSecrets(t, "URL", r.URL, f.Secret)
			}
		})
	}
	p := newProvider(t, f, nil)
	for _, r := range []pluginsdk.AuthorizeRequest{
		{State: "", RedirectURI: redirectURI},
		{State: "a+b", RedirectURI: redirectURI},
		{State: state, RedirectURI: "callback"},
	} {
		if _, err := p.AuthorizeURL(context.Background(), r); err == nil {
			t.Errorf("AuthorizeURL(%+v) succeeded", r)
		}
	}
}

func TestExchangeHappyPath(t *testing.T) {
	f := newFake(t)
	p := newProvider(t, f, nil)
	q := login(t, p)
	if q["authCode"] == "" || q["code"] != "" {
		t.Fatalf("the fake's callback = %v, want authCode", q)
	}
	r := exchange(t, p, q)
	want := pluginsdk.Identity{Subject: "uNi0nZhangSan", DisplayName: "张三", Phone: "15000000000"}
	if r.Identity == nil || *r.Identity != want {
		t.Fatalf("Exchange = %+v %+v, want %+v", r.Identity, r.Error, want)
	}
	// Same person again: same subject.
	if r := exchange(t, p, login(t, p)); r.Identity == nil || r.Identity.Subject != want.Subject {
		t.Fatalf("second login = %+v", r)
	}
	// Without the mobile permission: no phone.
	f.NextUser = "lisi"
	if r := exchange(t, p, login(t, p)); r.Identity == nil || *r.Identity != (pluginsdk.Identity{Subject: "uNi0nLiSi", DisplayName: "李四"}) {
		t.Fatalf("lisi = %+v %+v", r.Identity, r.Error)
	}
}

func TestExchangeCodeFallback(t *testing.T) {
	f := newFake(t)
	p := newProvider(t, f, nil)
	r := exchange(t, p, map[string]string{"code": f.IssueCode("zhangsan"), "state": state})
	if r.Identity == nil || r.Identity.Subject != "uNi0nZhangSan" {
		t.Fatalf("Exchange with code = %+v %+v", r.Identity, r.Error)
	}
}

func TestCorpRestriction(t *testing.T) {
	f := newFake(t)
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["CorpId"] = "dingcorp1" })
	if r := exchange(t, p, login(t, p)); r.Identity == nil {
		t.Fatalf("member of the configured corp refused: %+v", r.Error)
	}
	f.PickedCorp = "dingOTHER"
	r := exchange(t, p, login(t, p))
	if r.Error == nil || r.Error.Kind != pluginsdk.Denied {
		t.Fatalf("login into another corp = %+v %+v, want Denied", r.Identity, r.Error)
	}
}

func TestExchangeErrors(t *testing.T) {
	type tc struct {
		name  string
		setup func(f *vendorfake.DingTalk, p *Provider) map[string]string
		kind  pluginsdk.ErrorKind
		want  string
	}
	tests := []tc{
		{"used code", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			q := login(t, p)
			if r := exchange(t, p, q); r.Identity == nil {
				t.Fatalf("first exchange: %+v", r.Error)
			}
			return q
		}, pluginsdk.ExchangeFailed, "invalidParameter.authCode.notFound"},
		{"unknown code", func(*vendorfake.DingTalk, *Provider) map[string]string {
			return map[string]string{"authCode": "forged", "state": state}
		}, pluginsdk.ExchangeFailed, "invalidParameter.authCode.notFound"},
		{"expired code", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			q := login(t, p)
			f.Lock()
			f.Clock = f.Clock.Add(6 * time.Minute)
			f.Unlock()
			return q
		}, pluginsdk.ExchangeFailed, "authCode.notFound"},
		{"user declined", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			f.NextUser = "deny"
			return login(t, p)
		}, pluginsdk.Denied, "access_denied"},
		{"no code", func(*vendorfake.DingTalk, *Provider) map[string]string {
			return map[string]string{"state": state}
		}, pluginsdk.InvalidCallback, "no authCode"},
		{"malformed code", func(*vendorfake.DingTalk, *Provider) map[string]string {
			return map[string]string{"authCode": "a\nb", "state": state}
		}, pluginsdk.InvalidCallback, "malformed"},
		{"wrong secret", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			q := login(t, p)
			f.Secret = "rotated-secret"
			return q
		}, pluginsdk.Misconfigured, "invalidClientIdOrSecret"},
		{"app lacks Contact.User.Read", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			f.NoPermission = true
			return login(t, p)
		}, pluginsdk.Misconfigured, "HTTP 403 Forbidden.AccessDenied.AccessTokenPermissionDenied"},
		{"user token refused", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			f.RevokeTokens = true
			return login(t, p)
		}, pluginsdk.ExchangeFailed, "InvalidAuthentication"},
		{"no unionId", func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			f.DropUnionID = true
			return login(t, p)
		}, pluginsdk.ExchangeFailed, "no unionId"},
	}
	for _, m := range append(vendorfake.Misbehaviours, vendorfake.Misbehaviour{Name: "huge-declared", Want: "exceeds"}) {
		tests = append(tests, tc{"vendor " + m.Name, func(f *vendorfake.DingTalk, p *Provider) map[string]string {
			q := login(t, p)
			f.Misbehave = m.Name
			return q
		}, pluginsdk.ExchangeFailed, m.Want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.EchoSecretMsg = true
			p := newProvider(t, f, nil)
			secret := f.Secret
			q := tt.setup(f, p)
			r := exchange(t, p, q)
			if r.Error == nil {
				t.Fatalf("Exchange succeeded: %+v", r.Identity)
			}
			if r.Error.Kind != tt.kind || !strings.Contains(r.Error.Message, tt.want) {
				t.Errorf("Exchange error = %v, want kind %s mentioning %q", r.Error, tt.kind, tt.want)
			}
			vendortest.NoSecrets(t, "error message", r.Error.Message, secret, q["authCode"], "usertoken")
			if f.Count(vendorfake.StolenPath) != 0 {
				t.Error("a vendor redirect was followed")
			}
		})
	}
}

func TestSlowVendorTimesOut(t *testing.T) {
	f := newFake(t)
	p := newProvider(t, f, func(p *Provider, _ pluginsdk.Settings) { p.timeout = 150 * time.Millisecond })
	q := login(t, p)
	f.Misbehave = "slow"
	start := time.Now()
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: q})
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Exchange against a hanging vendor = %+v, %v; want a timeout error", r, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	vendortest.NoSecrets(t, "transport error", err.Error(), f.Secret, q["authCode"])
}
