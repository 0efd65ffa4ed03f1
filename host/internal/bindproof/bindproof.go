// Package bindproof binds a one-time value to the client that asked for
// it: either to a browser binder (a random token in an HttpOnly
// SameSite=Lax cookie; the value's record keeps its SHA-256) or, for an app
// on another site whose requests carry no SameSite=Lax cookie, to a binding
// challenge the app sends first and proves later with its verifier:
// challenge = base64url(SHA-256(verifier)) without padding, like PKCE S256
// (RFC 7636 §4.2). Which proof counts is decided by the stored record,
// never by the client.
//
// It is the scheme of external login's browser binding
// (host/externalauth/browserbind.go), in a package of its own so that other
// one-time values (the SMS second factor's challenge) use the same checks.
package bindproof

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// Verifier bounds (RFC 7636 §4.1).
const (
	minVerifierLen = 43
	maxVerifierLen = 128
	tokenLen       = 43 // base64url of 32 bytes, no padding
)

// NewToken returns 32 random bytes in unpadded base64url (43 characters):
// a binder or an identifier of a one-time value.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidToken reports whether s has NewToken's shape.
func ValidToken(s string) bool {
	if len(s) != tokenLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// ValidChallenge reports whether s is an S256 challenge (43 base64url
// characters).
func ValidChallenge(s string) bool { return ValidToken(s) }

// ValidVerifier reports whether s is 43..128 characters of [A-Za-z0-9-._~].
func ValidVerifier(s string) bool {
	if len(s) < minVerifierLen || len(s) > maxVerifierLen {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
		default:
			return false
		}
	}
	return true
}

// Challenge returns the S256 challenge of a verifier.
func Challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// VerifierMatches compares S256(verifier) with the stored challenge in
// constant time; a missing or malformed verifier never matches.
func VerifierMatches(verifier, challenge string) bool {
	if !ValidVerifier(verifier) || challenge == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(Challenge(verifier)), []byte(challenge)) == 1
}

// HashBinder is what a record keeps of a binder (hex SHA-256); "" for no
// binder.
func HashBinder(binder string) string {
	if binder == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(binder))
	return hex.EncodeToString(sum[:])
}

// BinderMatches compares the hash of a presented binder with the stored
// hash in constant time; a missing binder or hash never matches.
func BinderMatches(binder, storedHash string) bool {
	if binder == "" || storedHash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashBinder(binder)), []byte(storedHash)) == 1
}

// Proof is what a client presents with a one-time value: the browser
// binder (its cookie) and the binding verifier (its body).
type Proof struct {
	Binder   string
	Verifier string
}

// Matches checks the proof against a record: the verifier when the record
// carries a challenge, else the binder.
func (p Proof) Matches(binderHash, challenge string) bool {
	if challenge != "" {
		return VerifierMatches(p.Verifier, challenge)
	}
	return BinderMatches(p.Binder, binderHash)
}
