//go:build !unit

package replicatest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain owns the directory of the adminkernel binary, built once per
// run by the first test that needs it, and removes it at the end.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "replicatest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds ./host/cmd/adminkernel (once) and returns its path.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is not on PATH: %w", err)
			return
		}
		binPath = filepath.Join(binDir, "adminkernel")
		cmd := exec.Command(goBin, "build", "-o", binPath, "github.com/adminkernel/kernel/host/cmd/adminkernel")
		// The test's own build settings, so the build cache serves most of
		// it.
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build adminkernel: %w\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}
