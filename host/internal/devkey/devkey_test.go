package devkey_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host/internal/devkey"
)

// TestLoadAgreesUnderConcurrency: callers racing to create the key all get
// the one that landed on disk (none reads a half-written file).
func TestLoadAgreesUnderConcurrency(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "sub", "k.key")
		const n = 8
		keys := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { keys[i], errs[i] = devkey.Load(path, "test key", 32) })
		}
		wg.Wait()
		onDisk, err := devkey.Read(path, "test key", 32)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i := range n {
			if errs[i] != nil || !bytes.Equal(keys[i], onDisk) {
				t.Fatalf("round %d: caller %d got %x (%v), the file holds %x", round, i, keys[i], errs[i], onDisk)
			}
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("round %d: mode %v (%v), want 0600", round, st.Mode().Perm(), err)
		}
	}
}

func TestReadRefusesDamagedOrShortKeys(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not base64": "!!!!\n",
		"too short":  "AAAA\n",
		"empty":      "",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := devkey.Load(path, "test key", 32); err == nil || !strings.Contains(err.Error(), "delete it to generate a new one") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
