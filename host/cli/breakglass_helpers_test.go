package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// shared is a kernel and the settings a command needs to act on the same
// database and cache: the test's environment (t.Setenv) carries them to
// the command, as an operator's environment would.
type shared struct {
	k    *kerneltest.Kernel
	dir  string       // the command's content root
	opts host.Options // the command tree's (the kernel's modules)
}

// startShared starts a kernel on the settings in env (DbType and
// ConnectionString at least) and puts them in the test's environment for
// the commands. An empty DbType means SQLite in a temporary folder.
func startShared(t *testing.T, env map[string]string, modules ...host.Module) *shared {
	t.Helper()
	dir := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	if env["Service__Database__DbType"] == "" {
		env["Service__Database__DbType"] = "Sqlite"
		env["Service__Database__ConnectionString"] = "Data Source=" + filepath.Join(dir, "ak.db")
	}
	if _, ok := env["Service__Cache__Provider"]; !ok {
		// The in-process cache, whatever ADMINKERNEL_TEST_CACHE says:
		// these tests choose.
		env["Service__Cache__Provider"] = ""
	}
	env["Service__Security__Password__Pbkdf2Iterations"] = "100000"
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
		t.Setenv(k, v)
	}
	return &shared{k: kerneltest.Start(t, environ, modules...), dir: dir, opts: host.Options{Modules: modules}}
}

// cmd runs the command tree with stdin on the shared settings.
func (s *shared) cmd(stdin string, args ...string) (string, string, error) {
	s.k.T.Helper()
	return runIn(context.Background(), s.opts, stdin, append(args, "--content-root", s.dir, "--environment", "Development")...)
}

// runIn executes the command tree of opts with stdin and returns stdout, stderr
// and the error.
func runIn(ctx context.Context, opts host.Options, stdin string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd := cli.New(opts)
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

var generatedLine = regexp.MustCompile(`(?m)password \(shown only this once\): (\S+)$`)

// generated returns the password a command printed once, failing the test
// when there is none; the kernel's leak sweep then looks for it too.
func (s *shared) generated(out string) string {
	s.k.T.Helper()
	m := generatedLine.FindStringSubmatch(out)
	if m == nil {
		s.k.T.Fatalf("no generated password in the output:\n%s", out)
	}
	s.k.Leaks.Secrets = append(s.k.Leaks.Secrets, m[1])
	return m[1]
}

// decode unmarshals a command's --json output.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
}

// contract fetches the kernel's contract document.
func contract(t *testing.T, k *kerneltest.Kernel) []byte {
	t.Helper()
	resp, err := k.App().Test(httptest.NewRequestWithContext(t.Context(), "GET", "/openapi/v1.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi/v1.json = %d, %v", resp.StatusCode, err)
	}
	return body
}
