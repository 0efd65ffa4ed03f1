package token_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/token"
)

// The ring these kernels run with: 2026-11 signs, 2026-05 still verifies.
const (
	currentKey  = "current-ring-key-0123456789abcdef0123"
	previousKey = "previous-ring-key-0123456789abcdef012"
	retiredKey  = "retired-ring-key-0123456789abcdef01234"
)

func ringKernel(t *testing.T, extra ...string) *kerneltest.Kernel {
	t.Helper()
	k := kerneltest.Start(t, append([]string{
		"Service__Security__Jwt__SigningKeys__0__Id=2026-11",
		"Service__Security__Jwt__SigningKeys__0__Key=" + currentKey,
		"Service__Security__Jwt__SigningKeys__1__Id=2026-05",
		"Service__Security__Jwt__SigningKeys__1__Key=" + previousKey,
	}, extra...))
	k.Leaks.Secrets = append(k.Leaks.Secrets, currentKey, previousKey, retiredKey)
	return k
}

// payload decodes an access token's claims.
func payload(t *testing.T, raw string) map[string]any {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Two refreshes within one second used to return byte-identical access
// tokens (same sub, sid, iat, exp): every token now carries its own jti.
func TestRefreshesInOneSecondGiveDistinctTokens(t *testing.T) {
	k := ringKernel(t)
	tp := k.Login("superAdmin", kerneltest.AdminPassword)
	prev := tp.AccessToken
	rt := tp.RefreshToken
	// Refresh until two successive tokens share their iat second (the
	// first pair almost always does); then they must still differ.
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Fatal("no two successive refreshes fell in the same second")
		}
		var next kerneltest.Tokens
		k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": rt}).
			Expect(t, "refresh", 200, 0).Decode(t, &next)
		rt = next.RefreshToken
		a, b := payload(t, prev), payload(t, next.AccessToken)
		if a["iat"] != b["iat"] {
			prev = next.AccessToken
			continue
		}
		if next.AccessToken == prev {
			t.Fatal("two refreshes in one second returned the same access token")
		}
		if a["jti"] == b["jti"] || a["jti"] == nil {
			t.Fatalf("jti %v and %v", a["jti"], b["jti"])
		}
		if a["sid"] != b["sid"] || b["aud"] != "AdminKernel" {
			t.Fatalf("payloads %v and %v", a, b)
		}
		for _, raw := range []string{prev, next.AccessToken} {
			k.Do("GET", "/api/v1/ping", raw, nil).Expect(t, "ping", 200, 0)
		}
		return
	}
}

// Tokens for the super-admin's live session, signed with any key: the
// kernel accepts the ring's keys only, picked by kid.
func TestKeyRingOverHTTP(t *testing.T) {
	k := ringKernel(t, "Service__Security__Jwt__Audience=admin-api")
	login := k.Login("superAdmin", kerneltest.AdminPassword)
	claims := payload(t, login.AccessToken)
	if claims["aud"] != "admin-api" {
		t.Fatalf("aud = %v, want the configured audience", claims["aud"])
	}
	uid, _ := strconv.ParseInt(claims["sub"].(string), 10, 64)
	c := token.Claims{UserID: uid, Account: "superAdmin", SessionID: claims["sid"].(string), SuperAdmin: true}
	issue := func(t *testing.T, aud string, keys ...token.Key) string {
		t.Helper()
		iss, err := token.New(token.Options{Keys: keys, Issuer: "AdminKernel", Audience: aud})
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := iss.Issue(c, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	tests := []struct {
		name string
		raw  string
		code errcode.Code
	}{
		{"the kernel's own token (first key)", login.AccessToken, errcode.Success},
		{"signed with the second key of the ring", issue(t, "admin-api", token.Key{ID: "2026-05", Secret: []byte(previousKey)}), errcode.Success},
		{"signed with a key retired from the ring", issue(t, "admin-api", token.Key{ID: "2025-11", Secret: []byte(retiredKey)}), errcode.TokenInvalid},
		{"retired key under the kid of a ring key", issue(t, "admin-api", token.Key{ID: "2026-05", Secret: []byte(retiredKey)}), errcode.TokenInvalid},
		{"ring key under an unknown kid", issue(t, "admin-api", token.Key{ID: "2027-01", Secret: []byte(currentKey)}), errcode.TokenInvalid},
		{"wrong aud", issue(t, "AdminKernel", token.Key{ID: "2026-11", Secret: []byte(currentKey)}), errcode.TokenInvalid},
		{"no jti, no aud", legacyLike(t, login.AccessToken, []byte(currentKey), "2026-11"), errcode.TokenInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k.Do("GET", "/api/v1/ping", tt.raw, nil).ExpectCode(t, "ping", tt.code)
		})
	}
}

// legacyLike re-signs raw's claims without jti and aud under kid.
func legacyLike(t *testing.T, raw string, key []byte, kid string) string {
	t.Helper()
	m := payload(t, raw)
	delete(m, "jti")
	delete(m, "aud")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString([]byte(`{"alg":"HS256","kid":"`+kid+`","typ":"at+jwt"}`)) + "." + enc.EncodeToString(b)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(input))
	return input + "." + enc.EncodeToString(mac.Sum(nil))
}
