// Package token signs and verifies the kernel's access tokens and makes
// refresh tokens.
//
// An access token is a JWT (RFC 7519) signed with HMAC-SHA256 under the
// protected header {"alg":"HS256","typ":"at+jwt"} (RFC 9068 §2.1), with the
// claims sub (user id), unique_name (account), sid (session id), sadm ("true"
// for the super-admin only), iss, iat, nbf and exp (wire contract §2.1).
//
// The kernel is the only issuer and the only audience of these tokens, so
// Verify accepts exactly the header Issue writes: the algorithm allowlist is
// one entry long and nothing in the header (alg, typ, kid, jku, jwk, x5u,
// crit) is ever interpreted (RFC 8725 §3.1, §3.10, §3.11; ASVS 5 9.1.2,
// 9.1.3, 9.2.2). The signature is checked before the payload is parsed.
// A token of another type (a refresh token, an upstream ID token, a token
// with typ JWT) or another algorithm (none, HS512, RS256 with the key as an
// HMAC secret) therefore fails before its claims are read.
//
// Verify does little per call: no header parsing, pooled HMAC state and
// buffers, and one JSON decode of the payload. A token that verified once
// is remembered (a bounded map keyed by the token's exact text, see
// verified.go), so the next requests carrying it only compare strings and
// check the clock.
package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adminkernel/kernel/config"
)

const (
	// Algorithm is the only signing algorithm issued and accepted.
	Algorithm = "HS256"
	// Type is the typ header of access tokens (RFC 9068).
	Type = "at+jwt"
	// MinKeyBytes is the shortest accepted signing key: 256 bits, the size
	// of the HMAC-SHA256 output (RFC 8725 §3.5; RFC 7518 §3.2).
	MinKeyBytes = 32
	// MaxTokenLen bounds the work done on a presented token. Tokens issued
	// here are a few hundred bytes long.
	MaxTokenLen = 4096

	// maxSessionIDLen matches sys_session.session_id.
	maxSessionIDLen = 64
)

// header is the protected header of every access token, written and
// expected byte for byte.
const header = `{"alg":"HS256","typ":"at+jwt"}`

var (
	encodedHeader = base64.RawURLEncoding.EncodeToString([]byte(header))
	b64           = base64.RawURLEncoding.Strict()
	sigLen        = base64.RawURLEncoding.EncodedLen(sha256.Size)
)

// Verification failures. Every one of them means "no valid access token":
// HTTP 401 with errcode.TokenInvalid. They say why for logs and tests and
// never carry any part of the token.
var (
	ErrMalformed   = errors.New("token: not a compact JWS of three base64url parts")
	ErrAlgorithm   = errors.New("token: algorithm not accepted (only HS256)")
	ErrType        = errors.New("token: not an access token (typ must be at+jwt)")
	ErrHeader      = errors.New("token: unexpected protected header")
	ErrSignature   = errors.New("token: signature does not verify")
	ErrExpired     = errors.New("token: expired")
	ErrNotYetValid = errors.New("token: not valid yet")
	ErrIssuer      = errors.New("token: issued by someone else")
	ErrClaims      = errors.New("token: required claim missing or invalid")
)

// Claims are the kernel's access-token claims.
type Claims struct {
	// UserID is sub, the user's id.
	UserID int64
	// Account is unique_name.
	Account string
	// SessionID is sid: the session the token belongs to.
	SessionID string
	// SuperAdmin is sadm="true". It is only as fresh as the token: a demoted
	// super-admin keeps it until exp.
	SuperAdmin bool

	// IssuedAt, NotBefore and ExpiresAt are iat, nbf and exp. Issue sets
	// them; Verify fills them in.
	IssuedAt  time.Time
	NotBefore time.Time
	ExpiresAt time.Time
}

// wireClaims is the JSON payload. Issue writes the members in this order.
type wireClaims struct {
	Sub  string `json:"sub"`
	Name string `json:"unique_name"`
	Sid  string `json:"sid"`
	Sadm string `json:"sadm,omitempty"`
	Iss  string `json:"iss"`
	Iat  int64  `json:"iat"`
	Nbf  int64  `json:"nbf"`
	Exp  int64  `json:"exp"`
}

// Issuer signs and verifies access tokens with one HS256 key. It is safe for
// concurrent use.
type Issuer struct {
	key     []byte
	issuer  string
	skew    time.Duration
	now     func() time.Time
	scratch *sync.Pool // *scratch
	seen    *verified
}

// scratch is the per-call state of Verify, pooled.
type scratch struct {
	mac     hash.Hash
	in      []byte // the signing input: header '.' payload
	payload []byte // the decoded payload
	sum     [sha256.Size]byte
	enc     [64]byte // base64url of sum (43 bytes used)
	claims  wireClaims
}

