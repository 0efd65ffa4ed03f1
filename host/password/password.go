// Package password hashes and verifies passwords with PBKDF2-HMAC-SHA256.
// The iteration count and salt are recorded inside the hash string, so old
// hashes keep verifying after the configured count changes.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Hasher is the hashing contract of the kernel: HashContext makes a stored
// hash, VerifyContext checks a password against one. The context bounds a
// wait (the kernel's PBKDF2 computes on a bounded pool). A consumer plugs
// its own through host.Options.PasswordHasher, typically to verify hashes
// migrated from another system and let the kernel rehash them at login.
type Hasher interface {
	HashContext(ctx context.Context, plain string) (string, error)
	VerifyContext(ctx context.Context, hash, plain string) (bool, error)
}

// Rehasher is the optional NeedsRehash operation of a Hasher: it reports
// whether a stored hash should be recomputed (with HashContext) at the
// user's next successful login. A Hasher without it never asks for a
// rehash: the contract's default implementation returns false.
type Rehasher interface {
	NeedsRehash(hash string) bool
}

// Decoyer is the optional Decoy operation of a Hasher: a stored hash that
// no password matches and whose verification costs what a real one's does
// (the login of an unknown account verifies against it, so that it takes
// as long as a wrong password).
type Decoyer interface {
	Decoy() (string, error)
}

// DecoyWith returns h's Decoy, or, for a hasher without one (a consumer's,
// host.Options.PasswordHasher), the hash of a random string (one full
// hash).
func DecoyWith(ctx context.Context, h Hasher) (string, error) {
	if d, ok := h.(Decoyer); ok {
		return d.Decoy()
	}
	buf := make([]byte, 16)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	return h.HashContext(ctx, hex.EncodeToString(buf))
}

// NeedsRehash asks h's Rehasher, false when h has none.
func NeedsRehash(h Hasher, hash string) bool {
	r, ok := h.(Rehasher)
	return ok && r.NeedsRehash(hash)
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
// made with another count. With a pool (WithLimits) every PBKDF2
// computation waits for one of the pool's slots, so a login storm cannot
// take every CPU; without one (New) it computes in the caller's goroutine.
type PBKDF2 struct {
	iterations int
	pool       *Pool
}

var (
	_ Hasher   = (*PBKDF2)(nil)
	_ Rehasher = (*PBKDF2)(nil)
	_ Decoyer  = (*PBKDF2)(nil)
)

// New returns a hasher without a pool; counts below 100000 are raised to
// 100000.
func New(iterations int) *PBKDF2 {
	if iterations < MinIterations {
		iterations = MinIterations
	}
	return &PBKDF2{iterations: iterations}
}

// WithLimits returns a copy of p whose computations run on a new pool with
// the given limits.
func (p *PBKDF2) WithLimits(l Limits) *PBKDF2 {
	return &PBKDF2{iterations: p.iterations, pool: NewPool(l)}
}

// Iterations is the effective count new hashes use.
func (p *PBKDF2) Iterations() int { return p.iterations }

// Pool returns the hasher's pool (nil without one).
func (p *PBKDF2) Pool() *Pool { return p.pool }

// Stats returns the pool's counters (zero without a pool).
func (p *PBKDF2) Stats() Stats {
	if p.pool == nil {
		return Stats{}
	}
	return p.pool.Stats()
}

// run computes fn on the pool, or directly without one.
func (p *PBKDF2) run(ctx context.Context, fn func()) error {
	if p.pool == nil {
		fn()
		return nil
	}
	return p.pool.Do(ctx, fn)
}

// Hash is HashContext without a caller context (the wait is still bounded
// by the pool's queue and MaxWait).
func (p *PBKDF2) Hash(plain string) (string, error) {
	return p.HashContext(context.Background(), plain)
}

// HashContext returns "pbkdf2-sha256$<iterations>$<salt>$<key>" (base64,
// no padding). With a pool it may be refused (Refused(err)) without
// hashing.
func (p *PBKDF2) HashContext(ctx context.Context, plain string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	var k []byte
	if err := p.run(ctx, func() { k = key(plain, salt, p.iterations, keyLen) }); err != nil {
		return "", err
	}
	return encode(p.iterations, salt, k), nil
}

// encode is the stored form "pbkdf2-sha256$<iterations>$<salt>$<key>".
func encode(iter int, salt, k []byte) string {
	enc := base64.RawStdEncoding
	return scheme + "$" + strconv.Itoa(iter) + "$" + enc.EncodeToString(salt) + "$" + enc.EncodeToString(k)
}

// Decoy returns a stored hash with p's iteration count, a random salt and a
// random key, computed without hashing (cheap at start-up): verifying a
// password against it costs exactly what verifying against a real hash
// costs, and matches no password (a PBKDF2 output would have to equal 32
// random bytes).
func (p *PBKDF2) Decoy() (string, error) {
	buf := make([]byte, saltLen+keyLen)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	return encode(p.iterations, buf[:saltLen], buf[saltLen:]), nil
}

// Verify is VerifyContext without a caller context.
func (p *PBKDF2) Verify(hash, plain string) (bool, error) {
	return p.VerifyContext(context.Background(), hash, plain)
}

// VerifyContext checks plain against a stored hash in constant time. A
// malformed hash is reported without waiting for the pool; with a pool the
// check may be refused (Refused(err)), which says nothing about the
// password.
func (p *PBKDF2) VerifyContext(ctx context.Context, hash, plain string) (bool, error) {
	iter, salt, want, err := parse(hash)
	if err != nil {
		return false, err
	}
	var got []byte
	if err := p.run(ctx, func() { got = key(plain, salt, iter, len(want)) }); err != nil {
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

// Generated-password hashing. A password drawn by Generate from Alphabet
// carries about 5.75 bits per character: GeneratedMinLength characters
// carry more than 112 bits, which no guessing attack exhausts whatever the
// cost of one guess. Key stretching protects memorised secrets of low
// entropy; for such a secret it only costs the server, so HashGenerated
// uses GeneratedIterations. The hash records its count: the first login
// with the password rehashes it at the configured count (NeedsRehash), and
// accounts given one must change it at that login anyway. The bulk user
// import uses it (10 000 accounts would take minutes of CPU at the full
// count).
const (
	GeneratedMinLength  = 20
	GeneratedIterations = 1000
)

// GeneratedHasher is the optional HashGenerated operation of a Hasher.
type GeneratedHasher interface {
	HashGenerated(ctx context.Context, plain string) (string, error)
}

// HashGeneratedWith hashes a generated password with h's HashGenerated,
// or with its HashContext (the full cost) when h has none (a consumer's
// hasher, host.Options.PasswordHasher).
func HashGeneratedWith(ctx context.Context, h Hasher, plain string) (string, error) {
	if g, ok := h.(GeneratedHasher); ok {
		return g.HashGenerated(ctx, plain)
	}
	return h.HashContext(ctx, plain)
}

// ErrNotGenerated reports a password too short for HashGenerated.
var ErrNotGenerated = errors.New("password: HashGenerated needs a generated password of at least 20 characters")

// HashGenerated hashes a password made by Generate (at least
// GeneratedMinLength characters) with GeneratedIterations, on p's pool.
func (p *PBKDF2) HashGenerated(ctx context.Context, plain string) (string, error) {
	if len(plain) < GeneratedMinLength {
		return "", ErrNotGenerated
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	var k []byte
	if err := p.run(ctx, func() { k = key(plain, salt, GeneratedIterations, keyLen) }); err != nil {
		return "", err
	}
	return encode(GeneratedIterations, salt, k), nil
}
