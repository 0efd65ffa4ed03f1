package token

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/internal/devkey"
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
	key, err := devkey.Load(DevKeyPath(cfg), "signing key", max(devKeyBytes, MinKeyBytes))
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
