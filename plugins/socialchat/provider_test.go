package socialchat

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
	redirectURI = "https://kernel.example.com/api/v1/auth/external/social_chat/callback"
	state       = "St4te0123456789abcdef"
)

func settingsFor(f *vendorfake.WeChat) pluginsdk.Settings {
	return pluginsdk.Settings{
		"AppId":     f.AppID,
		"AppSecret": f.Secret,
		"OpenBase":  f.URL(),
		"ApiBase":   f.URL(),
	}
}

func newProvider(t *testing.T, f *vendorfake.WeChat, tweak func(p *Provider, s pluginsdk.Settings)) *Provider {
	t.Helper()
	s := settingsFor(f)
	secret := s["AppSecret"]
	p := New(vendortest.Logger(t, func() []string {
		f.Lock()
		out := []string{secret, f.Secret, "WXACCESS", "WXREFRESH"}
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
	ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI})
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
	want := pluginsdk.Descriptor{Code: "social_chat", DisplayName: "Social Chat", Icon: "ant-design:wechat-outlined", Brand: "wechat", ProtocolVersion: pluginsdk.ProtocolVersion}
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
		{"minimal", pluginsdk.Settings{"AppId": "wx1", "AppSecret": "s3cr3tvalue"}, ""},
		{"any case and options", pluginsdk.Settings{"appid": "wx1", "APPSECRET": "s3cr3tvalue", "lang": "en", "OPENBASE": "http://127.0.0.1:9/", "apibase": "https://api.internal"}, ""},
		{"nothing", pluginsdk.Settings{}, "AppId, AppSecret required"},
		{"no secret", pluginsdk.Settings{"AppId": "wx1"}, "AppSecret required"},
		{"blank id", pluginsdk.Settings{"AppId": " ", "AppSecret": "s3cr3tvalue"}, "AppId required"},
		{"id with query chars", pluginsdk.Settings{"AppId": "wx1#x", "AppSecret": "s3cr3tvalue"}, "AppId"},
		{"bad OpenBase", pluginsdk.Settings{"AppId": "wx1", "AppSecret": "s3cr3tvalue", "OpenBase": "open.weixin.qq.com"}, "OpenBase"},
		{"bad ApiBase", pluginsdk.Settings{"AppId": "wx1", "AppSecret": "s3cr3tvalue", "ApiBase": "https://api.weixin.qq.com?x=1"}, "ApiBase"},
		{"bad Lang", pluginsdk.Settings{"AppId": "wx1", "AppSecret": "s3cr3tvalue", "Lang": "zh_CN"}, "Lang"},
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
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c0de"}})
	if err != nil || r.Error == nil || r.Error.Kind != pluginsdk.Misconfigured {
		t.Errorf("Exchange before Configure = %+v, %v", r, err)
	}
}

func TestAuthorizeURL(t *testing.T) {
	f := vendorfake.NewWeChat(t)
	enc := url.QueryEscape(redirectURI)
	for _, tt := range []struct {
		name  string
		tweak func(*Provider, pluginsdk.Settings)
		want  string
	}{
		{"default host", func(_ *Provider, s pluginsdk.Settings) { delete(s, "OpenBase") },
			"https://open.weixin.qq.com/connect/qrconnect?appid=" + f.AppID + "&redirect_uri=" + enc + "&response_type=code&scope=snsapi_login&state=" + state + "#wechat_redirect"},
		{"lang", func(_ *Provider, s pluginsdk.Settings) { s["OpenBase"], s["Lang"] = "https://open.weixin.qq.com", "en" },
			"https://open.weixin.qq.com/connect/qrconnect?appid=" + f.AppID + "&redirect_uri=" + enc + "&response_type=code&scope=snsapi_login&state=" + state + "&lang=en#wechat_redirect"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, f, tt.tweak)
			for _, ua := range []string{"", "Mozilla/5.0 (Windows NT 10.0) Chrome/129.0", "Mozilla/5.0 (iPhone) MicroMessenger/8.0.40"} {
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
		{State: "a_b", RedirectURI: redirectURI},
		{State: state, RedirectURI: "https://kernel.example.com/cb#frag"},
	} {
		if _, err := p.AuthorizeURL(context.Background(), r); err == nil {
			t.Errorf("AuthorizeURL(%+v) succeeded", r)
		}
	}
}

func TestExchangeHappyPath(t *testing.T) {
	for _, tt := range []struct {
		name, unionID string
		userinfoCalls int
	}{
		{"unionid in the token answer", "both", 1},
		{"unionid only in userinfo", "userinfo", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := vendorfake.NewWeChat(t)
			f.UnionID = tt.unionID
			p := newProvider(t, f, nil)
			r := exchange(t, p, login(t, p))
			want := pluginsdk.Identity{Subject: "o6_bmasdasdsad6_2sgVt7hMZOPfL", DisplayName: "Alice"}
			if r.Identity == nil || *r.Identity != want {
				t.Fatalf("Exchange = %+v %+v, want %+v", r.Identity, r.Error, want)
			}
			if n := f.Count(userInfoPath); n != tt.userinfoCalls {
				t.Errorf("userinfo called %d times, want %d", n, tt.userinfoCalls)
			}
			// Same person again: same subject (a new openid would not matter).
			f.Lock()
			u := f.Users["alice"]
			u.OpenID = "oAlice_otherapp"
			f.Users["alice"] = u
			f.Unlock()
			if r := exchange(t, p, login(t, p)); r.Identity == nil || r.Identity.Subject != want.Subject {
				t.Fatalf("second login = %+v %+v", r.Identity, r.Error)
			}
		})
	}
}

func TestUserinfoFailureWithUnionIDInToken(t *testing.T) {
	f := vendorfake.NewWeChat(t)
	f.UserinfoErr = 48001
	p := newProvider(t, f, nil)
	r := exchange(t, p, login(t, p))
	if r.Identity == nil || *r.Identity != (pluginsdk.Identity{Subject: "o6_bmasdasdsad6_2sgVt7hMZOPfL"}) {
		t.Fatalf("Exchange = %+v %+v; the unionid of the token answer suffices", r.Identity, r.Error)
	}
}

func TestExchangeErrors(t *testing.T) {
	type tc struct {
		name  string
		setup func(f *vendorfake.WeChat, p *Provider) map[string]string
		kind  pluginsdk.ErrorKind
		want  string
	}
	tests := []tc{
		{"used code", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			q := login(t, p)
			if r := exchange(t, p, q); r.Identity == nil {
				t.Fatalf("first exchange: %+v", r.Error)
			}
			return q
		}, pluginsdk.ExchangeFailed, "40163"},
		{"unknown code", func(*vendorfake.WeChat, *Provider) map[string]string {
			return map[string]string{"code": "forgedcode", "state": state}
		}, pluginsdk.ExchangeFailed, "40029"},
		{"expired code", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			q := login(t, p)
			f.Lock()
			f.Clock = f.Clock.Add(11 * time.Minute)
			f.Unlock()
			return q
		}, pluginsdk.ExchangeFailed, "40029"},
		{"missing unionid", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			f.UnionID = "none"
			return login(t, p)
		}, pluginsdk.ExchangeFailed, "unionid missing: bind the website app to an Open Platform account"},
		{"unionid needed but userinfo refused", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			f.UnionID, f.UserinfoErr = "userinfo", 48001
			return login(t, p)
		}, pluginsdk.ExchangeFailed, "48001"},
		{"wrong secret", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			q := login(t, p)
			f.Secret = "rotated-secret-rotated-secret-00"
			return q
		}, pluginsdk.Misconfigured, "40125"},
		{"wrong appid", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			f.AppID = "wxOTHER"
			return map[string]string{"code": f.IssueCode("alice"), "state": state}
		}, pluginsdk.Misconfigured, "40013"},
		{"user declined (state only)", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			f.NextUser = "deny"
			return login(t, p)
		}, pluginsdk.Denied, "no code"},
		{"error parameter", func(*vendorfake.WeChat, *Provider) map[string]string {
			return map[string]string{"error": "access_denied", "state": state}
		}, pluginsdk.Denied, "access_denied"},
		{"malformed code", func(*vendorfake.WeChat, *Provider) map[string]string {
			return map[string]string{"code": "a&b c", "state": state}
		}, pluginsdk.InvalidCallback, "malformed"},
		{"userinfo garbage when the unionid is needed", func(f *vendorfake.WeChat, p *Provider) map[string]string {
			f.UnionID, f.Misbehave, f.MisbehaveOnly = "userinfo", "garbage", userInfoPath
			return login(t, p)
		}, pluginsdk.ExchangeFailed, "not a JSON object"},
	}
	for _, m := range append(vendorfake.Misbehaviours, vendorfake.Misbehaviour{Name: "huge-declared", Want: "exceeds"}) {
		tests = append(tests, tc{"vendor " + m.Name, func(f *vendorfake.WeChat, p *Provider) map[string]string {
			q := login(t, p)
			f.Misbehave = m.Name
			return q
		}, pluginsdk.ExchangeFailed, m.Want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := vendorfake.NewWeChat(t)
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
			vendortest.NoSecrets(t, "error message", r.Error.Message, secret, q["code"], "WXACCESS")
			if f.Count(vendorfake.StolenPath) != 0 {
				t.Error("a vendor redirect was followed")
			}
		})
	}
}

func TestRedirectRules(t *testing.T) {
	// The fake enforces the website app's callback domain: a redirect URI
	// with a port or on another host gets the vendor's error page, no code.
	f := vendorfake.NewWeChat(t)
	p := newProvider(t, f, nil)
	for _, ru := range []string{"https://kernel.example.com:8443/cb", "https://other.example.com/cb"} {
		ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: ru})
		if err != nil {
			t.Fatal(err)
		}
		u, _, _ := strings.Cut(ar.URL, "#")
		resp, err := vendortest.Browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: the vendor page answered %d, want its 200 error page", ru, resp.StatusCode)
		}
	}
}

func TestSlowVendorTimesOut(t *testing.T) {
	f := vendorfake.NewWeChat(t)
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
	vendortest.NoSecrets(t, "transport error", err.Error(), f.Secret, q["code"])
}
