package token

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
)

var (
	oldKey = []byte("old-signing-key-0123456789abcdef0123")
	newKey = []byte("new-signing-key-0123456789abcdef0123")
)

func ringIssuer(t *testing.T, keys ...Key) *Issuer {
	t.Helper()
	i, err := New(Options{Keys: keys, Issuer: "AdminKernel", Skew: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return i.WithClock(func() time.Time { return t0 })
}

func issue(t *testing.T, i *Issuer) string {
	t.Helper()
	raw, _, err := i.Issue(Claims{UserID: 9, Account: "ivan", SessionID: "sid-9"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func headerOf(t *testing.T, raw string) map[string]string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// The rotation of docs/design/security.md step by step: the first key signs,
// every key of the ring verifies, a key removed from the ring no longer
// verifies anything.
func TestKeyRingRotation(t *testing.T) {
	before := ringIssuer(t, Key{ID: "2026-05", Secret: oldKey})
	added := ringIssuer(t, Key{ID: "2026-05", Secret: oldKey}, Key{ID: "2026-11", Secret: newKey})
	moved := ringIssuer(t, Key{ID: "2026-11", Secret: newKey}, Key{ID: "2026-05", Secret: oldKey})
	after := ringIssuer(t, Key{ID: "2026-11", Secret: newKey})

	if got := headerOf(t, issue(t, added))["kid"]; got != "2026-05" {
		t.Errorf("with the new key second, tokens carry kid %q, want the first key's 2026-05", got)
	}
	if got := headerOf(t, issue(t, moved))["kid"]; got != "2026-11" {
		t.Errorf("with the new key first, tokens carry kid %q, want 2026-11", got)
	}
	oldTok, newTok := issue(t, before), issue(t, moved)
	tests := []struct {
		name string
		by   *Issuer
		raw  string
		want error
	}{
		{"old token, new key added second", added, oldTok, nil},
		{"old token, new key moved first (second key of the ring)", moved, oldTok, nil},
		{"new token on a replica still on the added ring", added, newTok, nil},
		{"new token before the ring knows the key", before, newTok, ErrKeyID},
		{"old token after the old key was removed", after, oldTok, ErrKeyID},
		{"new token after the old key was removed", after, newTok, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.by.Verify(tt.raw)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
			if err == nil && (c.UserID != 9 || c.Account != "ivan") {
				t.Errorf("claims = %+v", c)
			}
		})
	}
}

// A token must name the key that signed it: the same claims signed with
// one key of the ring under another key's kid fail.
func TestKeyRingKidSelectsTheKey(t *testing.T) {
	ring := ringIssuer(t, Key{ID: "a", Secret: newKey}, Key{ID: "b", Secret: oldKey})
	payload := claimsJSON(t0, nil)
	for _, tt := range []struct {
		name string
		kid  string
		key  []byte
		want error
	}{
		{"a with key a", "a", newKey, nil},
		{"b with key b", "b", oldKey, nil},
		{"a with key b", "a", oldKey, ErrSignature},
		{"b with key a", "b", newKey, ErrSignature},
		{"c with key a", "c", newKey, ErrKeyID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ring.Verify(forge(tt.key, headerFor(tt.kid), payload, false)); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// Tokens issued before key rings (header without kid, no jti, no aud)
// verify with the ring's first key only.
func TestLegacyHeader(t *testing.T) {
	legacy := claimsJSON(t0, func(m map[string]any) { delete(m, "jti"); delete(m, "aud") })
	one := ringIssuer(t, Key{Secret: testKey})
	if c, err := one.Verify(forge(testKey, LegacyHeader, legacy, false)); err != nil || c.UserID != 1001 {
		t.Fatalf("a pre-upgrade token was refused: %+v, %v", c, err)
	}
	second := ringIssuer(t, Key{Secret: newKey}, Key{Secret: testKey})
	if _, err := second.Verify(forge(testKey, LegacyHeader, legacy, false)); !errors.Is(err, ErrSignature) {
		t.Fatalf("a pre-upgrade token of the ring's second key: %v, want %v", err, ErrSignature)
	}
}

// Two tokens for the same session in the same second differ (jti), and
// carry aud.
func TestIssueUniqueTokens(t *testing.T) {
	iss := newTestIssuer(t, t0)
	seen := map[string]bool{}
	jtis := map[string]bool{}
	for range 50 {
		raw := issue(t, iss)
		if seen[raw] {
			t.Fatalf("Issue returned the same token twice in one second: %s", raw)
		}
		seen[raw] = true
		payload, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(payload, &m); err != nil {
			t.Fatal(err)
		}
		jti, _ := m["jti"].(string)
		if b, err := base64.RawURLEncoding.Strict().DecodeString(jti); err != nil || len(b) != JTIBytes || jtis[jti] {
			t.Fatalf("jti %q: not %d fresh random bytes in base64url (%v)", jti, JTIBytes, err)
		}
		jtis[jti] = true
		if m["aud"] != "AdminKernel" {
			t.Fatalf("aud = %v, want the issuer", m["aud"])
		}
	}
}

func TestAudienceSetting(t *testing.T) {
	iss, err := New(Options{Keys: []Key{{Secret: testKey}}, Issuer: "AdminKernel", Audience: "admin-api"})
	if err != nil {
		t.Fatal(err)
	}
	iss = iss.WithClock(func() time.Time { return t0 })
	if _, err := iss.Verify(issue(t, iss)); err != nil {
		t.Fatalf("own token: %v", err)
	}
	// A token of another deployment sharing the key but not the audience.
	other := ringIssuer(t, Key{Secret: testKey})
	if _, err := iss.Verify(issue(t, other)); !errors.Is(err, ErrAudience) {
		t.Fatalf("token for aud AdminKernel: %v, want %v", err, ErrAudience)
	}
	for _, aud := range []any{"admin-api", []string{"x", "admin-api"}} {
		raw := forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["aud"] = aud }), false)
		if _, err := iss.Verify(raw); err != nil {
			t.Errorf("aud %v: %v", aud, err)
		}
	}
}

func TestNewValidatesRing(t *testing.T) {
	tests := []struct {
		name string
		keys []Key
	}{
		{"no key", nil},
		{"short second key", []Key{{Secret: testKey}, {Secret: []byte("short")}}},
		{"duplicate ids", []Key{{ID: "a", Secret: testKey}, {ID: "a", Secret: newKey}}},
		{"same key twice without ids", []Key{{Secret: testKey}, {Secret: testKey}}},
		{"id with a quote", []Key{{ID: `a"b`, Secret: testKey}}},
		{"id too long", []Key{{ID: strings.Repeat("i", 65), Secret: testKey}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(Options{Keys: tt.keys, Issuer: "AdminKernel"}); err == nil {
				t.Fatal("New succeeded")
			}
		})
	}
}

func TestKeysFromSettings(t *testing.T) {
	const k1, k2 = "first key of the ring, 32 bytes+", "second key of the ring, 32 bytes"
	cfg := devConfig(t)
	cfg.Environment = config.Production
	cfg.Service.Security.Jwt.SigningKeys = []config.JwtKey{{ID: "2026-11", Key: k1}, {Key: k2}}
	keys, err := Keys(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != "2026-11" || string(keys[0].Secret) != k1 ||
		keys[1].ID != config.DerivedKeyID([]byte(k2)) || string(keys[1].Secret) != k2 {
		t.Fatalf("keys = %+v", keys)
	}
	if key, err := SigningKey(cfg); err != nil || string(key) != k1 {
		t.Fatalf("SigningKey = %q, %v; want the first key", key, err)
	}

	// SigningKey is the ring of one key with the derived id: moving it to
	// an id-less SigningKeys entry keeps its tokens valid.
	one := devConfig(t)
	one.Service.Security.Jwt.SigningKey = k2
	a, err := FromConfig(one)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.KeyIDs(); len(got) != 1 || got[0] != config.DerivedKeyID([]byte(k2)) {
		t.Fatalf("SigningKey ring = %v", got)
	}
	raw, _, err := a.Issue(Claims{UserID: 1, Account: "a", SessionID: "s"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(raw); err != nil {
		t.Fatalf("a SigningKey token under the ring holding the key second: %v", err)
	}

	both := devConfig(t)
	both.Service.Security.Jwt.SigningKey = k1
	both.Service.Security.Jwt.SigningKeys = []config.JwtKey{{Key: k2}}
	if _, err := Keys(both); err == nil {
		t.Fatal("SigningKey and SigningKeys together were accepted")
	}
}

func TestDerivedKeyID(t *testing.T) {
	a, b := config.DerivedKeyID(testKey), config.DerivedKeyID(newKey)
	if a == b || len(a) != 17 || !keyID.MatchString(a) || strings.Contains(a, string(testKey[:8])) {
		t.Fatalf("DerivedKeyID = %q, %q", a, b)
	}
	if a != config.DerivedKeyID(testKey) {
		t.Fatal("DerivedKeyID is not deterministic")
	}
}
