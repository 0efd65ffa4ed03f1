package vendortest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Packages of plugin binaries the kernel's tests launch.
const (
	// CodeHostPlugin is the bundled GitHub plugin.
	CodeHostPlugin = "github.com/adminkernel/kernel/plugins/codehost/cmd/adminkernel-provider-code_host"
	// TestPlugin is the SDK's well-behaved test provider (it wants
	// ClientId and ClientSecret).
	TestPlugin = "github.com/adminkernel/kernel/pluginsdk/internal/testplugin"
)

// built caches one build per package for the whole test binary.
var built sync.Map // package -> func() (string, error)

// Plugin builds the plugin main package pkg (an import path, such as
// CodeHostPlugin) once per test binary and returns the binary's path; a
// failed build fails t. The binary lives in a temporary folder shared by
// the tests of the binary, so a test must not change it: Install copies it.
func Plugin(t testing.TB, pkg string) string {
	t.Helper()
	f, _ := built.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "vendortest-plugin-")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", bin, pkg) //nolint:gosec,noctx // the go tool with a package of this repository, shared by tests
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building %s: %w\n%s", pkg, err, out)
		}
		return bin, nil
	}))
	bin, err := f.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Install puts the binary of pkg (built once by Plugin) into dir as the
// plugin adminkernel-provider-<code> and returns its path.
func Install(t testing.TB, dir, code, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(Plugin(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, "adminkernel-provider-"+code)
	if err := os.WriteFile(to, b, 0o755); err != nil { //nolint:gosec // a plugin binary must be executable
		t.Fatal(err)
	}
	return to
}