// NewIssuer returns an Issuer signing with key (at least MinKeyBytes long),
// writing and requiring iss = issuer, and tolerating skew when checking exp,
// nbf and iat.
func NewIssuer(key []byte, issuer string, skew time.Duration) (*Issuer, error) {
	switch {
	case len(key) < MinKeyBytes:
		return nil, fmt.Errorf("token: the signing key has %d bytes; at least %d are required", len(key), MinKeyBytes)
	case strings.TrimSpace(issuer) == "":
		return nil, errors.New("token: the issuer (Service:Security:Jwt:Issuer) must not be empty")
	case skew < 0:
		return nil, errors.New("token: the clock skew must not be negative")
	}
	return newIssuer(bytes.Clone(key), issuer, skew, time.Now), nil
}

func newIssuer(key []byte, issuer string, skew time.Duration, now func() time.Time) *Issuer {
	i := &Issuer{key: key, issuer: issuer, skew: skew, now: now, seen: newVerified(VerifiedCacheSize)}
	i.scratch = &sync.Pool{New: func() any {
		return &scratch{mac: hmac.New(sha256.New, key), in: make([]byte, 0, 512), payload: make([]byte, 0, 384)}
	}}
	return i
}

// FromConfig returns the Issuer described by Service:Security:Jwt: the key
// from SigningKey (see SigningKey), the issuer and ClockSkewSeconds.
func FromConfig(cfg *config.Config) (*Issuer, error) {
	key, err := SigningKey(cfg)
	if err != nil {
		return nil, err
	}
	jwt := cfg.Service.Security.Jwt
	return NewIssuer(key, jwt.Issuer, time.Duration(jwt.ClockSkewSeconds)*time.Second)
}

// WithClock returns an Issuer with the same key, issuer and skew that reads
// the time from now (tests).
func (i *Issuer) WithClock(now func() time.Time) *Issuer {
	return newIssuer(i.key, i.issuer, i.skew, now)
}

// Issuer returns the iss the tokens carry.
func (i *Issuer) Issuer() string { return i.issuer }

// Issue signs an access token for c that expires ttl from now. It sets iss,
// iat and nbf to now and returns the token with its expiry (whole seconds,
// as in exp). UserID must be positive and SessionID set.
func (i *Issuer) Issue(c Claims, ttl time.Duration) (string, time.Time, error) {
	if c.UserID <= 0 || c.SessionID == "" || len(c.SessionID) > maxSessionIDLen || c.Account == "" {
		return "", time.Time{}, errors.New("token: Issue needs a positive UserID, an Account and a SessionID")
	}
	if ttl < time.Second {
		return "", time.Time{}, errors.New("token: the access-token lifetime must be at least one second")
	}
	now := i.now()
	exp := now.Add(ttl).Unix()
	wc := wireClaims{
		Sub:  strconv.FormatInt(c.UserID, 10),
		Name: c.Account,
		Sid:  c.SessionID,
		Iss:  i.issuer,
		Iat:  now.Unix(),
		Nbf:  now.Unix(),
		Exp:  exp,
	}
	if c.SuperAdmin {
		wc.Sadm = "true"
	}
	payload, err := json.Marshal(wc)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token: encode claims: %w", err)
	}
	input := encodedHeader + "." + b64.EncodeToString(payload)
	return input + "." + sign(i.key, input), time.Unix(exp, 0).UTC(), nil
}

// sign returns the base64url HMAC-SHA256 of a JWS signing input.
func sign(key []byte, input string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(input))
	return b64.EncodeToString(mac.Sum(nil))
}

// Verify checks an access token and returns its claims. Any error means the
// token must be refused with HTTP 401 / errcode.TokenInvalid; errors.Is tells
// the reason (ErrMalformed, ErrAlgorithm, ErrType, ErrHeader, ErrSignature,
// ErrExpired, ErrNotYetValid, ErrIssuer, ErrClaims). raw is not retained:
// the returned strings are fresh copies, so raw may point into a reused
// request buffer.
func (i *Issuer) Verify(raw string) (Claims, error) {
	if len(raw) > MaxTokenLen {
		return Claims{}, ErrMalformed
	}
	if c, ok := i.seen.get(raw); ok {
		if err := i.checkTimes(&c, i.now()); err != nil {
			i.seen.forget(raw)
			return Claims{}, err
		}
		return c, nil
	}
	c, err := i.verify(raw)
	if err == nil {
		i.seen.put(raw, c)
	}
	return c, err
}

