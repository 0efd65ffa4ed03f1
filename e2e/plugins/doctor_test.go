package plugins_test

// The provider setup doctor (issue 29 item 6) against the faithful vendor
// fakes: the kernel-side checks of each bundled vendor (good and each bad
// case), then through the API of a kernel and through adminkernel
// providers doctor with the real code_host plugin.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/internal/vendorfake"
	"github.com/adminkernel/kernel/internal/vendortest"
)

const doctorCallback = "https://kernel.example.com/api/v1/auth/external/"

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
func TestDoctorVendorChecks(t *testing.T) {
	t.Parallel()
	wecom := vendorfake.NewWeCom(t)
	ding := vendorfake.NewDingTalk(t)
	gh := vendorfake.NewGitHub(t)
	wx := vendorfake.NewWeChat(t)
	wecom.EchoSecretMsg, ding.EchoSecretMsg, wx.EchoSecretMsg = true, true, true
	closed := vendortest.ClosedBase(t)
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
				Entry: vendortest.DoctorEntry(tt.code, idp.Plugin), Settings: tt.settings, Section: "Service:ExternalAuth:Test",
				RedirectURI: doctorCallback + tt.code + "/callback",
			})
			if c := vendortest.Check(t, rep, "status"); c.Result != doctor.OK || c.MsgKey != "doctor.status.ready" {
				t.Errorf("status = %+v", c)
			}
			for name, res := range tt.want {
				if c := vendortest.Check(t, rep, name); c.Result != res {
					t.Errorf("%s = %+v, want %s", name, c, res)
				}
			}
			for name, key := range tt.wantKey {
				if c := vendortest.Check(t, rep, name); c.MsgKey != key || c.Message == "" || strings.Contains(c.Message, "{") {
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
			if rep.RedirectURI != doctorCallback+tt.code+"/callback" || rep.TrustedDomain != "kernel.example.com" {
				t.Errorf("redirect = %q, trusted domain %q", rep.RedirectURI, rep.TrustedDomain)
			}
			var secrets []string
			for k, v := range tt.settings {
				if config.SensitiveName(k) {
					secrets = append(secrets, v)
				}
			}
			vendortest.ReportNoSecrets(t, rep, append(secrets, tt.secrets...)...)
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

// The doctor through the API of a kernel whose code_host is configured
// against the GitHub fake but has no binary: its status fails (missing),
// the vendor checks still run: good, then refused once the secret is reset
// at the vendor; the secret is in no answer.
func TestDoctorAPIVendor(t *testing.T) {
	gh := vendorfake.NewGitHub(t)
	k := kerneltest.Start(t, append(vendortest.Environ(vendortest.CodeHostEnv(gh, callbackURL)),
		"Service__ExternalAuth__PluginDir="+t.TempDir()))
	k.Leaks.Secrets = append(k.Leaks.Secrets, gh.Secret)
	secrets := []string{gh.Secret}
	checkOf := vendortest.Check
	run := func(code string) (doctor.Report, string) {
		t.Helper()
		r := k.Do("POST", base+"/"+code+"/doctor", k.Admin(), nil).Expect(t, "doctor "+code, 200, 0)
		var rep doctor.Report
		r.Decode(t, &rep)
		for _, s := range secrets {
			if strings.Contains(r.Raw, s) {
				t.Errorf("doctor %s answers a secret: %s", code, r.Raw)
			}
		}
		return rep, r.Raw
	}
	var rep doctor.Report
	rep, _ = run("code_host")
	if c := checkOf(t, rep, "status"); c.Result != doctor.Fail || !strings.Contains(c.Message, "missing") {
		t.Errorf("code_host status = %+v, want missing", c)
	}
	if c := checkOf(t, rep, "credentials"); c.Result != doctor.OK {
		t.Errorf("code_host credentials = %+v", c)
	}
	if c := checkOf(t, rep, "redirect"); c.MsgKey != "doctor.redirect.gitHub" || !strings.Contains(c.Message, "https://kernel.example.com/api/v1/auth/external/code_host/callback") {
		t.Errorf("code_host redirect = %+v", c)
	}
	// The secret is reset at the vendor: the configured one is refused.
	gh.Lock()
	gh.Secret = "rotated-at-the-vendor-0000"
	gh.Unlock()
	rep, _ = run("code_host")
	if c := checkOf(t, rep, "credentials"); c.Result != doctor.Fail || c.MsgKey != "doctor.credentials.refused" {
		t.Errorf("code_host with a reset secret: credentials = %+v", c)
	}
	if n := gh.Count("/login/oauth/access_token"); n != 2 {
		t.Errorf("token endpoint calls = %d, want 2", n)
	}
}

// runCLI runs the adminkernel command line in process.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cli.New(host.Options{})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// providers doctor <code> with the bundled code_host plugin against the
// faithful GitHub fake: every check passes; after the secret is reset at
// the vendor the credentials check fails and the command exits non-zero;
// no secret is printed either way; an unknown code is an error.
func TestProvidersDoctorCLI(t *testing.T) {
	dir := t.TempDir()
	vendortest.Install(t, dir, "code_host", vendortest.CodeHostPlugin)
	gh := vendorfake.NewGitHub(t)
	vendortest.Setenv(t, vendortest.CodeHostEnv(gh, callbackURL))
	t.Setenv("Service__ExternalAuth__PluginDir", dir)
	secret := gh.Secret

	doc := func(args ...string) (doctor.Report, string, error) {
		t.Helper()
		out, stderr, err := runCLI(t, append([]string{"providers", "doctor", "--content-root", t.TempDir(), "--environment", "Development"}, args...)...)
		if strings.Contains(out+stderr, secret) {
			t.Errorf("doctor printed the client secret: %s %s", out, stderr)
		}
		var rep doctor.Report
		if len(args) > 0 && args[0] == "--json" {
			if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
				t.Fatalf("doctor output %q: %v (%v, %s)", out, jerr, err, stderr)
			}
		}
		return rep, out, err
	}
	rep, _, err := doc("--json", "code_host")
	if err != nil || rep.Result != doctor.OK || rep.Status != "ready" || rep.RedirectURI != "https://kernel.example.com/api/v1/auth/external/code_host/callback" {
		t.Fatalf("doctor = %+v, %v", rep, err)
	}
	_, text, err := doc("code_host")
	if err != nil || !strings.Contains(text, "redirect URI:   https://kernel.example.com/api/v1/auth/external/code_host/callback") || !strings.Contains(text, "GitHub accepted the credentials") {
		t.Errorf("doctor (text) = %q, %v", text, err)
	}

	gh.Lock()
	gh.Secret = "rotated-at-the-vendor-0000"
	gh.Unlock()
	rep, _, err = doc("--json", "code_host")
	if err == nil || rep.Result != doctor.Fail {
		t.Errorf("doctor with a reset secret = %+v, %v; want a failure", rep, err)
	}
	for _, c := range rep.Checks {
		if c.Name == "credentials" && (c.Result != doctor.Fail || c.MsgKey != "doctor.credentials.refused") {
			t.Errorf("credentials = %+v", c)
		}
	}
	if _, _, err := doc("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("doctor nope = %v", err)
	}
}
