package mfa

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/internal/devkey"
)

// Stored seeds look like "v1.<key id>.<base64url(nonce | ciphertext)>".
const (
	sealVersion = "v1"
	keyBytes    = 32
	maxKeyID    = 32
	// DevKeyFile is the generated development key, kept in Service:DataDir.
	DevKeyFile = "dev-totp.key"
	devKeyID   = "dev"
)

// ErrNoKey: Production without Service:Security:Totp:EncryptionKeys.
var ErrNoKey = errors.New("Service:Security:Totp:EncryptionKeys is not set: TOTP cannot be bound or checked in Production without an encryption key")

// Key is one key of the ring.
type Key struct {
	ID     string
	Secret []byte // 32 bytes
}

// KeyRing encrypts with its first key and decrypts with any of them.
type KeyRing struct {
	first string
	aeads map[string]cipher.AEAD
}

// NewKeyRing checks the keys (ids valid and distinct, 32 bytes each).
func NewKeyRing(keys []Key) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, ErrNoKey
	}
	r := &KeyRing{first: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for n, k := range keys {
		if !validKeyID(k.ID) {
			return nil, fmt.Errorf("Service:Security:Totp:EncryptionKeys:%d:Id must be 1 to %d letters, digits, '_' or '-'", n, maxKeyID)
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("Service:Security:Totp:EncryptionKeys:%d:Id %q is used twice", n, k.ID)
		}
		if len(k.Secret) != keyBytes {
			return nil, fmt.Errorf("Service:Security:Totp:EncryptionKeys:%d:Key must be %d bytes (base64), not %d", n, keyBytes, len(k.Secret))
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		r.aeads[k.ID] = aead
	}
	return r, nil
}

func validKeyID(id string) bool {
	if id == "" || len(id) > maxKeyID {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Seal encrypts plain; aad (the owner's id) binds the value to its row.
func (r *KeyRing) Seal(plain, aad []byte) (string, error) {
	aead := r.aeads[r.first]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := aead.Seal(nonce, nonce, plain, aad)
	return sealVersion + "." + r.first + "." + base64.RawURLEncoding.EncodeToString(out), nil
}

// errSealed: a stored value this ring cannot open.
var errSealed = errors.New("the stored TOTP seed cannot be decrypted (unknown key id or corrupted value)")

// Open decrypts a value of Seal made under any key of the ring.
func (r *KeyRing) Open(sealed string, aad []byte) ([]byte, error) {
	parts := strings.SplitN(sealed, ".", 3)
	if len(parts) != 3 || parts[0] != sealVersion {
		return nil, errSealed
	}
	aead, ok := r.aeads[parts[1]]
	if !ok {
		return nil, fmt.Errorf("%w: key %q is not in Service:Security:Totp:EncryptionKeys", errSealed, parts[1])
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errSealed
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], aad)
	if err != nil {
		return nil, errSealed
	}
	return plain, nil
}

// KeyOf returns the id of the key a sealed value was made with ("" when
// malformed).
func KeyOf(sealed string) string {
	parts := strings.SplitN(sealed, ".", 3)
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

// KeysFromConfig returns the ring's keys: Service:Security:Totp:
// EncryptionKeys, or — outside Production, when none are set — a
// development key generated once under DataDir (dev-totp.key, mode 0600).
// Production without keys gives ErrNoKey.
func KeysFromConfig(cfg *config.Config) ([]Key, error) {
	conf := cfg.Service.Security.Totp.EncryptionKeys
	if len(conf) > 0 {
		keys := make([]Key, len(conf))
		for n, k := range conf {
			secret, err := decodeKey(k.Key.Reveal())
			if err != nil {
				return nil, fmt.Errorf("Service:Security:Totp:EncryptionKeys:%d:Key: %w", n, err)
			}
			keys[n] = Key{ID: k.ID, Secret: secret}
		}
		return keys, nil
	}
	if cfg.IsProduction() {
		return nil, ErrNoKey
	}
	secret, err := devkey.Load(filepath.Join(cfg.DataPath(), DevKeyFile), "TOTP key", keyBytes)
	if err != nil {
		return nil, err
	}
	return []Key{{ID: devKeyID, Secret: secret}}, nil
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}
