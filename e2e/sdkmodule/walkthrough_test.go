package sdkmodule_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// hostOnly are module path prefixes of the kernel's dependencies that a
// vendor's plugin must never pull in through the SDK: the web framework,
// the ORM and migrations, SQL drivers, the Redis client, configuration,
// the command line, host metrics, spreadsheets, object storage, WebAuthn,
// OIDC and the metrics client.
var hostOnly = []string{
	"github.com/gofiber/",
	"entgo.io/",
	"ariga.io/atlas",
	"github.com/lib/pq",
	"github.com/go-sql-driver/mysql",
	"modernc.org/sqlite",
	"github.com/mattn/go-sqlite3",
	"github.com/jackc/pgx",
	"github.com/redis/go-redis",
	"github.com/knadh/koanf",
	"github.com/spf13/cobra",
	"github.com/shirou/gopsutil",
	"github.com/xuri/excelize",
	"github.com/minio/minio-go",
	"github.com/go-webauthn/",
	"github.com/coreos/go-oidc",
	"github.com/prometheus/client_golang",
	"github.com/getkin/kin-openapi",
	"github.com/adminkernel/kernel ", // the kernel module itself (the SDK is .../pluginsdk)
}

// repoRoot is the repository root: two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// fileBlocks returns the Go code blocks of a Markdown page introduced by a
// line naming the file ("`acme.go`:"), by file name.
func fileBlocks(t *testing.T, page string) map[string]string {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	intro := regexp.MustCompile("^`([A-Za-z0-9_./-]+\\.go)`:")
	blocks := map[string]string{}
	var name string
	var in bool
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case in && line == "```":
			blocks[name] = b.String()
			in, name = false, ""
			b.Reset()
		case in:
			b.WriteString(line + "\n")
		case line == "```go" && name != "":
			in = true
		case intro.MatchString(line):
			name = intro.FindStringSubmatch(line)[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// TestWalkthroughAsAVendorModule builds the walkthrough from an empty
// module, runs its tests (the conformance kit against the SDK's fake
// vendor, in process and over gRPC, with -race) and its build, and checks
// the module graph.
func TestWalkthroughAsAVendorModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module from scratch; not with -short")
	}
	root := repoRoot(t)
	blocks := fileBlocks(t, filepath.Join(root, "docs", "vendors", "plugins.md"))
	for _, want := range []string{"acme.go", "acme_test.go", "cmd/adminkernel-provider-acme/main.go"} {
		if blocks[want] == "" {
			t.Fatalf("docs/vendors/plugins.md has no code block for %s (found %d: %v)", want, len(blocks), keys(blocks))
		}
	}

	dir := t.TempDir()
	for name, src := range blocks {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=1")
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "go", args...) //nolint:gosec // the go tool with fixed arguments
		cmd.Dir = dir
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// Step 1 of the walkthrough, with the SDK of this checkout instead of
	// a release (docs/vendors/plugins.md, "Developing against a local SDK").
	gocmd("mod", "init", "example.com/acme-provider")
	gocmd("mod", "edit", "-require", "github.com/adminkernel/kernel/pluginsdk@v0.0.0",
		"-replace", "github.com/adminkernel/kernel/pluginsdk="+filepath.Join(root, "pluginsdk"))
	gocmd("mod", "tidy")
	gocmd("vet", "./...")
	out := gocmd("test", "-race", "-count=1", "-v", "./...")
	for _, want := range []string{"--- PASS: TestConformance/", "--- PASS: TestConformance/grpc/RoundTrip", "--- PASS: TestRenamedUserKeepsSubject", "--- PASS: TestBlockedUserIsDenied"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test of the walkthrough: no %q in its output:\n%s", want, out)
		}
	}
	// Step 5.
	bin := filepath.Join(dir, "adminkernel-provider-acme")
	gocmd("build", "-trimpath", "-o", bin, "./cmd/adminkernel-provider-acme")
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("the plugin binary: %v, %v", fi, err)
	}

	graph := gocmd("list", "-m", "all")
	mods := strings.Split(strings.TrimSpace(graph), "\n")
	if len(mods) < 5 {
		t.Fatalf("go list -m all answered only %d modules:\n%s", len(mods), graph)
	}
	var sdk bool
	for _, m := range mods {
		sdk = sdk || strings.HasPrefix(m, "github.com/adminkernel/kernel/pluginsdk ")
		for _, bad := range hostOnly {
			if strings.HasPrefix(m+" ", bad) {
				t.Errorf("the vendor module's graph holds %q, a dependency of the kernel (not of the SDK)", m)
			}
		}
	}
	if !sdk {
		t.Errorf("the vendor module's graph has no pluginsdk:\n%s", graph)
	}
	t.Logf("the vendor module's graph: %d modules", len(mods))
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
