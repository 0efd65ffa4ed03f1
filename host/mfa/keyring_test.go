package mfa

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/adminkernel/kernel/config"
)

func key(id string, b byte) Key { return Key{ID: id, Secret: bytes.Repeat([]byte{b}, keyBytes)} }

func TestKeyRingRoundTripAndRotation(t *testing.T) {
	old, err := NewKeyRing([]Key{key("k1", 1)})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal([]byte("JBSWY3DPEHPK3PXP"), []byte("u1"))
	if err != nil {
		t.Fatal(err)
	}
	if KeyOf(sealed) != "k1" || strings.Contains(sealed, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("sealed value %q", sealed)
	}
	rotated, err := NewKeyRing([]Key{key("k2", 2), key("k1", 1)})
	if err != nil {
		t.Fatal(err)
	}
	retired, err := NewKeyRing([]Key{key("k2", 2)})
	if err != nil {
		t.Fatal(err)
	}
	resealed, err := rotated.Seal([]byte("x"), []byte("u1"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		ring   *KeyRing
		sealed string
		aad    string
		want   string
	}{
		{"same ring", old, sealed, "u1", "JBSWY3DPEHPK3PXP"},
		{"old key still in the rotated ring", rotated, sealed, "u1", "JBSWY3DPEHPK3PXP"},
		{"new values use the first key", retired, resealed, "u1", "x"},
		{"retired key", retired, sealed, "u1", ""},
		{"another row", old, sealed, "u2", ""},
		{"tampered", old, sealed[:len(sealed)-2] + "AA", "u1", ""},
		{"malformed", old, "garbage", "u1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ring.Open(tt.sealed, []byte(tt.aad))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("opened %q", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestNewKeyRingRefuses(t *testing.T) {
	tests := []struct {
		name string
		keys []Key
	}{
		{"none", nil},
		{"short key", []Key{{ID: "a", Secret: []byte("short")}}},
		{"bad id", []Key{key("a b", 1)}},
		{"empty id", []Key{key("", 1)}},
		{"duplicate id", []Key{key("a", 1), key("a", 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewKeyRing(tt.keys); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestKeysFromConfig(t *testing.T) {
	dir := t.TempDir()
	dev := &config.Config{Environment: "Development", ContentRoot: dir}
	dev.Service.DataDir = "data"
	a, err := KeysFromConfig(dev)
	if err != nil {
		t.Fatal(err)
	}
	b, err := KeysFromConfig(dev)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || !bytes.Equal(a[0].Secret, b[0].Secret) || len(a[0].Secret) != keyBytes {
		t.Fatalf("development key not kept: %v %v", a, b)
	}
	if _, err := NewKeyRing(a); err != nil {
		t.Fatal(err)
	}
	if got := filepath.Join(dir, "data", DevKeyFile); dev.DataPath() != filepath.Dir(got) {
		t.Fatalf("data path %s", dev.DataPath())
	}
	prod := &config.Config{Environment: "Production", ContentRoot: dir}
	if _, err := KeysFromConfig(prod); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Production without keys: %v", err)
	}
	prod.Service.Security.Totp.EncryptionKeys = []config.TotpKey{{ID: "2026", Key: config.Secret("AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=")}}
	keys, err := KeysFromConfig(prod)
	if err != nil || keys[0].ID != "2026" || !bytes.Equal(keys[0].Secret, key("", 1).Secret) {
		t.Fatalf("configured key: %v %v", keys, err)
	}
}

func TestMatchStep(t *testing.T) {
	seed, _, err := NewSeed("AdminKernel", "alice")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_015, 0)
	codeAt := func(at time.Time) string {
		c, err := totp.GenerateCodeCustom(seed, at, totp.ValidateOpts{Period: Period, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := now.Unix() / Period
	tests := []struct {
		name   string
		code   string
		ok     bool
		offset int64
	}{
		{"now", codeAt(now), true, 0},
		{"one step back", codeAt(now.Add(-Period * time.Second)), true, -1},
		{"one step ahead", codeAt(now.Add(Period * time.Second)), true, 1},
		{"two steps back", codeAt(now.Add(-2 * Period * time.Second)), false, 0},
		{"not digits", "12a456", false, 0},
		{"too short", "12345", false, 0},
		{"empty", "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := matchStep(seed, tt.code, now)
			if ok != tt.ok || (ok && step != base+tt.offset) {
				// A code of another step may collide by chance (1 in 10^6).
				t.Fatalf("matchStep(%q) = %d, %v; want %v at offset %d", tt.code, step-base, ok, tt.ok, tt.offset)
			}
		})
	}
}

func TestRecoveryCodes(t *testing.T) {
	c, err := newRecoveryCode()
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 19 || strings.Count(c, "-") != 3 {
		t.Fatalf("code %q", c)
	}
	variants := []string{c, strings.ToLower(c), strings.ReplaceAll(c, "-", ""), " " + strings.ReplaceAll(c, "-", " ") + " "}
	for _, v := range variants {
		if hashRecoveryCode(v) != hashRecoveryCode(c) {
			t.Errorf("%q does not match %q", v, c)
		}
	}
	d, _ := newRecoveryCode()
	if hashRecoveryCode(d) == hashRecoveryCode(c) {
		t.Error("two codes hash alike")
	}
}
