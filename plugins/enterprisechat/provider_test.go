package enterprisechat

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/internal/vendorfake"
	"github.com/adminkernel/kernel/internal/vendortest"
	"github.com/adminkernel/kernel/pluginsdk"
)

const (
	redirectURI = "https://kernel.example.com/api/v1/auth/external/enterprise_chat/callback"
	state       = "St4te0123456789abcdef"
)

var (
	uaAndroid = "Mozilla/5.0 (Linux; Android 10; MI 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/66.0 Mobile Safari/537.36 wxwork/2.7.2 MicroMessenger/6.3.22 NetType/WIFI Language/zh"
	uaIOS     = "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 wxwork/3.1.16 MicroMessenger/7.0.1 Language/zh ColorScheme/Dark"
	uaWindows = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36 Language/zh ColorScheme/Light wxwork/4.1.36 (MicroMessenger/6.2) WindowsWechat MailPlugin_Electron WeMail embeddisk wwmver/3.26.36"
	uaMac     = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_6) AppleWebKit/605.1.15 (KHTML, like Gecko) wxwork/3.0.8 (MicroMessenger/6.2) WeChat/2.0.4"
	uaChrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36"
	uaWeChat  = "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.40 NetType/WIFI Language/zh_CN"
)

func settingsFor(f *vendorfake.WeCom) pluginsdk.Settings {
	return pluginsdk.Settings{
		"CorpId":     f.CorpID,
		"AgentId":    f.AgentID,
		"CorpSecret": f.Secret,
		"ApiBase":    f.URL(),
		"OAuthBase":  f.URL(),
		"LoginBase":  f.URL(),
	}
}

// newProvider returns a provider configured against f, logging at trace
// level into a buffer checked for secrets, tokens and codes at the end of
// the test.
func newProvider(t *testing.T, f *vendorfake.WeCom, tweak func(p *Provider, s pluginsdk.Settings)) *Provider {
	t.Helper()
	s := settingsFor(f)
	secret := s["CorpSecret"]
	p := New(vendortest.Logger(t, func() []string {
		f.Lock()
		out := []string{secret, f.Secret, "accesstoken0"}
		f.Unlock()
		return append(out, f.Issued()...)
	}))
	p.now = f.Now
	if tweak != nil {
		tweak(p, s)
	}
	if err := p.Configure(context.Background(), s); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return p
}

// login plays the browser: it opens the authorize URL at the fake and
// returns the callback query the fake redirects to.
func login(t *testing.T, p *Provider, ua string) map[string]string {
	t.Helper()
	ar, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI, UserAgent: ua, Purpose: pluginsdk.PurposeLogin})
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
	if err != nil {
		t.Fatal(err)
	}
	want := pluginsdk.Descriptor{Code: "enterprise_chat", DisplayName: "Enterprise Chat", Icon: "ant-design:wechat-work-outlined", Brand: "wecom", ProtocolVersion: pluginsdk.ProtocolVersion}
	if d != want {
		t.Errorf("Describe = %+v, want %+v", d, want)
	}
}

