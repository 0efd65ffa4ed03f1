package externalauth

import (
	"strings"
	"testing"
)

// A known answer, computed outside Go (Python:
// base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=")).
const (
	knownVerifier  = "dBjftJeZ4CVP-mJ92K9rsUEjNf0hoOrJJgxE-5LMlUM"
	knownChallenge = "BduwoqkjK4DpuAR1KiBRm3nj2mIvbF1Bkqd8Jl5ZvB4"
)

func TestVerifierMatches(t *testing.T) {
	tests := []struct {
		name, verifier, challenge string
		want                      bool
	}{
		{"known answer", knownVerifier, knownChallenge, true},
		{"other verifier", strings.Repeat("a", 43), knownChallenge, false},
		{"challenge as verifier", knownChallenge, knownChallenge, false},
		{"empty verifier", "", knownChallenge, false},
		{"empty challenge", knownVerifier, "", false},
		{"42 characters", knownVerifier[:42], knownChallenge, false},
		{"129 characters", strings.Repeat("~", 129), knownChallenge, false},
		{"a character outside the set", knownVerifier[:42] + "+", knownChallenge, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := verifierMatches(tc.verifier, tc.challenge); got != tc.want {
				t.Errorf("verifierMatches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidVerifierAndChallenge(t *testing.T) {
	verifiers := []struct {
		v    string
		want bool
	}{
		{strings.Repeat("A", 43), true},
		{strings.Repeat("z", 128), true},
		{"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~", true},
		{strings.Repeat("A", 42), false},
		{strings.Repeat("A", 129), false},
		{strings.Repeat("A", 42) + " ", false},
		{strings.Repeat("A", 42) + "=", false},
		{strings.Repeat("A", 42) + "é", false},
	}
	for _, tc := range verifiers {
		if got := validVerifier(tc.v); got != tc.want {
			t.Errorf("validVerifier(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
	challenges := []struct {
		c    string
		want bool
	}{
		{knownChallenge, true},
		{knownChallenge[:42], false},
		{knownChallenge + "A", false},
		{knownChallenge[:42] + "+", false},
		{knownChallenge[:42] + "/", false},
		{knownChallenge[:42] + "=", false},
		{"", false},
	}
	for _, tc := range challenges {
		if got := validChallenge(tc.c); got != tc.want {
			t.Errorf("validChallenge(%q) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestProofMatches(t *testing.T) {
	binder := strings.Repeat("B", 43)
	tests := []struct {
		name       string
		proof      Proof
		binderHash string
		challenge  string
		want       bool
	}{
		{"binder", Proof{Binder: binder}, hashBinder(binder), "", true},
		{"binder ignored for a challenged record", Proof{Binder: binder}, hashBinder(binder), knownChallenge, false},
		{"verifier", Proof{Verifier: knownVerifier}, "", knownChallenge, true},
		{"verifier ignored for an unchallenged record", Proof{Verifier: knownVerifier}, hashBinder(binder), "", false},
		{"both, challenged", Proof{Binder: binder, Verifier: knownVerifier}, "", knownChallenge, true},
		{"nothing", Proof{}, hashBinder(binder), "", false},
		{"empty record", Proof{Binder: binder, Verifier: knownVerifier}, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.proof.matches(tc.binderHash, tc.challenge); got != tc.want {
				t.Errorf("matches = %v, want %v", got, tc.want)
			}
		})
	}
}
