package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/internal/vendorfake"
)

// codeHostPlugin builds the bundled code_host plugin once.
var codeHostPlugin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "cli-doctor-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "adminkernel-provider-code_host")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/adminkernel/kernel/plugins/codehost/cmd/adminkernel-provider-code_host")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// providers describe <binary> starts a plugin without configuring it and
// prints its descriptor, protocol versions and SHA-256; a plugin the host
// would refuse (its code is not its file name's) exits non-zero saying why.
func TestProvidersDescribe(t *testing.T) {
	dir := t.TempDir()
	installPlugin(t, dir, "acme")
	installPlugin(t, dir, "liar")
	path := filepath.Join(dir, "adminkernel-provider-acme")
	out, stderr, err := run(t, context.Background(), host.Options{}, "providers", "describe", "--json", path)
	if err != nil {
		t.Fatalf("describe = %v; stderr %s", err, stderr)
	}
	var d pluginhost.Description
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("describe output %q: %v", out, err)
	}
	if d.Code != "acme" || d.FileCode != "acme" || d.DisplayName != "Fake acme" || d.ProtocolVersion != 1 || d.NegotiatedVersion != 1 ||
		len(d.KernelVersions) == 0 || d.SHA256 != fileSum(t, path) || len(d.Problems) != 0 {
		t.Errorf("describe = %+v", d)
	}
	text, _, err := run(t, context.Background(), host.Options{}, "providers", "describe", path)
	if err != nil || !strings.Contains(text, "PROTOCOL") || !strings.Contains(text, "Fake acme") || !strings.Contains(text, d.SHA256) {
		t.Errorf("describe (text) = %q, %v", text, err)
	}
	_, _, err = run(t, context.Background(), host.Options{}, "providers", "describe", filepath.Join(dir, "adminkernel-provider-liar"))
	if err == nil || !strings.Contains(err.Error(), "file name says") {
		t.Errorf("describe liar = %v, want the code mismatch", err)
	}
	if _, _, err := run(t, context.Background(), host.Options{}, "providers", "describe", filepath.Join(dir, "nothing")); err == nil {
		t.Error("describe of a missing file succeeded")
	}
}

// Service:ExternalAuth:RequirePins refuses the unpinned plugin in the
// providers listing (with and without launching), and a pin under a
// misspelt code is a missing row that fails --check.
func TestProvidersRequirePins(t *testing.T) {
	dir := t.TempDir()
	installPlugin(t, dir, "acme")
	installPlugin(t, dir, "beta")
	t.Setenv("Service__ExternalAuth__PluginDir", dir)
	for _, code := range []string{"acme", "beta"} {
		t.Setenv("Service__ExternalAuth__Plugins__"+code+"__ClientId", code+"-client")
		t.Setenv("Service__ExternalAuth__Plugins__"+code+"__ClientSecret", code+"-secret")
	}
	t.Setenv("Service__ExternalAuth__PluginSha256__acme", fileSum(t, filepath.Join(dir, "adminkernel-provider-acme")))
	t.Setenv("Service__ExternalAuth__PluginSha256__acmee", fileSum(t, filepath.Join(dir, "adminkernel-provider-acme")))
	t.Setenv("Service__ExternalAuth__RequirePins", "true")
	for _, mode := range [][]string{nil, {"--no-launch"}} {
		rows, err := providerRows(t, append([]string{"--environment", "Development", "--check"}, mode...)...)
		acme, _ := rowOf(rows, "acme")
		beta, _ := rowOf(rows, "beta")
		stray, _ := rowOf(rows, "acmee")
		wantAcme := "ready"
		if mode != nil {
			wantAcme = "found"
		}
		if acme.Status != wantAcme || !acme.Pinned {
			t.Errorf("%v: acme = %+v", mode, acme)
		}
		if beta.Status != "not launched" || !strings.Contains(beta.Detail, "RequirePins") {
			t.Errorf("%v: beta = %+v, want not launched for RequirePins", mode, beta)
		}
		if stray.Status != "missing" || !strings.Contains(stray.Detail, "misspelt") {
			t.Errorf("%v: acmee = %+v, want a missing row for the stray pin", mode, stray)
		}
		if err == nil || !strings.Contains(err.Error(), "beta") || !strings.Contains(err.Error(), "acmee") {
			t.Errorf("%v: --check = %v, want a failure naming beta and acmee", mode, err)
		}
	}
}

// providers doctor <code> with the bundled code_host plugin against the
// faithful GitHub fake: every check passes; after the secret is reset at
// the vendor the credentials check fails and the command exits non-zero;
// no secret is printed either way; an unknown code is an error.
func TestProvidersDoctor(t *testing.T) {
	bin, err := codeHostPlugin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyBin(t, bin, filepath.Join(dir, "adminkernel-provider-code_host"))
	gh := vendorfake.NewGitHub(t)
	t.Setenv("Service__ExternalAuth__PluginDir", dir)
	t.Setenv("Service__ExternalAuth__CallbackBaseUrl", "https://kernel.example.com")
	t.Setenv("Service__ExternalAuth__CodeHost__ClientId", gh.ClientID)
	t.Setenv("Service__ExternalAuth__CodeHost__ClientSecret", gh.Secret)
	t.Setenv("Service__ExternalAuth__CodeHost__WebBase", gh.URL())
	t.Setenv("Service__ExternalAuth__CodeHost__ApiBase", gh.URL())
	secret := gh.Secret

	doc := func(args ...string) (doctor.Report, string, error) {
		t.Helper()
		out, stderr, err := run(t, context.Background(), host.Options{}, append([]string{"providers", "doctor", "--content-root", t.TempDir(), "--environment", "Development"}, args...)...)
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

func copyBin(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil { //nolint:gosec // a plugin binary must be executable
		t.Fatal(err)
	}
}