func TestConfigure(t *testing.T) {
	base := func() pluginsdk.Settings {
		return pluginsdk.Settings{"CorpId": "ww1", "AgentId": "1000002", "CorpSecret": "s3cr3tvalue"}
	}
	tests := []struct {
		name   string
		change func(s pluginsdk.Settings)
		ok     bool
		want   string // substring of the message
	}{
		{"minimal", func(pluginsdk.Settings) {}, true, ""},
		{"keys in any case", func(s pluginsdk.Settings) {
			delete(s, "CorpId")
			delete(s, "CorpSecret")
			s["corpid"], s["CORPSECRET"], s["apibase"] = "ww1", "s3cr3tvalue", "http://127.0.0.1:1/"
		}, true, ""},
		{"all overrides", func(s pluginsdk.Settings) {
			s["ApiBase"], s["OAuthBase"], s["LoginBase"], s["Lang"], s["FetchProfile"] = "https://wecom.internal", "https://o.internal", "https://l.internal", "en", "false"
		}, true, ""},
		{"no CorpId", func(s pluginsdk.Settings) { delete(s, "CorpId") }, false, "CorpId"},
		{"blank AgentId", func(s pluginsdk.Settings) { s["AgentId"] = "  " }, false, "AgentId"},
		{"no CorpSecret", func(s pluginsdk.Settings) { delete(s, "CorpSecret") }, false, "CorpSecret"},
		{"nothing", func(s pluginsdk.Settings) { clear(s) }, false, "CorpId, AgentId, CorpSecret required"},
		{"AgentId not numeric", func(s pluginsdk.Settings) { s["AgentId"] = "app" }, false, "AgentId"},
		{"CorpId with query chars", func(s pluginsdk.Settings) { s["CorpId"] = "ww1&x=1" }, false, "CorpId"},
		{"ApiBase relative", func(s pluginsdk.Settings) { s["ApiBase"] = "qyapi.weixin.qq.com" }, false, "ApiBase"},
		{"LoginBase with query", func(s pluginsdk.Settings) { s["LoginBase"] = "https://l.example/?a=1" }, false, "LoginBase"},
		{"OAuthBase ftp", func(s pluginsdk.Settings) { s["OAuthBase"] = "ftp://o.example" }, false, "OAuthBase"},
		{"Lang", func(s pluginsdk.Settings) { s["Lang"] = "fr" }, false, "Lang"},
		{"FetchProfile", func(s pluginsdk.Settings) { s["FetchProfile"] = "maybe" }, false, "FetchProfile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.change(s)
			err := New(nil).Configure(context.Background(), s)
			if tt.ok {
				if err != nil {
					t.Fatalf("Configure: %v", err)
				}
				return
			}
			var pe *pluginsdk.ProviderError
			if !errors.As(err, &pe) || pe.Kind != pluginsdk.Misconfigured {
				t.Fatalf("Configure error = %v, want a Misconfigured ProviderError", err)
			}
			if !strings.Contains(pe.Message, tt.want) {
				t.Errorf("message %q does not mention %q", pe.Message, tt.want)
			}
			if strings.Contains(pe.Message, "s3cr3tvalue") {
				t.Errorf("message %q may contain the secret", pe.Message)
			}
		})
	}
}

func TestConfigureKeepsPreviousOnError(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, nil)
	if err := p.Configure(context.Background(), pluginsdk.Settings{"CorpId": "x"}); err == nil {
		t.Fatal("Configure accepted incomplete settings")
	}
	if r := exchange(t, p, login(t, p, uaChrome)); r.Identity == nil {
		t.Fatalf("previous configuration lost: %+v", r.Error)
	}
}

func TestUnconfigured(t *testing.T) {
	p := New(nil)
	if _, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI}); err == nil {
		t.Error("AuthorizeURL succeeded before Configure")
	}
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c", "state": state}})
	if err != nil || r.Error == nil || r.Error.Kind != pluginsdk.Misconfigured {
		t.Errorf("Exchange before Configure = %+v, %v; want Misconfigured", r, err)
	}
}

func TestInClient(t *testing.T) {
	tests := []struct {
		ua   string
		want bool
	}{
		{uaAndroid, true}, {uaIOS, true}, {uaWindows, true}, {uaMac, true},
		{"Mozilla/5.0 WXWork/4.0", true},
		{uaChrome, false}, {uaWeChat, false}, {"", false},
	}
	for _, tt := range tests {
		if got := InClient(tt.ua); got != tt.want {
			t.Errorf("InClient(%q) = %v, want %v", tt.ua, got, tt.want)
		}
	}
}

func TestAuthorizeURL(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) {
		s["OAuthBase"], s["LoginBase"] = "https://open.weixin.qq.com", "https://login.work.weixin.qq.com"
	})
	enc := url.QueryEscape(redirectURI)
	inClient := "https://open.weixin.qq.com/connect/oauth2/authorize?appid=" + f.CorpID + "&redirect_uri=" + enc +
		"&response_type=code&scope=snsapi_base&state=" + state + "&agentid=1000002#wechat_redirect"
	qr := "https://login.work.weixin.qq.com/wwlogin/sso/login?login_type=CorpApp&appid=" + f.CorpID +
		"&agentid=1000002&redirect_uri=" + enc + "&state=" + state
	tests := []struct {
		name, ua, want string
	}{
		{"android client", uaAndroid, inClient},
		{"ios client", uaIOS, inClient},
		{"windows client", uaWindows, inClient},
		{"mac client", uaMac, inClient},
		{"desktop browser", uaChrome, qr},
		{"wechat is not the enterprise client", uaWeChat, qr},
		{"no user agent", "", qr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI, UserAgent: tt.ua, Nonce: "n", CodeChallenge: "c", CodeChallengeMethod: "S256"})
			if err != nil {
				t.Fatal(err)
			}
			if r.URL != tt.want {
				t.Errorf("URL =\n %s\nwant\n %s", r.URL, tt.want)
			}
			if strings.Contains(r.URL, f.Secret) {
				t.Error("the URL contains the secret")
			}
		})
	}
}

