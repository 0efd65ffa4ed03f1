package password_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/password"
)

func TestHashVerify(t *testing.T) {
	old := password.New(1000) // raised to the 100000 floor
	if old.Iterations() != password.MinIterations {
		t.Fatalf("iterations = %d, want the floor %d", old.Iterations(), password.MinIterations)
	}
	h, err := old.Hash("s3cret!")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := password.IterationsOf(h); n != 100000 {
		t.Fatalf("hash records %d iterations, want 100000", n)
	}
	cur := password.New(120000)
	tests := []struct {
		name   string
		hash   string
		plain  string
		ok     bool
		errors bool
	}{
		{"right password, old count", h, "s3cret!", true, false},
		{"wrong password", h, "s3cret", false, false},
		{"empty password", h, "", false, false},
		{"malformed hash", "plain-text", "s3cret!", false, true},
		{"bad iterations", "pbkdf2-sha256$x$AAAA$AAAAAAAAAAAAAAAAAAAAAA", "a", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := cur.Verify(tt.hash, tt.plain)
			if ok != tt.ok || (err != nil) != tt.errors {
				t.Fatalf("Verify = %v, %v; want %v, error %v", ok, err, tt.ok, tt.errors)
			}
		})
	}
	if !cur.NeedsRehash(h) {
		t.Error("a hash with another count does not need a rehash")
	}
	h2, _ := cur.Hash("s3cret!")
	if cur.NeedsRehash(h2) {
		t.Error("a fresh hash needs a rehash")
	}
	if h2 == h || strings.Count(h2, "$") != 3 {
		t.Errorf("unexpected hash format %q", h2)
	}
}

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		p, err := password.Generate(16)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 16 {
			t.Fatalf("len(%q) = %d", p, len(p))
		}
		if strings.ContainsAny(p, "0O1lI") {
			t.Fatalf("%q holds a confusable character", p)
		}
		for _, r := range p {
			if !strings.ContainsRune(password.Alphabet, r) {
				t.Fatalf("%q holds %q outside the alphabet", p, r)
			}
		}
		if seen[p] {
			t.Fatalf("duplicate password %q", p)
		}
		seen[p] = true
	}
}

// plainHasher hides the PBKDF2's optional operations (a consumer's hasher).
type plainHasher struct{ password.Hasher }

func TestHashGeneratedWith(t *testing.T) {
	k := password.New(password.MinIterations)
	plain, err := password.Generate(password.GeneratedMinLength)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		h    password.Hasher
		want int
	}{
		{"the kernel's hasher: the generated-password count", k, password.GeneratedIterations},
		{"a hasher without HashGenerated: its full cost", plainHasher{k}, password.MinIterations},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hash, err := password.HashGeneratedWith(context.Background(), tt.h, plain)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := password.IterationsOf(hash); n != tt.want {
				t.Fatalf("iterations %d, want %d", n, tt.want)
			}
			if ok, err := k.VerifyContext(context.Background(), hash, plain); !ok || err != nil {
				t.Fatalf("the hash does not verify: %v", err)
			}
		})
	}
}

// TestDecoy: the kernel's decoy is made without hashing, carries the
// configured count, differs every time, and verifying against it runs one
// full computation on the pool and matches nothing; a hasher without Decoy
// gets the hash of a random string.
func TestDecoy(t *testing.T) {
	ctx := context.Background()
	k := password.New(123456).WithLimits(password.Limits{Concurrency: 1})
	tests := []struct {
		name      string
		h         password.Hasher
		madeByPBK uint64 // computations on k's pool to make the decoy
	}{
		{"the kernel's hasher: no computation", k, 0},
		{"a hasher without Decoy: one hash", plainHasher{k}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := k.Stats().Completed
			d1, err := password.DecoyWith(ctx, tt.h)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Stats().Completed - before; got != tt.madeByPBK {
				t.Fatalf("making the decoy ran %d computations, want %d", got, tt.madeByPBK)
			}
			d2, _ := password.DecoyWith(ctx, tt.h)
			if d1 == d2 {
				t.Fatal("two decoys are equal")
			}
			if n, err := password.IterationsOf(d1); err != nil || n != 123456 {
				t.Fatalf("decoy records %d iterations (%v), want the configured 123456", n, err)
			}
			before = k.Stats().Completed
			for _, plain := range []string{"", "s3cret!", d1} {
				if ok, err := k.VerifyContext(ctx, d1, plain); ok || err != nil {
					t.Fatalf("Verify(decoy, %q) = %v, %v; want false, nil", plain, ok, err)
				}
			}
			if got := k.Stats().Completed - before; got != 3 {
				t.Fatalf("three verifications against the decoy ran %d computations, want 3 (the cost of a real hash)", got)
			}
		})
	}
}
