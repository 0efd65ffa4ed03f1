package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
)

// childEnv makes TestProvidersTestChild run the command: the kit uses go
// test's runner, so it runs in a child process of its own.
const childEnv = "ADMINKERNEL_PROVIDERS_TEST_CHILD_ARGS"

// TestProvidersTestChild runs `adminkernel providers test` with the
// arguments in its environment (one per line) and exits with its status.
// Started by TestProvidersTestCommand; it does nothing otherwise.
func TestProvidersTestChild(t *testing.T) {
	args := os.Getenv(childEnv)
	if args == "" {
		t.Skip("run by TestProvidersTestCommand")
	}
	root := cli.New(host.Options{})
	root.SetArgs(strings.Split(args, "\n"))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestProvidersTestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("launches plugin binaries; not with -short")
	}
	dir := t.TempDir()
	install := func(code string) string {
		installPlugin(t, dir, code)
		return filepath.Join(dir, "adminkernel-provider-"+code)
	}
	settings := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"ClientId": "fake-client", "ClientSecret": "fake-secret-value", "Extra": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"ClientId": {"nested": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, bool) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProvidersTestChild$", "-test.count=1") //nolint:gosec // this test binary
		cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(append([]string{"providers", "test"}, args...), "\n"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err == nil
	}
	cases := []struct {
		name string
		args []string
		ok   bool
		want []string
	}{
		{"a good plugin passes", []string{install("fake_cli"), "--settings", settings}, true,
			[]string{"--- PASS: Conformance_fake_cli", "--- PASS: Conformance_fake_cli/Configure", "the plugin passed the conformance kit"}},
		{"--settings is required", []string{install("fake_nosettings")}, false,
			[]string{`required flag(s) "settings" not set`}},
		{"a plugin that reports another code fails", []string{install("liar"), "--settings", settings}, false,
			[]string{`Describe().Code = "someone_else", want "liar"`, "the plugin failed the conformance kit"}},
		{"a binary that is no plugin", []string{writeScript(t, dir, "adminkernel-provider-notaplugin"), "--settings", settings}, false,
			[]string{"starting"}},
		{"a badly named binary", []string{writeScript(t, dir, "acme"), "--settings", settings}, false,
			[]string{"is not named adminkernel-provider-<code>"}},
		{"a settings file with a nested value", []string{install("fake_bad"), "--settings", bad}, false,
			[]string{`the value of "ClientId" is not a string, number or boolean`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, ok := run(c.args...)
			if ok != c.ok {
				t.Errorf("exit ok = %v, want %v\n%s", ok, c.ok, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
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
