// Package token signs and verifies the kernel's access tokens and makes
// refresh tokens.
//
// An access token is a JWT (RFC 7519) signed with HMAC-SHA256 under the
// protected header {"alg":"HS256","kid":"<key id>","typ":"at+jwt"} (RFC
// 9068 §2.1), with the claims sub (user id), unique_name (account), sid
// (session id), sadm ("true" for the super-admin only), iss, aud, iat, nbf,
// exp (wire contract §2.1) and jti, 128 random bits that make every token
// unique (RFC 9068 §2.2).
//
// Keys form a ring (Service:Security:Jwt:SigningKeys): the first key signs,
// every key verifies. The kernel is the only issuer and the only audience
// of these tokens, so Verify accepts exactly the headers Issue writes, one
// per key of the ring, precomputed: the key is picked by comparing the
// presented header's text with them, and nothing in a header (alg, typ,
// kid, jku, jwk, x5u, crit) is ever interpreted (RFC 8725 §3.1, §3.10,
// §3.11; ASVS 5 9.1.2, 9.1.3, 9.2.2). The signature is checked before the
// payload is parsed. A token of another type (a refresh token, an upstream
// ID token, a token with typ JWT), another algorithm (none, HS512, RS256
// with the key as an HMAC secret) or a kid outside the ring therefore fails
// before its claims are read.
//
// Tokens issued before key rings existed carry the header
// {"alg":"HS256","typ":"at+jwt"} and neither jti nor aud. That header is
// accepted with the ring's first key only, so the access tokens of an
// upgrade keep working until they expire (see LegacyHeader).
//
// Verify does little per call: no header parsing, pooled HMAC state and
// buffers, and one JSON decode of the payload. A token that verified once
// is remembered (a bounded map keyed by the token's exact text, see
// verified.go), so the next requests carrying it only compare strings and
// check the clock. The ring is fixed for the Issuer's life: retiring a key
// means restarting the process (a rolling deploy), which also empties the
// cache.
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
	"regexp"
	"slices"
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
	MinKeyBytes = config.MinJwtKeyBytes
	// MaxTokenLen bounds the work done on a presented token. Tokens issued
	// here are a few hundred bytes long.
	MaxTokenLen = 4096
	// JTIBytes is the randomness of a token's jti: 128 bits from
	// crypto/rand, base64url without padding (22 characters).
	JTIBytes = 16

	// maxSessionIDLen matches sys_session.session_id.
	maxSessionIDLen = 64
	// maxJTILen bounds the jti accepted (issued ones have 22 characters).
	maxJTILen = 255
)

// LegacyHeader is the protected header of the access tokens issued before
// key rings: no kid. Verify accepts it with the ring's first key only, and
// does not require jti and aud from such a token (it never had them).
const LegacyHeader = `{"alg":"HS256","typ":"at+jwt"}`

var (
	b64    = base64.RawURLEncoding.Strict()
	sigLen = base64.RawURLEncoding.EncodedLen(sha256.Size)
	keyID  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
)

// headerFor is the protected header of the tokens signed with the key kid
// (members in lexical order, as golang-jwt and most libraries write them).
// kid needs no escaping: keyID allows no character JSON escapes.
func headerFor(kid string) string {
	return `{"alg":"HS256","kid":"` + kid + `","typ":"at+jwt"}`
}

