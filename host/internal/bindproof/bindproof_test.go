package bindproof_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/internal/bindproof"
)

func TestProofMatches(t *testing.T) {
	binder, err := bindproof.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := bindproof.NewToken()
	verifier := strings.Repeat("a", 43)
	challenge := bindproof.Challenge(verifier)
	// RFC 7636 appendix B.
	if got := bindproof.Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatalf("Challenge = %s", got)
	}
	tests := []struct {
		name              string
		proof             bindproof.Proof
		binderHash, chall string
		want              bool
	}{
		{"binder", bindproof.Proof{Binder: binder}, bindproof.HashBinder(binder), "", true},
		{"other binder", bindproof.Proof{Binder: other}, bindproof.HashBinder(binder), "", false},
		{"no binder", bindproof.Proof{}, bindproof.HashBinder(binder), "", false},
		{"no stored hash", bindproof.Proof{Binder: binder}, "", "", false},
		{"verifier", bindproof.Proof{Verifier: verifier}, "", challenge, true},
		{"wrong verifier", bindproof.Proof{Verifier: verifier + "b"}, "", challenge, false},
		{"short verifier", bindproof.Proof{Verifier: "abc"}, "", bindproof.Challenge("abc"), false},
		{"verifier with a bad character", bindproof.Proof{Verifier: verifier + "!"}, "", bindproof.Challenge(verifier + "!"), false},
		{"the record's challenge wins over a binder", bindproof.Proof{Binder: binder}, bindproof.HashBinder(binder), challenge, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.proof.Matches(tt.binderHash, tt.chall); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestShapes(t *testing.T) {
	tok, err := bindproof.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		s                string
		token, challenge bool
	}{
		{tok, true, true},
		{"", false, false},
		{tok[:42], false, false},
		{tok[:42] + "+", false, false},
	}
	for _, tt := range tests {
		if bindproof.ValidToken(tt.s) != tt.token || bindproof.ValidChallenge(tt.s) != tt.challenge {
			t.Errorf("%q: token %v challenge %v", tt.s, bindproof.ValidToken(tt.s), bindproof.ValidChallenge(tt.s))
		}
	}
	if bindproof.HashBinder("") != "" {
		t.Error("HashBinder of no binder is not empty")
	}
}
