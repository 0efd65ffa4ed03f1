package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
)

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
	installPlugin(t, dir, "gaudy")
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
		len(d.KernelVersions) == 0 || d.SHA256 != fileSum(t, path) || len(d.Problems) != 0 ||
		d.Icon != "mdi:test-tube" || d.Brand != "fake" || len(d.Warnings) != 0 {
		t.Errorf("describe = %+v", d)
	}
	text, _, err := run(t, context.Background(), host.Options{}, "providers", "describe", path)
	if err != nil || !strings.Contains(text, "PROTOCOL") || !strings.Contains(text, "Fake acme") || !strings.Contains(text, d.SHA256) ||
		!strings.Contains(text, "BRAND     fake") || strings.Contains(text, "WARNINGS") {
		t.Errorf("describe (text) = %q, %v", text, err)
	}
	// An invalid icon and brand are warnings, not problems: the host
	// launches the plugin and drops them.
	text, _, err = run(t, context.Background(), host.Options{}, "providers", "describe", filepath.Join(dir, "adminkernel-provider-gaudy"))
	if err != nil || !strings.Contains(text, "WARNINGS") || !strings.Contains(text, `the icon "https://cdn.example/gaudy.svg"`) ||
		!strings.Contains(text, `the brand "Gaudy Brand"`) || !strings.Contains(text, "PROBLEMS  -") {
		t.Errorf("describe gaudy = %q, %v; want the two warnings and no problem", text, err)
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