// Verification failures. Every one of them means "no valid access token":
// HTTP 401 with errcode.TokenInvalid. They say why for logs and tests and
// never carry any part of the token.
var (
	ErrMalformed   = errors.New("token: not a compact JWS of three base64url parts")
	ErrAlgorithm   = errors.New("token: algorithm not accepted (only HS256)")
	ErrType        = errors.New("token: not an access token (typ must be at+jwt)")
	ErrHeader      = errors.New("token: unexpected protected header")
	ErrKeyID       = errors.New("token: signed with a key that is not in the ring (unknown kid)")
	ErrSignature   = errors.New("token: signature does not verify")
	ErrExpired     = errors.New("token: expired")
	ErrNotYetValid = errors.New("token: not valid yet")
	ErrIssuer      = errors.New("token: issued by someone else")
	ErrAudience    = errors.New("token: meant for another audience")
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

// issuedClaims is the JSON payload Issue writes, members in this order.
type issuedClaims struct {
	Sub  string `json:"sub"`
	Name string `json:"unique_name"`
	Sid  string `json:"sid"`
	Sadm string `json:"sadm,omitempty"`
	Iss  string `json:"iss"`
	Aud  string `json:"aud"`
	Iat  int64  `json:"iat"`
	Nbf  int64  `json:"nbf"`
	Exp  int64  `json:"exp"`
	Jti  string `json:"jti"`
}

// wireClaims is the JSON payload as Verify reads it. aud and jti are
// checked while decoding (audClaim, jtiClaim), without allocating.
type wireClaims struct {
	Sub  string   `json:"sub"`
	Name string   `json:"unique_name"`
	Sid  string   `json:"sid"`
	Sadm string   `json:"sadm"`
	Iss  string   `json:"iss"`
	Aud  audClaim `json:"aud"`
	Iat  int64    `json:"iat"`
	Nbf  int64    `json:"nbf"`
	Exp  int64    `json:"exp"`
	Jti  jtiClaim `json:"jti"`
}

// audience is the configured audience, and its JSON string form for the
// fast comparison.
type audience struct {
	name   string
	quoted []byte
}

// audClaim decodes aud (RFC 7519 §4.1.3: a string, or an array of
// strings) and records whether it names want.
type audClaim struct {
	want    *audience
	present bool
	match   bool
}

func (a *audClaim) UnmarshalJSON(b []byte) error {
	a.present, a.match = false, false
	switch {
	case len(b) == 0 || b[0] == 'n': // null: absent
		return nil
	case bytes.Equal(b, a.want.quoted): // the usual case, no allocation
		a.present, a.match = true, true
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		a.present, a.match = true, s == a.want.name
		return nil
	case b[0] == '[':
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		a.present, a.match = len(l) > 0, slices.Contains(l, a.want.name)
		return nil
	}
	return ErrClaims
}

// jtiClaim records whether jti is a non-empty string of a sensible length;
// its value is not kept.
type jtiClaim struct{ ok bool }

func (j *jtiClaim) UnmarshalJSON(b []byte) error {
	j.ok = false
	if len(b) == 0 || b[0] == 'n' {
		return nil
	}
	if b[0] != '"' {
		return ErrClaims
	}
	j.ok = len(b) > 2 && len(b) <= maxJTILen+2
	return nil
}

// Key is one key of the ring.
type Key struct {
	// ID is the kid written into the header; empty: DerivedKeyID(Secret).
	ID string
	// Secret is the HMAC-SHA256 key, at least MinKeyBytes long.
	Secret []byte
}

// Options describe an Issuer.
type Options struct {
	// Keys is the ring: Keys[0] signs, all verify. At least one.
	Keys []Key
	// Issuer is the iss written and required. Required.
	Issuer string
	// Audience is the aud written and required; empty: Issuer.
	Audience string
	// Skew is tolerated when checking exp, nbf and iat.
	Skew time.Duration
}

// Issuer signs and verifies access tokens with a ring of HS256 keys. It is
// safe for concurrent use.
type Issuer struct {
	opts   Options // normalised copies
	ring   []*ringKey
	accept []*ringKey // the headers Verify accepts: the ring, then the legacy header of ring[0]
	aud    *audience
	now    func() time.Time
	seen   *verified
}

// ringKey is one accepted header and the key it selects.
type ringKey struct {
	id      string
	header  string // base64url of the protected header
	key     []byte
	legacy  bool       // LegacyHeader: jti and aud are not required
	scratch *sync.Pool // *scratch, shared by the headers of one key
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

// NewIssuer returns an Issuer with a ring of one key (at least MinKeyBytes
// long, its kid derived: config.DerivedKeyID), writing and requiring
// iss = aud = issuer, and tolerating skew when checking exp, nbf and iat.
func NewIssuer(key []byte, issuer string, skew time.Duration) (*Issuer, error) {
	return New(Options{Keys: []Key{{Secret: key}}, Issuer: issuer, Skew: skew})
}

// New returns the Issuer described by o.
func New(o Options) (*Issuer, error) {
	switch {
	case len(o.Keys) == 0:
		return nil, errors.New("token: at least one signing key is required")
	case strings.TrimSpace(o.Issuer) == "":
		return nil, errors.New("token: the issuer (Service:Security:Jwt:Issuer) must not be empty")
	case o.Skew < 0:
		return nil, errors.New("token: the clock skew must not be negative")
	}
	if o.Audience == "" {
		o.Audience = o.Issuer
	}
	keys := make([]Key, len(o.Keys))
	ids := map[string]bool{}
	for n, k := range o.Keys {
		if len(k.Secret) < MinKeyBytes {
			return nil, fmt.Errorf("token: signing key %d has %d bytes; at least %d are required", n, len(k.Secret), MinKeyBytes)
		}
		k.Secret = bytes.Clone(k.Secret)
		if k.ID == "" {
			k.ID = config.DerivedKeyID(k.Secret)
		}
		if !keyID.MatchString(k.ID) {
			return nil, fmt.Errorf("token: key id %q of signing key %d must be 1 to 64 letters, digits, '.', '_' or '-'", k.ID, n)
		}
		if ids[k.ID] {
			return nil, fmt.Errorf("token: key id %q is used twice", k.ID)
		}
		ids[k.ID] = true
		keys[n] = k
	}
	o.Keys = keys
	return newIssuer(o, time.Now), nil
}

func newIssuer(o Options, now func() time.Time) *Issuer {
	quoted, _ := json.Marshal(o.Audience)
	i := &Issuer{opts: o, aud: &audience{name: o.Audience, quoted: quoted}, now: now, seen: newVerified(VerifiedCacheSize)}
	for _, k := range o.Keys {
		key := k.Secret
		i.ring = append(i.ring, &ringKey{
			id:     k.ID,
			header: b64.EncodeToString([]byte(headerFor(k.ID))),
			key:    key,
			scratch: &sync.Pool{New: func() any {
				return &scratch{mac: hmac.New(sha256.New, key), in: make([]byte, 0, 512), payload: make([]byte, 0, 384)}
			}},
		})
	}
	first := i.ring[0]
	legacy := &ringKey{id: first.id, header: b64.EncodeToString([]byte(LegacyHeader)), key: first.key, legacy: true, scratch: first.scratch}
	i.accept = append(slices.Clone(i.ring), legacy)
	return i
}

// FromConfig returns the Issuer described by Service:Security:Jwt: the
// ring from SigningKeys or SigningKey (see Keys), the issuer, the audience
// (default: the issuer) and ClockSkewSeconds.
func FromConfig(cfg *config.Config) (*Issuer, error) {
	keys, err := Keys(cfg)
	if err != nil {
		return nil, err
	}
	jwt := cfg.Service.Security.Jwt
	return New(Options{Keys: keys, Issuer: jwt.Issuer, Audience: jwt.Audience, Skew: time.Duration(jwt.ClockSkewSeconds) * time.Second})
}

// WithClock returns an Issuer with the same ring, issuer, audience and skew
// that reads the time from now (tests). It has its own cache.
func (i *Issuer) WithClock(now func() time.Time) *Issuer {
	return newIssuer(i.opts, now)
}

// Issuer returns the iss the tokens carry.
func (i *Issuer) Issuer() string { return i.opts.Issuer }

// Audience returns the aud the tokens carry.
func (i *Issuer) Audience() string { return i.opts.Audience }

// KeyIDs returns the kids of the ring, the signing key first.
func (i *Issuer) KeyIDs() []string {
	ids := make([]string, len(i.ring))
	for n, k := range i.ring {
		ids[n] = k.id
	}
	return ids
}

// Issue signs an access token for c with the ring's first key that expires
// ttl from now. It sets iss, aud, a fresh jti, and iat and nbf to now, and
// returns the token with its expiry (whole seconds, as in exp). UserID must
// be positive and SessionID set.
func (i *Issuer) Issue(c Claims, ttl time.Duration) (string, time.Time, error) {
	if c.UserID <= 0 || c.SessionID == "" || len(c.SessionID) > maxSessionIDLen || c.Account == "" {
		return "", time.Time{}, errors.New("token: Issue needs a positive UserID, an Account and a SessionID")
	}
	if ttl < time.Second {
		return "", time.Time{}, errors.New("token: the access-token lifetime must be at least one second")
	}
	var jti [JTIBytes]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("token: read random bytes: %w", err)
	}
	now := i.now()
	exp := now.Add(ttl).Unix()
	wc := issuedClaims{
		Sub:  strconv.FormatInt(c.UserID, 10),
		Name: c.Account,
		Sid:  c.SessionID,
		Iss:  i.opts.Issuer,
		Aud:  i.opts.Audience,
		Iat:  now.Unix(),
		Nbf:  now.Unix(),
		Exp:  exp,
		Jti:  b64.EncodeToString(jti[:]),
	}
	if c.SuperAdmin {
		wc.Sadm = "true"
	}
	payload, err := json.Marshal(wc)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token: encode claims: %w", err)
	}
	k := i.ring[0]
	input := k.header + "." + b64.EncodeToString(payload)
	return input + "." + sign(k.key, input), time.Unix(exp, 0).UTC(), nil
}

