package externalauth_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

func doctorPath(code string) string { return base + "/" + code + "/doctor" }

func checkOf(t *testing.T, rep doctor.Report, name string) doctor.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, rep.Checks)
	return doctor.Check{}
}

// The setup doctor through the API (issue 29 item 6): gated by menu 319's
// permission code, 42033 for an unknown code, the OIDC checks against the
// test issuer (good, and a wrong issuer), and no secret in any answer. The
// vendor checks through the API and the CLI, against the faithful vendor
// fakes, are in e2e/plugins (host may not import internal/vendorfake).
func TestDoctorAPI(t *testing.T) {
	is := oidctest.New(t)
	wrong := oidcEnv(is, 1, "wrong_iss")
	for i, kv := range wrong {
		if strings.Contains(kv, "__Authority=") {
			wrong[i] = strings.Replace(kv, "127.0.0.1", "localhost", 1)
		}
	}
	env := append(oidcEnv(is, 0, "corp"), wrong...)
	env = append(env,
		"Service__ExternalAuth__CallbackBaseUrl=https://kernel.example.com",
	)
	k := kerneltest.Start(t, env)
	k.Leaks.Secrets = append(k.Leaks.Secrets, is.ClientSecret, "Doc#Pass12345", "View#Pass12345")
	secrets := []string{is.ClientSecret}

	k.User("doc", "Doc#Pass12345", externalauth.DoctorPermission)
	k.User("viewer", "View#Pass12345", "GET:/api/v1/auth/external/providers/all")
	for _, tc := range []struct {
		name   string
		token  string
		status int
		code   int
	}{
		{"anonymous", "", 401, 40006},
		{"only the list", k.Login("viewer", "View#Pass12345").AccessToken, 403, 41001},
		{"granted", k.Login("doc", "Doc#Pass12345").AccessToken, 200, 0},
		{"super-admin", k.Admin(), 200, 0},
	} {
		t.Run("permission/"+tc.name, func(t *testing.T) {
			k.Do("POST", doctorPath("corp"), tc.token, nil).Expect(t, "doctor", tc.status, tc.code)
		})
	}
	k.Do("POST", doctorPath("nope"), k.Admin(), nil).Expect(t, "doctor nope", 200, 42033)

	run := func(code string) (doctor.Report, string) {
		t.Helper()
		r := k.Do("POST", doctorPath(code), k.Admin(), nil).Expect(t, "doctor "+code, 200, 0)
		var rep doctor.Report
		r.Decode(t, &rep)
		for _, s := range secrets {
			if strings.Contains(r.Raw, s) {
				t.Errorf("doctor %s answers a secret: %s", code, r.Raw)
			}
		}
		return rep, r.Raw
	}

	rep, _ := run("corp")
	if rep.Result != doctor.OK || rep.Source != "builtin" || rep.Status != "ready" {
		t.Errorf("corp = %+v, want every check ok", rep)
	}
	for _, name := range []string{"status", "settings", "discovery", "issuer", "jwks", "redirect"} {
		if c := checkOf(t, rep, name); c.Result != doctor.OK {
			t.Errorf("corp %s = %+v", name, c)
		}
	}
	if rep.RedirectURI != "https://kernel.example.com/api/v1/auth/external/corp/callback" || rep.TrustedDomain != "kernel.example.com" {
		t.Errorf("corp redirect = %q / %q", rep.RedirectURI, rep.TrustedDomain)
	}

	rep, _ = run("wrong_iss")
	if c := checkOf(t, rep, "issuer"); c.Result != doctor.Fail || c.MsgKey != "doctor.oidc.issuerMismatch" || !strings.Contains(c.Message, is.URL) || c.Hint == "" {
		t.Errorf("wrong_iss issuer = %+v", c)
	}
	if rep.Result != doctor.Fail {
		t.Errorf("wrong_iss result = %s", rep.Result)
	}
}
