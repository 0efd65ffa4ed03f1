package doctor_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/internal/vendortest"
)

const callback = "https://kernel.example.com/api/v1/auth/external/"

// The redirect check: WeChat refuses non-default ports; a public http
// callback warns; an unknown callback base warns with the hint.
func TestRedirectChecks(t *testing.T) {
	t.Parallel()
	run := func(code, redirect string) doctor.Check {
		rep := (&doctor.Doctor{}).Run(context.Background(), doctor.Target{
			Entry: vendortest.DoctorEntry(code, idp.Plugin), Settings: map[string]string{"ClientId": "x"}, Section: "S", RedirectURI: redirect, RedirectProblem: "Service:ExternalAuth:CallbackBaseUrl is not set",
		})
		return vendortest.Check(t, rep, "redirect")
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
	e := vendortest.DoctorEntry("acme", idp.Plugin)
	e.Status, e.Reason = idp.NotLaunched, "not pinned: Service:ExternalAuth:RequirePins is on"
	rep := (&doctor.Doctor{}).Run(context.Background(), doctor.Target{Entry: e, Settings: map[string]string{"ClientId": "x"}, Section: "Service:ExternalAuth:Plugins:acme", RedirectURI: callback + "acme/callback"})
	if c := vendortest.Check(t, rep, "status"); c.Result != doctor.Fail || !strings.Contains(c.Message, "RequirePins") || c.Hint == "" {
		t.Errorf("status = %+v", c)
	}
	if c := vendortest.Check(t, rep, "settings"); c.Result != doctor.Warn || c.MsgKey != "doctor.settings.pluginOnly" {
		t.Errorf("settings = %+v", c)
	}
	if rep.Result != doctor.Fail {
		t.Errorf("result = %s", rep.Result)
	}
	rep = (&doctor.Doctor{}).Run(context.Background(), doctor.Target{Entry: vendortest.DoctorEntry("acme", idp.Plugin), Section: "S", RedirectURI: callback + "acme/callback"})
	if c := vendortest.Check(t, rep, "settings"); c.Result != doctor.Fail || c.MsgKey != "doctor.settings.empty" {
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
			Entry:       vendortest.DoctorEntry("sso", idp.Builtin),
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
		{"authority not answering", vendortest.ClosedBase(t), "", "", "", doctor.Fail, "doctor.reach.fail"},
	}
	for _, tt := range tests {
		breakPath, breakHow = tt.path, tt.how
		rep := (&doctor.Doctor{}).Run(context.Background(), oidcTarget(tt.authority))
		name := tt.check
		if name == "" {
			name = "reach:" + strings.TrimPrefix(tt.authority, "http://")
		}
		if c := vendortest.Check(t, rep, name); c.Result != tt.result || c.MsgKey != tt.key {
			t.Errorf("%s: %s = %+v, want %s %s", tt.name, name, c, tt.result, tt.key)
		}
		if tt.result == doctor.Fail && rep.Result != doctor.Fail {
			t.Errorf("%s: report result %s", tt.name, rep.Result)
		}
		vendortest.ReportNoSecrets(t, rep, is.ClientSecret)
	}
}