// sign returns the base64url HMAC-SHA256 of a JWS signing input.
func sign(key []byte, input string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(input))
	return b64.EncodeToString(mac.Sum(nil))
}

// Verify checks an access token and returns its claims. Any error means the
// token must be refused with HTTP 401 / errcode.TokenInvalid; errors.Is tells
// the reason (ErrMalformed, ErrAlgorithm, ErrType, ErrHeader, ErrKeyID,
// ErrSignature, ErrExpired, ErrNotYetValid, ErrIssuer, ErrAudience,
// ErrClaims). raw is not retained: the returned strings are fresh copies,
// so raw may point into a reused request buffer.
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
	// The key is chosen by the header's exact text, never by reading it.
	var k *ringKey
	for _, a := range i.accept {
		if raw[:d1] == a.header {
			k = a
			break
		}
	}
	if k == nil {
		return Claims{}, headerError(raw[:d1])
	}
	if len(sig) != sigLen {
		return Claims{}, ErrSignature
	}

	s := k.scratch.Get().(*scratch)
	defer k.scratch.Put(s)
	s.in = append(s.in[:0], raw[:d2]...)
	s.mac.Reset()
	s.mac.Write(s.in)
	sum := s.mac.Sum(s.sum[:0])
	// Compare the canonical encoding of the expected MAC with the presented
	// text in constant time: equivalent to comparing the MACs, and it also
	// refuses non-canonical encodings of the right MAC.
	base64.RawURLEncoding.Encode(s.enc[:sigLen], sum)
	var diff byte
	for n := 0; n < sigLen; n++ {
		diff |= s.enc[n] ^ sig[n]
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
	s.claims = wireClaims{Aud: audClaim{want: i.aud}}
	if err := json.Unmarshal(s.payload[:n], &s.claims); err != nil {
		return Claims{}, ErrClaims
	}
	return i.check(&s.claims, k.legacy)
}

