// Package devkey keeps the keys the kernel generates for itself outside
// Production (the JWT signing key, the TOTP seed key, the file-link key):
// random bytes, base64url-encoded in a 0600 file under the data directory.
// Replicas or processes that start together agree on one key: the file
// appears atomically with its full content (written to a temporary file,
// then hard-linked into place, which fails when the name exists), so none
// reads a half-written file.
package devkey

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Load reads the key at path, creating it with size random bytes when it
// is absent. what names the key in errors ("signing key").
func Load(path, what string, size int) ([]byte, error) {
	key, err := Read(path, what, size)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("create the directory of the development %s: %w", what, err)
	}
	key = make([]byte, size)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate the development %s: %w", what, err)
	}
	text := []byte(base64.RawURLEncoding.EncodeToString(key) + "\n")
	if err := createExclusive(path, text); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Read(path, what, size) // another process was first
		}
		return nil, fmt.Errorf("write the development %s %s: %w", what, path, err)
	}
	return key, nil
}

// Read reads and decodes a key file of at least size bytes, narrowing its
// permissions to 0600 when they are wider. A missing file gives an error
// wrapping fs.ErrNotExist.
func Read(path, what string, size int) ([]byte, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: a file under the configured data directory
	if err != nil {
		return nil, err
	}
	key, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimSpace(raw)))
	if err != nil || len(key) < size {
		return nil, fmt.Errorf("the development %s %s is not a base64url key of at least %d bytes; delete it to generate a new one", what, path, size)
	}
	if runtime.GOOS != "windows" {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(path, 0o600) // best effort: the key is only used outside Production
		}
	}
	return key, nil
}

// createExclusive creates path with mode 0600 holding data, failing with
// fs.ErrExist when it exists.
func createExclusive(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".devkey-*.tmp") // mode 0600
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() { _ = os.Remove(name) }() // after the link, or on failure
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return err
	}
	if err := os.Chmod(name, 0o600); err != nil {
		return err
	}
	lerr := os.Link(name, path)
	if lerr == nil || errors.Is(lerr, fs.ErrExist) {
		return lerr
	}
	// No hard links on this file system: create the file exclusively.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G304: as above
	if err != nil {
		return err
	}
	_, werr = f.Write(data)
	return errors.Join(werr, f.Close())
}
