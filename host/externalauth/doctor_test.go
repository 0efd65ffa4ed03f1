package externalauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

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
// permission code, 40037 for an unknown code, the OIDC checks against the
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
	k.Do("POST", doctorPath("nope"), k.Admin(), nil).Expect(t, "doctor nope", 200, 40037)

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

// A second doctor run for a provider whose run is under way answers 40038
// (the external-login range; 42034 before), and the provider is free again
// once the first run ends.
func TestDoctorBusy(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	var armed atomic.Bool
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if armed.Load() {
			select {
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(slow.Close)
	p := "Service__ExternalAuth__Oidc__0__"
	k := kerneltest.Start(t, []string{
		p + "Code=slow", p + "Authority=" + slow.URL, p + "ClientId=slow-client", p + "ClientSecret=slow-secret-value",
		"Service__ExternalAuth__CallbackBaseUrl=https://kernel.example.com",
	})
	admin := k.Admin()
	armed.Store(true)
	first := make(chan int, 1)
	go func() { // not through k.Do: no t.Fatal off the test's goroutine
		req := httptest.NewRequestWithContext(t.Context(), "POST", doctorPath("slow"), nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
		if err != nil {
			first <- -1
			return
		}
		defer resp.Body.Close()
		var env struct {
			Code int `json:"code"`
		}
		if json.NewDecoder(resp.Body).Decode(&env) != nil {
			env.Code = -2
		}
		first <- env.Code
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the first doctor run never reached the issuer")
	}
	k.Do("POST", doctorPath("slow"), admin, nil).Expect(t, "doctor while running", 200, 40038)
	close(release)
	armed.Store(false)
	if code := <-first; code != 0 {
		t.Errorf("the first run answered code %d, want a report", code)
	}
	k.Do("POST", doctorPath("slow"), admin, nil).Expect(t, "doctor after the run", 200, 0)
}
