package password

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"syscall"
	"testing"
)

// TestKeyMatchesVectors checks the chunked PBKDF2-HMAC-SHA256 against
// published vectors: RFC 7914 §11 (64-byte keys, two blocks) and the
// RFC 6070-style SHA-256 vectors.
func TestKeyMatchesVectors(t *testing.T) {
	tests := []struct {
		name, password, salt string
		iter, keyLen         int
		want                 string
	}{
		{"rfc7914 c=1", "passwd", "salt", 1, 64, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"},
		{"rfc7914 c=80000", "Password", "NaCl", 80000, 64, "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"},
		{"c=1", "password", "salt", 1, 32, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"},
		{"c=2", "password", "salt", 2, 32, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"},
		{"c=4096", "password", "salt", 4096, 32, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hex.EncodeToString(key(tt.password, []byte(tt.salt), tt.iter, tt.keyLen)); got != tt.want {
				t.Fatalf("key = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestKeyMatchesStandardLibrary compares the chunked implementation with
// crypto/pbkdf2 (the previous implementation) around the yield boundaries,
// for key lengths of one, part of two and two blocks.
func TestKeyMatchesStandardLibrary(t *testing.T) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		t.Fatal(err)
	}
	for _, iter := range []int{1, 2, yieldEvery - 1, yieldEvery, yieldEvery + 1, 2*yieldEvery + 3} {
		for _, n := range []int{16, 32, 33, 64} {
			for _, pw := range []string{"", "s3cret!", "пароль", strings.Repeat("x", 1024)} {
				want, err := pbkdf2.Key(sha256.New, pw, salt, iter, n)
				if err != nil {
					t.Fatal(err)
				}
				if got := key(pw, salt, iter, n); !bytes.Equal(got, want) {
					t.Fatalf("iter %d, keyLen %d, password %.10q: %x, want %x", iter, n, pw, got, want)
				}
			}
		}
	}
}

// TestHashIsStandardPBKDF2 checks a pooled hasher's output with
// crypto/pbkdf2: hashes stay byte-identical to the earlier implementation.
func TestHashIsStandardPBKDF2(t *testing.T) {
	h := New(MinIterations).WithLimits(Limits{Concurrency: 1})
	s, err := h.Hash("Adm1n#Passw0rd")
	if err != nil {
		t.Fatal(err)
	}
	iter, salt, k, err := parse(s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pbkdf2.Key(sha256.New, "Adm1n#Passw0rd", salt, iter, len(k))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k, want) {
		t.Fatalf("hash key %s, crypto/pbkdf2 %s", base64.RawStdEncoding.EncodeToString(k), base64.RawStdEncoding.EncodeToString(want))
	}
}

// BenchmarkKey compares one 600 000-iteration key with crypto/pbkdf2. It
// also reports cpu-ns/op (the process's user+system time per key), which a
// busy machine disturbs far less than the wall time.
func BenchmarkKey(b *testing.B) {
	salt := []byte("0123456789abcdef")
	b.Run("chunked", func(b *testing.B) {
		c0 := processCPU()
		for b.Loop() {
			key("Adm1n#Passw0rd", salt, 600000, keyLen)
		}
		b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("stdlib", func(b *testing.B) {
		c0 := processCPU()
		for b.Loop() {
			if _, err := pbkdf2.Key(sha256.New, "Adm1n#Passw0rd", salt, 600000, keyLen); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
	})
}

// processCPU is the process's user+system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