func TestAuthorizeURLLang(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["Lang"] = "en" })
	r, err := p.AuthorizeURL(context.Background(), pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirectURI, UserAgent: uaChrome})
	if err != nil || !strings.HasSuffix(r.URL, "&state="+state+"&lang=en") {
		t.Errorf("URL = %q, %v; want lang=en last", r.URL, err)
	}
}

func TestAuthorizeURLRejectsBadInput(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, nil)
	for _, r := range []pluginsdk.AuthorizeRequest{
		{State: "", RedirectURI: redirectURI},
		{State: "has-dash", RedirectURI: redirectURI},
		{State: strings.Repeat("a", 129), RedirectURI: redirectURI},
		{State: state, RedirectURI: ""},
		{State: state, RedirectURI: "/relative/callback"},
	} {
		if _, err := p.AuthorizeURL(context.Background(), r); err == nil {
			t.Errorf("AuthorizeURL(%+v) succeeded", r)
		}
	}
}

func TestExchangeHappyPath(t *testing.T) {
	for name, ua := range map[string]string{"windows client": uaWindows, "android client": uaAndroid, "desktop browser": uaChrome} {
		t.Run(name, func(t *testing.T) {
			f := vendorfake.NewWeCom(t)
			p := newProvider(t, f, nil)
			q := login(t, p, ua)
			r := exchange(t, p, q)
			want := pluginsdk.Identity{Subject: "zhangsan", AccountHint: "zhangsan", DisplayName: "张三"}
			if r.Identity == nil || *r.Identity != want {
				t.Fatalf("Exchange = %+v %+v, want %+v", r.Identity, r.Error, want)
			}
			if InClient(ua) != (f.Count("/connect/oauth2/authorize") == 1) || InClient(ua) == (f.Count("/wwlogin/sso/login") == 1) {
				t.Errorf("wrong authorization mode for %q: %v", ua, f.Calls())
			}
			if n := f.Count("/cgi-bin/user/getuserinfo"); n != 0 {
				t.Errorf("legacy user/getuserinfo called %d times; the current path must be used", n)
			}
			// Same person again: same subject, token reused.
			r = exchange(t, p, login(t, p, ua))
			if r.Identity == nil || r.Identity.Subject != "zhangsan" {
				t.Fatalf("second login = %+v", r)
			}
			if n := f.Count("/cgi-bin/gettoken"); n != 1 {
				t.Errorf("gettoken called %d times for two logins, want 1", n)
			}
		})
	}
}

func TestExchangeWithoutProfile(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["fetchprofile"] = "false" })
	r := exchange(t, p, login(t, p, uaChrome))
	if r.Identity == nil || *r.Identity != (pluginsdk.Identity{Subject: "zhangsan", AccountHint: "zhangsan"}) {
		t.Fatalf("Exchange = %+v", r)
	}
	if n := f.Count("/cgi-bin/user/get"); n != 0 {
		t.Errorf("user/get called %d times with FetchProfile=false", n)
	}
}

func TestProfileFailureDoesNotFailLogin(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	f.NextUser = "wangwu" // a member unknown to user/get (60111)
	p := newProvider(t, f, nil)
	r := exchange(t, p, login(t, p, uaChrome))
	if r.Identity == nil || *r.Identity != (pluginsdk.Identity{Subject: "wangwu", AccountHint: "wangwu"}) {
		t.Fatalf("Exchange = %+v %+v", r.Identity, r.Error)
	}
}

func TestExchangeErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *vendorfake.WeCom, p *Provider) map[string]string
		kind  pluginsdk.ErrorKind
		want  string
	}{
		{"used code", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			q := login(t, p, uaChrome)
			if r := exchange(t, p, q); r.Identity == nil {
				t.Fatalf("first exchange failed: %+v", r.Error)
			}
			return q
		}, pluginsdk.ExchangeFailed, "40029"},
		{"unknown code", func(*vendorfake.WeCom, *Provider) map[string]string {
			return map[string]string{"code": "forged", "state": state}
		}, pluginsdk.ExchangeFailed, "40029"},
		{"expired code", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			q := login(t, p, uaChrome)
			f.Advance(5*time.Minute + time.Second)
			return q
		}, pluginsdk.ExchangeFailed, "40029"},
		{"non-member", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.NextUser = "outsider"
			return login(t, p, uaWindows)
		}, pluginsdk.Denied, "not a member"},
		{"declined (state only)", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.NextUser = "deny"
			return login(t, p, uaChrome)
		}, pluginsdk.Denied, "no code"},
		{"vendor error parameter", func(*vendorfake.WeCom, *Provider) map[string]string {
			return map[string]string{"error": "access_denied", "state": state}
		}, pluginsdk.Denied, "access_denied"},
		{"malformed code", func(*vendorfake.WeCom, *Provider) map[string]string {
			return map[string]string{"code": "a b", "state": state}
		}, pluginsdk.InvalidCallback, "malformed"},
		{"oversized code", func(*vendorfake.WeCom, *Provider) map[string]string {
			return map[string]string{"code": strings.Repeat("c", 513), "state": state}
		}, pluginsdk.InvalidCallback, "malformed"},
		{"wrong secret", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.Secret = "rotated-secret"
			return map[string]string{"code": f.IssueCode("zhangsan"), "state": state}
		}, pluginsdk.Misconfigured, "40001"},
		{"wrong corpid", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.CorpID = "wwOTHER"
			return map[string]string{"code": f.IssueCode("zhangsan"), "state": state}
		}, pluginsdk.Misconfigured, "40013"},
		{"ip not trusted", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.GettokenErr = 60020
			return login(t, p, uaChrome)
		}, pluginsdk.Misconfigured, "60020"},
		{"rate limited", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.GettokenErr = 45009
			return login(t, p, uaChrome)
		}, pluginsdk.ExchangeFailed, "45009"},
		{"redirect domain not trusted", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.DomainMismatch = true
			return login(t, p, uaChrome)
		}, pluginsdk.Misconfigured, "50001"},
		{"token refused after the refresh too", func(f *vendorfake.WeCom, p *Provider) map[string]string {
			f.AlwaysExpired = true
			return login(t, p, uaChrome)
		}, pluginsdk.ExchangeFailed, "42001"},
	}
	for _, m := range append(vendorfake.Misbehaviours, vendorfake.Misbehaviour{Name: "huge-declared", Want: "exceeds"}) {
		tests = append(tests, struct {
			name  string
			setup func(f *vendorfake.WeCom, p *Provider) map[string]string
			kind  pluginsdk.ErrorKind
			want  string
		}{"vendor " + m.Name, func(f *vendorfake.WeCom, p *Provider) map[string]string {
			q := login(t, p, uaChrome)
			f.Misbehave = m.Name
			return q
		}, pluginsdk.ExchangeFailed, m.Want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := vendorfake.NewWeCom(t)
			f.EchoSecretMsg = true
			p := newProvider(t, f, nil)
			q := tt.setup(f, p)
			r := exchange(t, p, q)
			if r.Error == nil {
				t.Fatalf("Exchange succeeded: %+v", r.Identity)
			}
			if r.Error.Kind != tt.kind || !strings.Contains(r.Error.Message, tt.want) {
				t.Errorf("Exchange error = %v, want kind %s mentioning %q", r.Error, tt.kind, tt.want)
			}
			vendortest.NoSecrets(t, "error message", r.Error.Message, "S3cr3t", "rotated-secret", "accesstoken0", q["code"])
			if f.Count(vendorfake.StolenPath) != 0 {
				t.Error("the redirect was followed")
			}
			if tt.name == "token refused after the refresh too" {
				if g, u := f.Count("/cgi-bin/gettoken"), f.Count("/cgi-bin/auth/getuserinfo"); g != 2 || u != 2 {
					t.Errorf("gettoken %d, getuserinfo %d calls; want exactly one refresh and one retry (2, 2)", g, u)
				}
			}
		})
	}
}

func TestExpiredTokenRefreshedOnce(t *testing.T) {
	for _, errcode := range []int{42001, 40014} {
		t.Run(map[int]string{42001: "expired", 40014: "invalid"}[errcode], func(t *testing.T) {
			f := vendorfake.NewWeCom(t)
			p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["FetchProfile"] = "false" })
			if r := exchange(t, p, login(t, p, uaChrome)); r.Identity == nil {
				t.Fatalf("first login: %+v", r.Error)
			}
			f.ExpireToken(errcode) // the vendor drops the token early
			q := login(t, p, uaChrome)
			r := exchange(t, p, q)
			if r.Identity == nil || r.Identity.Subject != "zhangsan" {
				t.Fatalf("login after the token was dropped = %+v", r.Error)
			}
			if g, u := f.Count("/cgi-bin/gettoken"), f.Count("/cgi-bin/auth/getuserinfo"); g != 2 || u != 3 {
				t.Errorf("gettoken %d, getuserinfo %d calls; want 2 and 3 (one refresh, one retry)", g, u)
			}
		})
	}
}