// verify is Verify without the cache of verified tokens.
func (i *Issuer) verify(raw string) (Claims, error) {
	d1 := strings.IndexByte(raw, '.')
	if d1 < 0 {
		return Claims{}, ErrMalformed
	}
	d2 := strings.IndexByte(raw[d1+1:], '.')
	if d2 < 0 {
		return Claims{}, ErrMalformed
	}
	d2 += d1 + 1
	sig := raw[d2+1:]
	if strings.IndexByte(sig, '.') >= 0 || d2 == d1+1 {
		return Claims{}, ErrMalformed // JWE (five parts) or an empty payload
	}
	if raw[:d1] != encodedHeader {
		return Claims{}, headerError(raw[:d1])
	}
	if len(sig) != sigLen {
		return Claims{}, ErrSignature
	}

	s := i.scratch.Get().(*scratch)
	defer i.scratch.Put(s)
	s.in = append(s.in[:0], raw[:d2]...)
	s.mac.Reset()
	s.mac.Write(s.in)
	sum := s.mac.Sum(s.sum[:0])
	// Compare the canonical encoding of the expected MAC with the presented
	// text in constant time: equivalent to comparing the MACs, and it also
	// refuses non-canonical encodings of the right MAC.
	base64.RawURLEncoding.Encode(s.enc[:sigLen], sum)
	var diff byte
	for k := 0; k < sigLen; k++ {
		diff |= s.enc[k] ^ sig[k]
	}
	if diff != 0 {
		return Claims{}, ErrSignature
	}

	enc := s.in[d1+1:]
	if cap(s.payload) < b64.DecodedLen(len(enc)) {
		s.payload = make([]byte, b64.DecodedLen(len(enc)))
	}
	n, err := b64.Decode(s.payload[:cap(s.payload)], enc)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	s.claims = wireClaims{}
	if err := json.Unmarshal(s.payload[:n], &s.claims); err != nil {
		return Claims{}, ErrClaims
	}
	return i.check(&s.claims)
}

// check validates the decoded claims of a correctly signed token.
func (i *Issuer) check(wc *wireClaims) (Claims, error) {
	if wc.Iss != i.issuer {
		return Claims{}, ErrIssuer
	}
	if wc.Exp <= 0 {
		return Claims{}, ErrClaims
	}
	exp := time.Unix(wc.Exp, 0)
	nbf := time.Unix(wc.Nbf, 0)
	iat := time.Unix(wc.Iat, 0)
	times := Claims{IssuedAt: iat, NotBefore: nbf, ExpiresAt: exp}
	if wc.Nbf == 0 {
		times.NotBefore = time.Time{}
	}
	if wc.Iat == 0 {
		times.IssuedAt = time.Time{}
	}
	if err := i.checkTimes(&times, i.now()); err != nil {
		return Claims{}, err
	}
	uid, err := strconv.ParseInt(wc.Sub, 10, 64)
	if err != nil || uid <= 0 {
		return Claims{}, ErrClaims
	}
	if wc.Sid == "" || len(wc.Sid) > maxSessionIDLen || wc.Name == "" {
		return Claims{}, ErrClaims
	}
	var sadm bool
	switch wc.Sadm {
	case "":
	case "true":
		sadm = true
	default:
		return Claims{}, ErrClaims
	}
	return Claims{
		UserID:     uid,
		Account:    wc.Name,
		SessionID:  wc.Sid,
		SuperAdmin: sadm,
		IssuedAt:   iat.UTC(),
		NotBefore:  nbf.UTC(),
		ExpiresAt:  exp.UTC(),
	}, nil
}

// checkTimes checks exp, nbf and iat against now with the allowed skew. A
// zero NotBefore or IssuedAt is absent (the claim was 0 or missing).
func (i *Issuer) checkTimes(c *Claims, now time.Time) error {
	if !now.Before(c.ExpiresAt.Add(i.skew)) {
		return ErrExpired
	}
	if !c.NotBefore.IsZero() && now.Before(c.NotBefore.Add(-i.skew)) {
		return ErrNotYetValid
	}
	if !c.IssuedAt.IsZero() && now.Before(c.IssuedAt.Add(-i.skew)) {
		return ErrNotYetValid
	}
	return nil
}

// headerError says why a protected header other than ours is refused. It
// runs on the failure path only.
func headerError(enc string) error {
	raw, err := b64.DecodeString(enc)
	if err != nil {
		return ErrMalformed
	}
	var h struct {
		Alg any `json:"alg"`
		Typ any `json:"typ"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return ErrMalformed
	}
	if alg, _ := h.Alg.(string); alg != Algorithm {
		return ErrAlgorithm
	}
	if typ, _ := h.Typ.(string); !strings.EqualFold(typ, Type) && !strings.EqualFold(typ, "application/"+Type) {
		return ErrType
	}
	return ErrHeader
}

// RefreshTokenBytes is the entropy of a refresh token: 512 bits.
const RefreshTokenBytes = 64

// NewRefreshToken returns a fresh refresh token (64 bytes from crypto/rand,
// base64url without padding: 86 characters) and its hash, the only form
// that is stored.
func NewRefreshToken() (plain, hash string, err error) {
	var b [RefreshTokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("token: read random bytes: %w", err)
	}
	plain = base64.RawURLEncoding.EncodeToString(b[:])
	return plain, HashRefreshToken(plain), nil
}

// HashRefreshToken returns the stored form of a refresh token: SHA-256 of
// its text, lowercase hex (64 characters). A plain hash suffices: the token
// carries 512 random bits, so it cannot be guessed from its hash.
func HashRefreshToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}
