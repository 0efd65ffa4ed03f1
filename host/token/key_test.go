package token

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/internal/devkey"
)

func devConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Defaults()
	cfg.Environment = config.Development
	cfg.ContentRoot = t.TempDir()
	return &cfg
}

func TestSigningKeyFromSettings(t *testing.T) {
	for _, env := range []string{config.Development, config.Production} {
		t.Run(env, func(t *testing.T) {
			cfg := devConfig(t)
			cfg.Environment = env
			cfg.Service.Security.Jwt.SigningKey = config.Secret("a configured key of at least 32 bytes")
			key, err := SigningKey(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(key) != "a configured key of at least 32 bytes" {
				t.Fatalf("key = %q", key)
			}
			if _, err := os.Stat(DevKeyPath(cfg)); !os.IsNotExist(err) {
				t.Fatalf("a development key file was written: %v", err)
			}
		})
	}
}

func TestSigningKeyRequiredInProduction(t *testing.T) {
	for _, env := range []string{config.Production, "Anything"} {
		t.Run(env, func(t *testing.T) {
			cfg := devConfig(t)
			cfg.Environment = env
			if _, err := SigningKey(cfg); err == nil || !strings.Contains(err.Error(), "SigningKey") {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat(DevKeyPath(cfg)); !os.IsNotExist(err) {
				t.Fatalf("a development key file was written in %s: %v", env, err)
			}
		})
	}
}

func TestDevKeyCreatedAndReused(t *testing.T) {
	for _, env := range []string{config.Development, config.Staging} {
		t.Run(env, func(t *testing.T) {
			cfg := devConfig(t)
			cfg.Environment = env
			key, err := SigningKey(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(key) != 32 {
				t.Fatalf("generated key has %d bytes", len(key))
			}
			path := filepath.Join(cfg.ContentRoot, "data", DevKeyFile)
			if DevKeyPath(cfg) != path {
				t.Fatalf("DevKeyPath = %s, want %s", DevKeyPath(cfg), path)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, want 0600", st.Mode().Perm())
			}
			again, err := SigningKey(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(key, again) {
				t.Fatal("the second start generated another key")
			}
			// Tokens signed before a restart verify after it.
			before, err := NewIssuer(key, "AdminKernel", 0)
			if err != nil {
				t.Fatal(err)
			}
			raw, _, err := before.Issue(Claims{UserID: 1, Account: "a", SessionID: "s"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			after, err := FromConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := after.Verify(raw); err != nil {
				t.Fatalf("token from before the restart: %v", err)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Fatalf("data directory holds %d entries, want only the key", len(entries))
			}
		})
	}
}

func TestDevKeyAbsoluteDataDir(t *testing.T) {
	cfg := devConfig(t)
	dir := filepath.Join(t.TempDir(), "elsewhere")
	cfg.Service.DataDir = dir
	if _, err := SigningKey(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DevKeyFile)); err != nil {
		t.Fatal(err)
	}
}

func TestDevKeyFileProblems(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		wantErr bool
	}{
		{"corrupt", "not base64 at all!", 0o600, true},
		{"too short", "c2hvcnQ", 0o600, true},
		{"empty", "", 0o600, true},
		{"wide permissions are narrowed", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\n", 0o644, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := devConfig(t)
			path := DevKeyPath(cfg)
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			key, err := SigningKey(cfg)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s", err, path)
				}
				got, _ := os.ReadFile(path)
				if string(got) != tt.content {
					t.Fatal("a broken key file was overwritten")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(key) != "0123456789abcdef0123456789abcdef" {
				t.Fatalf("key = %q", key)
			}
			if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// TestDevKeyConcurrentFirstStart: processes starting together agree on one
// key.
func TestDevKeyConcurrentFirstStart(t *testing.T) {
	cfg := devConfig(t)
	const n = 16
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = SigningKey(cfg) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("caller %d got another key", i)
		}
	}
	onDisk, err := devkey.Read(DevKeyPath(cfg), "signing key", MinKeyBytes)
	if err != nil || !bytes.Equal(onDisk, keys[0]) {
		t.Fatalf("the file holds another key (%v)", err)
	}
}
