package vendortest

import (
	"encoding/json"
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/internal/vendorfake"
)

// DoctorEntry is a ready registry entry of code from a source of kind, as
// the setup doctor's target.
func DoctorEntry(code string, kind idp.Kind) idp.Entry {
	return idp.Entry{Code: code, Status: idp.Ready, Source: idp.Source{Kind: kind, Name: "test"}}
}

// ClosedBase is an http base URL on which nothing listens.
func ClosedBase(t testing.TB) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

// Check returns the check called name of a doctor report; it fails t
// when the report has none.
func Check(t testing.TB, rep doctor.Report, name string) doctor.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, rep.Checks)
	return doctor.Check{}
}

// ReportNoSecrets fails t when any of secrets appears anywhere in the
// report (its JSON form, as the API and the CLI answer it).
func ReportNoSecrets(t testing.TB, rep doctor.Report, secrets ...string) {
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

// CodeHostEnv is the environment that configures the code_host provider
// against the GitHub fake, with the public callback base callbackBase.
func CodeHostEnv(gh *vendorfake.GitHub, callbackBase string) map[string]string {
	gh.Lock()
	defer gh.Unlock()
	return map[string]string{
		"Service__ExternalAuth__CallbackBaseUrl":        callbackBase,
		"Service__ExternalAuth__CodeHost__ClientId":     gh.ClientID,
		"Service__ExternalAuth__CodeHost__ClientSecret": gh.Secret,
		"Service__ExternalAuth__CodeHost__WebBase":      gh.URL(),
		"Service__ExternalAuth__CodeHost__ApiBase":      gh.URL(),
	}
}

// Environ turns env into KEY=value lines (sorted), for a kernel's or a
// process's environment.
func Environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Setenv sets env for the test (t.Setenv: the test must not be parallel).
func Setenv(t *testing.T, env map[string]string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
}
