// Package password hashes and verifies passwords with PBKDF2-HMAC-SHA256.
// The iteration count and salt are recorded inside the hash string, so old
// hashes keep verifying after the configured count changes.
package password

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Hasher is the hashing contract. NeedsRehash reports whether a stored hash
// should be recomputed at the next successful login; implementations that
// have no opinion return false.
type Hasher interface {
	Hash(plain string) (string, error)
	Verify(hash, plain string) (bool, error)
	NeedsRehash(hash string) bool
}

const (
	scheme  = "pbkdf2-sha256"
	saltLen = 16
	keyLen  = 32
	// MinIterations is the effective floor of the configured count.
	MinIterations = 100000
)

// ErrMalformed reports a stored hash that is not in the kernel's format.
var ErrMalformed = errors.New("malformed password hash")

// PBKDF2 hashes with a fixed iteration count; its NeedsRehash reports hashes
// made with another count.
type PBKDF2 struct {
	iterations int
}

var _ Hasher = (*PBKDF2)(nil)

// New returns a hasher; counts below 100000 are raised to 100000.
func New(iterations int) *PBKDF2 {
	if iterations < MinIterations {
		iterations = MinIterations
	}
	return &PBKDF2{iterations: iterations}
}

// Iterations is the effective count new hashes use.
func (p *PBKDF2) Iterations() int { return p.iterations }

// Hash returns "pbkdf2-sha256$<iterations>$<salt>$<key>" (base64, no padding).
func (p *PBKDF2) Hash(plain string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha256.New, plain, salt, p.iterations, keyLen)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return scheme + "$" + strconv.Itoa(p.iterations) + "$" + enc.EncodeToString(salt) + "$" + enc.EncodeToString(key), nil
}

// Verify checks plain against a stored hash in constant time.
func (p *PBKDF2) Verify(hash, plain string) (bool, error) {
	iter, salt, want, err := parse(hash)
	if err != nil {
		return false, err
	}
	got, err := pbkdf2.Key(sha256.New, plain, salt, iter, len(want))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// NeedsRehash reports a hash made with a different iteration count.
func (p *PBKDF2) NeedsRehash(hash string) bool {
	iter, _, _, err := parse(hash)
	return err != nil || iter != p.iterations
}

// IterationsOf returns the iteration count recorded in a hash.
func IterationsOf(hash string) (int, error) {
	iter, _, _, err := parse(hash)
	return iter, err
}

func parse(hash string) (iter int, salt, key []byte, err error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != scheme {
		return 0, nil, nil, ErrMalformed
	}
	iter, err = strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > 100_000_000 {
		return 0, nil, nil, ErrMalformed
	}
	enc := base64.RawStdEncoding
	if salt, err = enc.DecodeString(parts[2]); err != nil || len(salt) == 0 {
		return 0, nil, nil, ErrMalformed
	}
	if key, err = enc.DecodeString(parts[3]); err != nil || len(key) < 16 {
		return 0, nil, nil, ErrMalformed
	}
	return iter, salt, key, nil
}

// Alphabet is the character set of generated passwords: letters and digits
// without the easily confused 0 O 1 l I.
const Alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789"

// Generate returns n characters drawn uniformly from Alphabet with a
// cryptographically secure source.
func Generate(n int) (string, error) {
	var b strings.Builder
	b.Grow(n)
	max := big.NewInt(int64(len(Alphabet)))
	for range n {
		i, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generating a password: %w", err)
		}
		b.WriteByte(Alphabet[i.Int64()])
	}
	return b.String(), nil
}
