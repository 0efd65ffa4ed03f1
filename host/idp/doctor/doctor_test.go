package doctor_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/internal/vendorfake"
)

const callback = "https://kernel.example.com/api/v1/auth/external/"

func entry(code string, kind idp.Kind) idp.Entry {
	return idp.Entry{Code: code, Status: idp.Ready, Source: idp.Source{Kind: kind, Name: "test"}}
}

// closedBase is an http base URL on which nothing listens.
func closedBase(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

func find(t *testing.T, rep doctor.Report, name string) doctor.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, rep.Checks)
	return doctor.Check{}
}

// noSecret fails when a secret appears anywhere in the report.
func noSecret(t *testing.T, rep doctor.Report, secrets ...string) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(string(b), s) {
			t.Errorf("the report holds the secret %q: %s", s, b)
		}
	}
}

type vendorCase struct {
	name     string
	code     string
	settings map[string]string
	tweak    func()
	want     map[string]doctor.Result // check name → result
	wantKey  map[string]string        // check name → msgKey
	secrets  []string
}

// Every bundled vendor against its faithful fake: the good case and each
// bad case (bad credentials, an API host that does not resolve or does not
// answer, the vendor's own refusals), with no secret in any result even
// when the vendor echoes it.
func TestVendorChecks(t *testing.T) {
	t.Parallel()
	wecom := vendorfake.NewWeCom(t)
	ding := vendorfake.NewDingTalk(t)
	gh := vendorfake.NewGitHub(t)
	wx := vendorfake.NewWeChat(t)
	for _, f := range []*vendorfake.Core{&wecom.Core, &ding.Core, &gh.Core, &wx.Core} {
		f.Lock()
		f.Unlock()
	}
	wecom.EchoSecretMsg, ding.EchoSecretMsg, wx.EchoSecretMsg = true, true, true
	closed := closedBase(t)
	weComOK := func(over map[string]string) map[string]string {
		m := map[string]string{"CorpId": wecom.CorpID, "AgentId": wecom.AgentID, "CorpSecret": wecom.Secret,
			"ApiBase": wecom.URL(), "OAuthBase": wecom.URL(), "LoginBase": wecom.URL()}
		for k, v := range over {
			m[k] = v
		}
		return m
	}
	tests := []vendorCase{
		{name: "wecom good", code: "enterprise_chat", settings: weComOK(nil),
			want:    map[string]doctor.Result{"settings": doctor.OK, "credentials": doctor.OK, "redirect": doctor.OK},
			wantKey: map[string]string{"redirect": "doctor.redirect.weCom"}},
		{name: "wecom bad secret", code: "enterprise_chat", settings: weComOK(map[string]string{"CorpSecret": "wrong-secret-value"}),
			want: map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.refused"},
			secrets: []string{"wrong-secret-value"}},
		{name: "wecom bad corp", code: "enterprise_chat", settings: weComOK(map[string]string{"CorpId": "wwnotmine"}),
			want: map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.refused"}},
		{name: "wecom untrusted ip", code: "enterprise_chat", settings: weComOK(nil), tweak: func() { wecom.Lock(); wecom.GettokenErr = 60020; wecom.Unlock() },
			want: map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.ipNotTrusted"}},
		{name: "wecom missing keys", code: "enterprise_chat", settings: map[string]string{"CorpId": wecom.CorpID},
			want: map[string]doctor.Result{"settings": doctor.Fail}, wantKey: map[string]string{"settings": "doctor.settings.missing"}},
		{name: "wecom bad url", code: "enterprise_chat", settings: weComOK(map[string]string{"ApiBase": "ftp://x"}),
			want: map[string]doctor.Result{"settings": doctor.Fail}, wantKey: map[string]string{"settings": "doctor.settings.badUrl"}},
		{name: "wecom host unresolvable", code: "enterprise_chat", settings: weComOK(map[string]string{"ApiBase": "https://qyapi.vendor.invalid"}),
			want:    map[string]doctor.Result{"dns:qyapi.vendor.invalid": doctor.Fail, "credentials": doctor.Warn},
			wantKey: map[string]string{"credentials": "doctor.credentials.skipped"}},
		{name: "wecom host not answering", code: "enterprise_chat", settings: weComOK(map[string]string{"ApiBase": closed}),
			want:    map[string]doctor.Result{"reach:" + strings.TrimPrefix(closed, "http://"): doctor.Fail, "credentials": doctor.Warn},
			wantKey: map[string]string{"reach:" + strings.TrimPrefix(closed, "http://"): "doctor.reach.fail"}},
		{name: "dingtalk good", code: "team_chat", settings: map[string]string{"ClientId": ding.ClientID, "ClientSecret": ding.Secret, "ApiBase": ding.URL(), "LoginBase": ding.URL()},
			want: map[string]doctor.Result{"settings": doctor.OK, "credentials": doctor.OK}, wantKey: map[string]string{"redirect": "doctor.redirect.dingTalk"}},
		{name: "dingtalk bad secret", code: "team_chat", settings: map[string]string{"ClientId": ding.ClientID, "ClientSecret": "ding-wrong-secret", "ApiBase": ding.URL(), "LoginBase": ding.URL()},
			want: map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.refused"}, secrets: []string{"ding-wrong-secret"}},
		{name: "github good", code: "code_host", settings: map[string]string{"ClientId": gh.ClientID, "ClientSecret": gh.Secret, "WebBase": gh.URL(), "ApiBase": gh.URL()},
			want: map[string]doctor.Result{"settings": doctor.OK, "credentials": doctor.OK}, wantKey: map[string]string{"redirect": "doctor.redirect.gitHub"}},
		{name: "github bad secret", code: "code_host", settings: map[string]string{"ClientId": gh.ClientID, "ClientSecret": "gh-wrong-secret", "WebBase": gh.URL(), "ApiBase": gh.URL()},
			want: map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.refused"}, secrets: []string{"gh-wrong-secret"}},
		{name: "github answers garbage", code: "code_host", settings: map[string]string{"ClientId": gh.ClientID, "ClientSecret": gh.Secret, "WebBase": gh.URL(), "ApiBase": gh.URL()},
			tweak: func() { gh.Lock(); gh.Misbehave, gh.MisbehaveOnly = "5xx", "/login/oauth/access_token"; gh.Unlock() },
			want:  map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.unexpected"}},
		{name: "wechat good", code: "social_chat", settings: map[string]string{"AppId": wx.AppID, "AppSecret": wx.Secret, "ApiBase": wx.URL(), "OpenBase": wx.URL()},
			want: map[string]doctor.Result{"settings": doctor.OK, "credentials": doctor.OK, "redirect": doctor.OK}, wantKey: map[string]string{"redirect": "doctor.redirect.weChat"}},
		{name: "wechat bad secret", code: "social_chat", settings: map[string]string{"AppId": wx.AppID, "AppSecret": "wx-wrong-secret", "ApiBase": wx.URL(), "OpenBase": wx.URL()},
			want: map[string]doctor.Result{"credentials": doctor.Fail}, wantKey: map[string]string{"credentials": "doctor.credentials.refused"}, secrets: []string{"wx-wrong-secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tweak != nil {
				tt.tweak()
			}
			rep := (&doctor.Doctor{}).Run(context.Background(), doctor.Target{
				Entry: entry(tt.code, idp.Plugin), Settings: tt.settings, Section: "Service:ExternalAuth:Test",
				RedirectURI: callback + tt.code + "/callback",
			})
			if c := find(t, rep, "status"); c.Result != doctor.OK || c.MsgKey != "doctor.status.ready" {
				t.Errorf("status = %+v", c)
			}
			for name, res := range tt.want {
				if c := find(t, rep, name); c.Result != res {
					t.Errorf("%s = %+v, want %s", name, c, res)
				}
			}
			for name, key := range tt.wantKey {
				if c := find(t, rep, name); c.MsgKey != key || c.Message == "" || strings.Contains(c.Message, "{") {
					t.Errorf("%s = %+v, want msgKey %s with its English text", name, c, key)
				}
			}
			wantResult := doctor.OK
			for _, c := range rep.Checks {
				if c.Result == doctor.Fail {
					wantResult = doctor.Fail
				} else if c.Result == doctor.Warn && wantResult == doctor.OK {
					wantResult = doctor.Warn
				}
				if c.Result != doctor.OK && c.Hint == "" && c.Name != "credentials" {
					t.Errorf("%s is %s without a hint", c.Name, c.Result)
				}
			}
			if rep.Result != wantResult {
				t.Errorf("report result %s, want %s", rep.Result, wantResult)
			}
			if rep.RedirectURI != callback+tt.code+"/callback" || rep.TrustedDomain != "kernel.example.com" {
				t.Errorf("redirect = %q, trusted domain %q", rep.RedirectURI, rep.TrustedDomain)
			}
			var secrets []string
			for k, v := range tt.settings {
				if config.SensitiveName(k) {
					secrets = append(secrets, v)
				}
			}
			noSecret(t, rep, append(secrets, tt.secrets...)...)
			if tt.tweak != nil {
				for _, f := range []*vendorfake.Core{&wecom.Core, &gh.Core} {
					f.Lock()
					f.Misbehave, f.MisbehaveOnly = "", ""
					f.Unlock()
				}
				wecom.Lock()
				wecom.GettokenErr = 0
				wecom.Unlock()
			}
		})
	}
	// The fakes saw the checks: one gettoken per WeCom case that reached it.
	if n := wecom.Count("/cgi-bin/gettoken"); n < 4 {
		t.Errorf("gettoken calls = %d", n)
	}
	if n := ding.Count("/v1.0/oauth2/accessToken"); n != 2 {
		t.Errorf("DingTalk app token calls = %d, want 2", n)
	}
}

// The redirect check: WeChat refuses non-default ports; a public http
// callback warns; an unknown callback base warns with the hint.
func TestRedirectChecks(t *testing.T) {
	t.Parallel()
	run := func(code, redirect string) doctor.Check {
		rep := (&doctor.Doctor{}).Run(context.Background(), doctor.Target{
			Entry: entry(code, idp.Plugin), Settings: map[string]string{"ClientId": "x"}, Section: "S", RedirectURI: redirect, RedirectProblem: "Service:ExternalAuth:CallbackBaseUrl is not set",
		})
		return find(t, rep, "redirect")
	}
	if c := run("social_chat", "https://kernel.example.com:8443/api/v1/auth/external/social_chat/callback"); c.Result != doctor.Warn || c.MsgKey != "doctor.redirect.port" {
		t.Errorf("wechat on 8443 = %+v", c)
	}
	if c := run("acme", "http://kernel.example.com/api/v1/auth/external/acme/callback"); c.Result != doctor.Warn || c.MsgKey != "doctor.redirect.http" {
		t.Errorf("public http = %+v", c)
	}
	if c := run("acme", "http://127.0.0.1:8080/api/v1/auth/external/acme/callback"); c.Result != doctor.OK || c.Args["trustedDomain"] != "127.0.0.1:8080" {
		t.Errorf("loopback http = %+v", c)
	}
	if c := run("acme", ""); c.Result != doctor.Warn || c.MsgKey != "doctor.redirect.unknown" || !strings.Contains(c.Hint, "CallbackBaseUrl") {
		t.Errorf("unknown base = %+v", c)
	}
}

// A third-party plugin: status and settings presence only, saying that
// the vendor checks need the plugin; a recorded (not launched) entry fails
// its status check with the reason.
func TestUnknownPluginAndStatus(t *testing.T) {
	t.Parallel()
	e := entry("acme", idp.Plugin)
	e.Status, e.Reason = idp.NotLaunched, "not pinned: Service:ExternalAuth:RequirePins is on"
	rep := (&doctor.Doctor{}).Run(context.Background(), doctor.Target{Entry: e, Settings: map[string]string{"ClientId": "x"}, Section: "Service:ExternalAuth:Plugins:acme", RedirectURI: callback + "acme/callback"})
	if c := find(t, rep, "status"); c.Result != doctor.Fail || !strings.Contains(c.Message, "RequirePins") || c.Hint == "" {
		t.Errorf("status = %+v", c)
	}
	if c := find(t, rep, "settings"); c.Result != doctor.Warn || c.MsgKey != "doctor.settings.pluginOnly" {
		t.Errorf("settings = %+v", c)
	}
	if rep.Result != doctor.Fail {
		t.Errorf("result = %s", rep.Result)
	}
	rep = (&doctor.Doctor{}).Run(context.Background(), doctor.Target{Entry: entry("acme", idp.Plugin), Section: "S", RedirectURI: callback + "acme/callback"})
	if c := find(t, rep, "settings"); c.Result != doctor.Fail || c.MsgKey != "doctor.settings.empty" {
		t.Errorf("empty settings = %+v", c)
	}
}

// OIDC: discovery, the exact issuer and the key set, against the test
// issuer, and each failure.
func TestOIDCChecks(t *testing.T) {
	t.Parallel()
	var breakPath, breakHow string
	is, err := oidctest.Start(oidctest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == breakPath {
				switch breakHow {
				case "404":
					http.NotFound(w, r)
				case "garbage":
					_, _ = w.Write([]byte("<html>"))
				case "nokeys":
					_, _ = w.Write([]byte(`{"keys":[]}`))
				case "nojwks":
					_, _ = w.Write([]byte(`{"issuer":"x","authorization_endpoint":"http://a/x","token_endpoint":"http://a/t"}`))
				}
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.Close)
	oidcTarget := func(authority string) doctor.Target {
		return doctor.Target{
			Entry:       entry("sso", idp.Builtin),
			OIDC:        &config.OIDCProvider{Code: "sso", Authority: authority, ClientID: is.ClientID, ClientSecret: config.Secret(is.ClientSecret)},
			RedirectURI: callback + "sso/callback",
		}
	}
	tests := []struct {
		name, authority, path, how string
		check                      string
		result                     doctor.Result
		key                        string
	}{
		{"good", is.URL, "", "", "jwks", doctor.OK, "doctor.oidc.jwksOk"},
		{"good issuer", is.URL, "", "", "issuer", doctor.OK, "doctor.oidc.issuerOk"},
		{"wrong issuer", strings.Replace(is.URL, "127.0.0.1", "localhost", 1), "", "", "issuer", doctor.Fail, "doctor.oidc.issuerMismatch"},
		{"discovery 404", is.URL, "/.well-known/openid-configuration", "404", "discovery", doctor.Fail, "doctor.oidc.discoveryFail"},
		{"discovery garbage", is.URL, "/.well-known/openid-configuration", "garbage", "discovery", doctor.Fail, "doctor.oidc.discoveryFail"},
		{"discovery without jwks_uri", is.URL, "/.well-known/openid-configuration", "nojwks", "discovery", doctor.Fail, "doctor.oidc.discoveryFail"},
		{"jwks 404", is.URL, "/keys", "404", "jwks", doctor.Fail, "doctor.oidc.jwksFail"},
		{"jwks empty", is.URL, "/keys", "nokeys", "jwks", doctor.Fail, "doctor.oidc.jwksFail"},
		{"authority unresolvable", "https://idp.vendor.invalid", "", "", "dns:idp.vendor.invalid", doctor.Fail, "doctor.dns.fail"},
		{"authority not answering", closedBase(t), "", "", "", doctor.Fail, "doctor.reach.fail"},
	}
	for _, tt := range tests {
		breakPath, breakHow = tt.path, tt.how
		rep := (&doctor.Doctor{}).Run(context.Background(), oidcTarget(tt.authority))
		name := tt.check
		if name == "" {
			name = "reach:" + strings.TrimPrefix(tt.authority, "http://")
		}
		if c := find(t, rep, name); c.Result != tt.result || c.MsgKey != tt.key {
			t.Errorf("%s: %s = %+v, want %s %s", tt.name, name, c, tt.result, tt.key)
		}
		if tt.result == doctor.Fail && rep.Result != doctor.Fail {
			t.Errorf("%s: report result %s", tt.name, rep.Result)
		}
		noSecret(t, rep, is.ClientSecret)
	}
}
