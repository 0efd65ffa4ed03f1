//go:build !unit

package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
)

// oapiCodegen is the client generator the contract document is tried with
// (fetched from the module proxy by go run).
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// TestContractDocumentGeneratesAClient generates a Go client from
// /openapi/v1.json with oapi-codegen and compiles it: operation ids that
// collide or are not identifiers, or schemas a generator cannot read, fail
// here (issue 28).
func TestContractDocumentGeneratesAClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs the module proxy and a few minutes")
	}
	k, _ := start(t, load(t, t.TempDir(), config.Development))
	status, doc := get(t, k, "/openapi/v1.json")
	if status != 200 {
		t.Fatalf("/openapi/v1.json = %d", status)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("openapi.json", string(doc))
	write("go.mod", "module akclient\n\ngo 1.24\n")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("run", oapiCodegen, "-generate", "types,client", "-package", "akclient", "-o", "client.go", "openapi.json")
	src, err := os.ReadFile(filepath.Join(dir, "client.go"))
	if err != nil {
		t.Fatal(err)
	}
	// A few operations a client of the kernel calls, by their ids.
	for _, fn := range []string{"func (c *Client) UserUserPage(", "func (c *Client) AuthPasswordLogin(", "func (c *Client) LogOperationLog("} {
		if !strings.Contains(string(src), fn) {
			t.Errorf("the generated client has no %s…", fn)
		}
	}
	if !regexp.MustCompile(`\bCurrent\s+\*int32\b`).Match(src) {
		t.Error("the generated client has no paging parameter Current *int32")
	}
	if os.Getenv("AK_KEEP_CLIENT") != "" {
		_ = os.WriteFile(os.Getenv("AK_KEEP_CLIENT"), src, 0o600)
	}
	run("mod", "tidy")
	run("vet", "./...")
}