// check validates the decoded claims of a correctly signed token. A token
// under the legacy header need not carry jti and aud; when it has an aud,
// that must match too.
func (i *Issuer) check(wc *wireClaims, legacy bool) (Claims, error) {
	if wc.Iss != i.opts.Issuer {
		return Claims{}, ErrIssuer
	}
	if (!legacy || wc.Aud.present) && !wc.Aud.match {
		return Claims{}, ErrAudience
	}
	if wc.Exp <= 0 || (!legacy && !wc.Jti.ok) {
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
	skew := i.opts.Skew
	if !now.Before(c.ExpiresAt.Add(skew)) {
		return ErrExpired
	}
	if !c.NotBefore.IsZero() && now.Before(c.NotBefore.Add(-skew)) {
		return ErrNotYetValid
	}
	if !c.IssuedAt.IsZero() && now.Before(c.IssuedAt.Add(-skew)) {
		return ErrNotYetValid
	}
	return nil
}

// headerError says why a protected header other than ours is refused. It
// runs on the failure path only and never selects a key.
func headerError(enc string) error {
	raw, err := b64.DecodeString(enc)
	if err != nil {
		return ErrMalformed
	}
	var h struct {
		Alg any `json:"alg"`
		Typ any `json:"typ"`
		Kid any `json:"kid"`
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
	if kid, ok := h.Kid.(string); ok && string(raw) == headerFor(kid) {
		return ErrKeyID // our header shape, a kid outside the ring
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
