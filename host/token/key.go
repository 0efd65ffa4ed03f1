package token

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

	"github.com/adminkernel/kernel/config"
)

// DevKeyFile is the name of the generated development signing key, kept in
// Service:DataDir.
const DevKeyFile = "dev-jwt.key"

// devKeyBytes is the size of a generated key.
const devKeyBytes = 32

// Keys returns the key ring of Service:Security:Jwt: SigningKeys in order
// (each key's bytes as written, its Id or, without one, the derived id),
// or SigningKey as a ring of one key with the derived id
// (config.DerivedKeyID), so a key keeps its kid when it moves from
// SigningKey to an id-less SigningKeys entry. Both set is an error. With
// neither, Production fails (config validation reports this too); every
// other environment uses a development key generated once (32 bytes from
// crypto/rand) and kept, base64url-encoded, in
// <ContentRoot>/<DataDir>/dev-jwt.key with mode 0600, so tokens survive
// restarts.
func Keys(cfg *config.Config) ([]Key, error) {
	jwt := &cfg.Service.Security.Jwt
	switch {
	case jwt.SigningKey.IsSet() && len(jwt.SigningKeys) > 0:
		return nil, errors.New("Service:Security:Jwt:SigningKey and SigningKeys are both set; set one of them")
	case len(jwt.SigningKeys) > 0:
		keys := make([]Key, len(jwt.SigningKeys))
		for n, k := range jwt.SigningKeys {
			keys[n] = Key{ID: k.KeyID(), Secret: []byte(k.Key.Reveal())}
		}
		return keys, nil
	case jwt.SigningKey.IsSet():
		return []Key{{Secret: []byte(jwt.SigningKey.Reveal())}}, nil
	case cfg.IsProduction():
		return nil, fmt.Errorf("Service:Security:Jwt:SigningKey (or SigningKeys) is required in %s", cfg.Environment)
	}
	key, err := devKey(DevKeyPath(cfg))
	if err != nil {
		return nil, err
	}
	return []Key{{Secret: key}}, nil
}

// SigningKey returns the key that signs new access tokens: the first key
// of Keys.
func SigningKey(cfg *config.Config) ([]byte, error) {
	keys, err := Keys(cfg)
	if err != nil {
		return nil, err
	}
	return keys[0].Secret, nil
}

// DevKeyPath is where the development signing key is kept.
func DevKeyPath(cfg *config.Config) string {
	dir := cfg.Service.DataDir
	if dir == "" {
		dir = config.Defaults().Service.DataDir
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cfg.ContentRoot, dir)
	}
	return filepath.Join(dir, DevKeyFile)
}

// devKey reads the key file at path, creating it first when it is absent.
// Two processes starting together agree on one key: the file appears
// atomically with its full content (written to a temporary file, then
// hard-linked into place, which fails when the name exists).
func devKey(path string) ([]byte, error) {
	key, err := readDevKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create the directory of the development signing key: %w", err)
	}
	key = make([]byte, devKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate the development signing key: %w", err)
	}
	text := []byte(base64.RawURLEncoding.EncodeToString(key) + "\n")
	if err := createExclusive(path, text); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readDevKey(path) // another process was first
		}
		return nil, fmt.Errorf("write the development signing key %s: %w", path, err)
	}
	return key, nil
}

// createExclusive creates path with mode 0600 holding data, failing with
// fs.ErrExist when it exists.
func createExclusive(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dev-jwt-*.tmp") // mode 0600
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr = f.Write(data)
	return errors.Join(werr, f.Close())
}

// readDevKey reads and decodes a key file, narrowing its permissions to
// 0600 when they are wider.
func readDevKey(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimSpace(raw)))
	if err != nil || len(key) < MinKeyBytes {
		return nil, fmt.Errorf("the development signing key %s is not a base64url key of at least %d bytes; delete it to generate a new one", path, MinKeyBytes)
	}
	if runtime.GOOS != "windows" {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(path, 0o600) // best effort: the key is only used outside Production
		}
	}
	return key, nil
}