func TestTokenCachedUntilShortlyBeforeExpiry(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, nil)
	exchange(t, p, login(t, p, uaChrome))
	f.Advance(6800 * time.Second) // within expires_in (7200) minus the margin (300)
	exchange(t, p, login(t, p, uaChrome))
	if n := f.Count("/cgi-bin/gettoken"); n != 1 {
		t.Fatalf("gettoken called %d times inside the token's lifetime", n)
	}
	f.Advance(200 * time.Second) // past 6900 s: refreshed proactively, no failed call
	r := exchange(t, p, login(t, p, uaChrome))
	if r.Identity == nil {
		t.Fatal(r.Error)
	}
	if g, u := f.Count("/cgi-bin/gettoken"), f.Count("/cgi-bin/auth/getuserinfo"); g != 2 || u != 3 {
		t.Errorf("gettoken %d, getuserinfo %d; want 2 and 3", g, u)
	}
}

func TestSingleFlightTokenFetch(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold cache", true: "stale token"}[stale], func(t *testing.T) {
			f := vendorfake.NewWeCom(t)
			f.GettokenDelay = 50 * time.Millisecond
			p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["FetchProfile"] = "false" })
			wantTokens := 1
			if stale {
				exchange(t, p, login(t, p, uaChrome))
				f.ExpireToken(42001)
				wantTokens = 2
			}
			const n = 20
			queries := make([]map[string]string, n)
			for i := range queries {
				queries[i] = map[string]string{"code": f.IssueCode("zhangsan"), "state": state}
			}
			var wg sync.WaitGroup
			errs := make(chan string, n)
			for _, q := range queries {
				wg.Go(func() {
					r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: q, RedirectURI: redirectURI})
					if err != nil || r.Identity == nil || r.Identity.Subject != "zhangsan" {
						errs <- "exchange failed"
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			if g := f.Count("/cgi-bin/gettoken"); g != wantTokens {
				t.Errorf("gettoken called %d times for %d parallel exchanges, want %d", g, n, wantTokens)
			}
		})
	}
}

func TestSlowVendorTimesOut(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	f.Misbehave = "slow"
	p := newProvider(t, f, func(p *Provider, _ pluginsdk.Settings) { p.timeout = 150 * time.Millisecond })
	start := time.Now()
	r, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c0de", "state": state}})
	if err == nil {
		t.Fatalf("Exchange against a hanging vendor = %+v, want a transport error", r)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("error %v is not a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if strings.Contains(err.Error(), f.Secret) || strings.Contains(err.Error(), "corpsecret") {
		t.Errorf("transport error leaks the query: %v", err)
	}
}

func TestCallerDeadline(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	f.Misbehave = "slow"
	p := newProvider(t, f, func(p *Provider, _ pluginsdk.Settings) { p.timeout = time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Exchange(ctx, pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c0de", "state": state}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exchange with an expired context = %v, want context.DeadlineExceeded", err)
	}
}

func TestReconfigureTokenCache(t *testing.T) {
	f := vendorfake.NewWeCom(t)
	p := newProvider(t, f, func(_ *Provider, s pluginsdk.Settings) { s["FetchProfile"] = "false" })
	exchange(t, p, login(t, p, uaChrome))
	s := settingsFor(f)
	s["Lang"] = "en" // unrelated change: the token stays cached
	if err := p.Configure(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	exchange(t, p, login(t, p, uaChrome))
	if n := f.Count("/cgi-bin/gettoken"); n != 1 {
		t.Errorf("gettoken called %d times after an unrelated change, want 1", n)
	}
	f.Secret = "new-secret-value"
	s["CorpSecret"] = f.Secret // a new secret: a new cache
	if err := p.Configure(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if r := exchange(t, p, login(t, p, uaChrome)); r.Identity == nil {
		t.Fatal(r.Error)
	}
	if n := f.Count("/cgi-bin/gettoken"); n != 2 {
		t.Errorf("gettoken called %d times after a secret change, want 2", n)
	}
}

func TestTokenTTL(t *testing.T) {
	for _, tt := range []struct {
		in   int64
		want time.Duration
	}{{7200, 6900 * time.Second}, {600, 300 * time.Second}, {0, 5 * time.Minute}, {-1, 5 * time.Minute}, {100, 50 * time.Second}} {
		if got := tokenTTL(tt.in); got != tt.want {
			t.Errorf("tokenTTL(%d) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
