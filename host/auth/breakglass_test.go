package auth_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/auth"
)

// TestPolicyGenerate: a generated password meets the policy it was made
// for, has the asked length (or the policy's minimum), and a policy no
// password can meet is an error, not a weak password.
func TestPolicyGenerate(t *testing.T) {
	all := auth.PasswordPolicy{MinLength: 8, RequireUpper: true, RequireLower: true, RequireDigit: true, RequireSpecial: true}
	cases := []struct {
		name    string
		policy  auth.PasswordPolicy
		n       int
		wantLen int
	}{
		{"defaults", auth.PasswordPolicy{MinLength: 8, RequireUpper: true, RequireLower: true, RequireDigit: true}, 16, 16},
		{"special character", all, 16, 16},
		{"minimum above n", auth.PasswordPolicy{MinLength: 40, RequireDigit: true, RequireSpecial: true}, 16, 40},
		{"no requirement", auth.PasswordPolicy{}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 200 {
				pw, err := c.policy.Generate(c.n)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.policy.Check(pw); err != nil {
					t.Fatalf("%q does not meet the policy: %v", pw, err)
				}
				if utf8.RuneCountInString(pw) != c.wantLen {
					t.Fatalf("%q has %d characters, want %d", pw, len(pw), c.wantLen)
				}
				if c.policy.RequireSpecial && !strings.ContainsAny(pw, "!#%+-=?@^_~") {
					t.Fatalf("%q has no special character", pw)
				}
				seen[pw] = true
			}
			if c.wantLen >= 8 && len(seen) != 200 {
				t.Fatalf("200 generated passwords hold only %d distinct ones", len(seen))
			}
		})
	}
	if pw, err := (auth.PasswordPolicy{MinLength: 2000}).Generate(16); err == nil {
		t.Fatalf("a policy asking for 2000 characters gave %q", pw)
	}
}
