package mfa

import (
	"crypto/subtle"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TOTP parameters (RFC 6238 defaults, what authenticator apps expect).
const (
	Period     = 30
	Digits     = 6
	Skew       = 1 // steps accepted either side of now
	seedBytes  = 20
	codeLength = 6
)

// NewSeed returns a new Base32 seed and its otpauth:// URI.
func NewSeed(issuer, account string) (seed, uri string, err error) {
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer:      issuer,
		AccountName: account,
		Period:      Period,
		SecretSize:  seedBytes,
		Digits:      otp.DigitsSix,
		Algorithm:   otp.AlgorithmSHA1,
	})
	if err != nil {
		return "", "", err
	}
	return k.Secret(), k.URL(), nil
}

// wellFormed: exactly six ASCII digits.
func wellFormed(code string) bool {
	if len(code) != codeLength {
		return false
	}
	for i := range len(code) {
		if code[i] < '0' || code[i] > '9' {
			return false
		}
	}
	return true
}

// matchStep returns the time step (unix seconds / Period) whose code is
// code, within Skew steps of now; ok is false when none matches. Every
// candidate is computed and compared in constant time.
func matchStep(seed, code string, now time.Time) (step int64, ok bool) {
	code = strings.TrimSpace(code)
	if !wellFormed(code) {
		return 0, false
	}
	base := now.Unix() / Period
	for d := int64(-Skew); d <= Skew; d++ {
		s := base + d
		want, err := totp.GenerateCodeCustom(seed, time.Unix(s*Period, 0), totp.ValidateOpts{
			Period: Period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
		})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && !ok {
			step, ok = s, true
		}
	}
	return step, ok
}
