package mfa

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// Recovery codes: RecoveryCodes codes of 16 Base32 characters (80 bits),
// shown as XXXX-XXXX-XXXX-XXXX. Input is matched ignoring case, spaces and
// dashes.
const (
	RecoveryCodes     = 10
	recoveryCodeBytes = 10
	maxRecoveryInput  = 64
)

func newRecoveryCode() (string, error) {
	b := make([]byte, recoveryCodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	s := base32.StdEncoding.EncodeToString(b) // 16 characters, no padding
	return s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16], nil
}

// normaliseRecoveryCode removes spaces and dashes and upper-cases.
func normaliseRecoveryCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, code)
}

func hashRecoveryCode(code string) string {
	sum := sha256.Sum256([]byte(normaliseRecoveryCode(code)))
	return hex.EncodeToString(sum[:])
}
