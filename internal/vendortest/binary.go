package vendortest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Binary builds the plugin binary of the calling package's
// cmd/adminkernel-provider-<code> into a directory of the test and returns
// its path, for providertest.Launch. It runs go build, so the test must run
// from the package directory (go test does).
func Binary(t *testing.T, code string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "adminkernel-provider-"+code)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", bin, "./cmd/adminkernel-provider-"+code) //nolint:gosec // the go tool with a package of this repository
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the %s plugin: %v\n%s", code, err, out)
	}
	return bin
}
