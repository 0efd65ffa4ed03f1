package authz

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// encode builds a cached set the way Resolver.set does.
func encode(codes []string) []byte {
	codes = slices.Compact(slices.Sorted(slices.Values(codes)))
	if len(codes) == 0 {
		return []byte("\n")
	}
	return []byte("\n" + strings.Join(codes, "\n") + "\n")
}

func TestContains(t *testing.T) {
	set := encode([]string{"GET:/api/v1/sys/user", "POST:/api/v1/sys/user", "DELETE:/api/v1/sys/user/{id}", "A", "PUT:/x"})
	tests := []struct {
		code string
		want bool
	}{
		{"A", true},
		{"DELETE:/api/v1/sys/user/{id}", true},
		{"GET:/api/v1/sys/user", true},
		{"POST:/api/v1/sys/user", true},
		{"PUT:/x", true},
		{"", false},
		{"B", false},
		{"GET:/api/v1/sys/use", false},
		{"GET:/api/v1/sys/user/x", false},
		{"PUT:/x\n", false},
		{"\nPUT:/x", false},
		{"Z", false},
	}
	for _, tt := range tests {
		if got := contains(set, tt.code); got != tt.want {
			t.Errorf("contains(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
	for _, empty := range [][]byte{encode(nil), nil} {
		if contains(empty, "A") || contains(empty, "") {
			t.Errorf("the empty set %q holds something", empty)
		}
	}
}

// TestContainsMatchesLinearScan checks the binary search against a plain
// scan over random sets of every size up to 200, for every member and for
// strings between and around them.
func TestContainsMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = "ABC:/-{}abcxyz"[rng.IntN(14)]
		}
		return string(b)
	}
	for n := range 200 {
		codes := make([]string, n)
		for i := range codes {
			codes[i] = word()
		}
		set := encode(codes)
		probes := append(slices.Clone(codes), "", "\\xff", word(), word(), word())
		for _, c := range codes {
			probes = append(probes, c+"a", c[:len(c)-1])
		}
		for _, p := range probes {
			if got, want := contains(set, p), slices.Contains(codes, p); got != want {
				t.Fatalf("set %q: contains(%q) = %v, want %v", set, p, got, want)
			}
		}
	}
}
