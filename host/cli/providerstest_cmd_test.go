package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/internal/vendortest"
)

// leakSecretPlugin is the code_host plugin with its client secret added to
// every authorization URL (scripts/providers-cli.sh runs it too).
const leakSecretPlugin = "github.com/adminkernel/kernel/e2e/providerscli/leaksecret"

var checkCount = regexp.MustCompile(`(?m)^(\d+) checks run, (\d+) passed, (\d+) failed$`)

// TestProvidersTestCommand runs `adminkernel providers test` in process:
// the kit runs with its own reporter, not go test's runner, so what it
// checks here it checks in the shipped binary (scripts/providers-cli.sh
// runs the built binary against the same kinds of plugin).
func TestProvidersTestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("launches plugin binaries; not with -short")
	}
	dir := t.TempDir()
	install := func(code string) string {
		installPlugin(t, dir, code)
		return filepath.Join(dir, "adminkernel-provider-"+code)
	}
	const secret = "fake-secret-value"
	settings := filepath.Join(dir, "settings.json")
	write(t, settings, `{"ClientId": "fake-client", "ClientSecret": "`+secret+`", "Extra": 3}`)
	empty := filepath.Join(dir, "empty.json")
	write(t, empty, `{}`)
	bad := filepath.Join(dir, "bad.json")
	write(t, bad, `{"ClientId": {"nested": true}}`)
	leakDir := t.TempDir()
	leaky := vendortest.Install(t, leakDir, "code_host", leakSecretPlugin)

	// Every check the kit runs without a test vendor.
	allChecks := []string{"Describe", "Configure/Accepted", "AuthorizeURL", "ExchangeVendorError", "ExchangeGarbage",
		"Concurrency", "Cancellation/canceled", "Cancellation/expired"}
	cases := []struct {
		name string
		args []string
		ok   bool
		// runs is the number of checks the report must count (-1: no
		// count, the binary did not start or the command refused its
		// arguments).
		runs int
		want []string
	}{
		{"a good plugin passes every check", []string{install("fake_cli"), "--settings", settings}, true, len(allChecks),
			append(prefixed("--- PASS: ", allChecks), "8 checks run, 8 passed, 0 failed", "the plugin passed the conformance kit (8 checks)")},
		// Cancellation stops before its subchecks: counted as one.
		{"empty settings fail", []string{install("fake_empty"), "--settings", empty}, false, len(allChecks) - 1,
			[]string{"--- FAIL: Configure/Accepted", "Configure(Settings) = ", "the plugin failed the conformance kit"}},
		{"a plugin leaking its secret into the login URL fails", []string{leaky, "--settings", settings}, false, len(allChecks),
			[]string{"--- FAIL: AuthorizeURL", "AuthorizeURL URL contains the value of the secret setting ClientSecret", "--- PASS: Describe", "the plugin failed the conformance kit"}},
		{"--settings is required", []string{install("fake_nosettings")}, false, -1,
			[]string{`required flag(s) "settings" not set`}},
		{"a plugin that reports another code fails", []string{install("liar"), "--settings", settings}, false, len(allChecks),
			[]string{"--- FAIL: Describe", `Describe().Code = "someone_else", want "liar"`, "the plugin failed the conformance kit"}},
		{"a plugin declaring an invalid icon and brand fails Describe only", []string{install("gaudy"), "--settings", settings}, false, len(allChecks),
			[]string{"--- FAIL: Describe", `Describe().Icon = "https://cdn.example/gaudy.svg"`, `Describe().Brand = "Gaudy Brand"`, "--- PASS: AuthorizeURL", "8 checks run, 7 passed, 1 failed"}},
		{"a binary that is no plugin", []string{writeScript(t, dir, "adminkernel-provider-notaplugin"), "--settings", settings}, false, -1,
			[]string{"starting"}},
		{"a binary that exits at once", []string{writeExit(t, dir, "adminkernel-provider-exits"), "--settings", settings}, false, -1,
			[]string{"starting"}},
		{"a badly named binary", []string{writeScript(t, dir, "acme"), "--settings", settings}, false, -1,
			[]string{"is not named adminkernel-provider-<code>"}},
		{"a settings file with a nested value", []string{install("fake_bad"), "--settings", bad}, false, -1,
			[]string{`the value of "ClientId" is not a string, number or boolean`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := run(t, context.Background(), host.Options{}, append([]string{"providers", "test"}, c.args...)...)
			out := stdout + stderr
			if err != nil {
				out += "\nError: " + err.Error()
			}
			if (err == nil) != c.ok {
				t.Errorf("error = %v, want ok %v\n%s", err, c.ok, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, secret) {
				t.Errorf("the report shows the client secret:\n%s", out)
			}
			m := checkCount.FindStringSubmatch(out)
			switch {
			case c.runs < 0 && m != nil:
				t.Errorf("a run that cannot start reports %q", m[0])
			case c.runs >= 0 && m == nil:
				t.Errorf("no count of checks in the report:\n%s", out)
			case c.runs >= 0:
				if n, _ := strconv.Atoi(m[1]); n != c.runs {
					t.Errorf("%s checks run, want %d:\n%s", m[1], c.runs, out)
				}
				if passed, _ := strconv.Atoi(m[2]); c.ok != (passed == c.runs) {
					t.Errorf("%s of %s checks passed, want ok %v", m[2], m[1], c.ok)
				}
			}
		})
	}
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// writeScript writes an executable that is not a plugin.
func writeScript(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho not a plugin\nexit 1\n"), 0o700); err != nil { //nolint:gosec // must be executable
		t.Fatal(err)
	}
	return path
}

// writeExit writes an executable that exits at once with status 0.
func writeExit(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil { //nolint:gosec // must be executable
		t.Fatal(err)
	}
	return path
}
