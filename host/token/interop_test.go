package token_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/token"
)

// The kernel signs and verifies its HS256 access tokens with the standard
// library (fewer allocations on the hot path). These tests pin it to
// golang-jwt v5, the reference implementation of the design card, in both
// directions.
func TestInteropWithGolangJWT(t *testing.T) {
	key := []byte("interop-signing-key-0123456789abcdef0123")
	other := []byte("second-ring-key-0123456789abcdef012345")
	// A ring of two keys: key signs, both verify.
	iss, err := token.New(token.Options{Keys: []token.Key{{ID: "2026-11", Secret: key}, {Secret: other}}, Issuer: "AdminKernel", Skew: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	otherKid := config.DerivedKeyID(other)

	t.Run("golang-jwt verifies what the kernel issues", func(t *testing.T) {
		raw, exp, err := iss.Issue(token.Claims{UserID: 42, Account: "alice", SessionID: "sid-1", SuperAdmin: true}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		claims := jwt.MapClaims{}
		parsed, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return key, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("AdminKernel"), jwt.WithAudience("AdminKernel"),
			jwt.WithExpirationRequired(), jwt.WithIssuedAt())
		if err != nil || !parsed.Valid {
			t.Fatalf("golang-jwt refused the kernel's token: %v", err)
		}
		if parsed.Header["typ"] != "at+jwt" || parsed.Header["kid"] != "2026-11" {
			t.Errorf("header = %v, want typ at+jwt and kid 2026-11", parsed.Header)
		}
		if jti, _ := claims["jti"].(string); len(jti) != 22 {
			t.Errorf("jti = %v, want 22 base64url characters", claims["jti"])
		}
		want := map[string]any{"sub": "42", "unique_name": "alice", "sid": "sid-1", "sadm": "true", "iss": "AdminKernel", "aud": "AdminKernel"}
		for k, v := range want {
			if claims[k] != v {
				t.Errorf("claim %s = %v, want %v", k, claims[k], v)
			}
		}
		for _, k := range []string{"iat", "nbf"} {
			if _, ok := claims[k]; !ok {
				t.Errorf("claim %s missing", k)
			}
		}
		if got, _ := claims.GetExpirationTime(); got == nil || got.Unix() != exp.Unix() {
			t.Errorf("exp = %v, want %v", got, exp)
		}
	})

	sign := func(t *testing.T, method jwt.SigningMethod, typ, kid string, claims jwt.MapClaims, k any) string {
		t.Helper()
		tok := jwt.NewWithClaims(method, claims)
		tok.Header["typ"] = typ
		if kid != "" {
			tok.Header["kid"] = kid
		}
		raw, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	now := time.Now()
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": strconv.Itoa(7), "unique_name": "bob", "sid": "sid-7", "iss": "AdminKernel", "aud": "AdminKernel",
			"jti": "golang-jwt-1", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}

	accepted := []struct {
		name string
		raw  string
	}{
		// golang-jwt marshals its header map with sorted keys, which gives
		// exactly the canonical header bytes the kernel accepts.
		{"first key", sign(t, jwt.SigningMethodHS256, "at+jwt", "2026-11", base(), key)},
		{"second key of the ring", sign(t, jwt.SigningMethodHS256, "at+jwt", otherKid, base(), other)},
		{"aud as an array", sign(t, jwt.SigningMethodHS256, "at+jwt", "2026-11", func() jwt.MapClaims {
			c := base()
			c["aud"] = []string{"AdminKernel", "elsewhere"}
			return c
		}(), key)},
		{"pre-ring token: no kid, no jti, no aud", sign(t, jwt.SigningMethodHS256, "at+jwt", "", func() jwt.MapClaims {
			c := base()
			delete(c, "jti")
			delete(c, "aud")
			return c
		}(), key)},
	}
	for _, tt := range accepted {
		t.Run("the kernel verifies a golang-jwt token: "+tt.name, func(t *testing.T) {
			c, err := iss.Verify(tt.raw)
			if err != nil {
				t.Fatalf("the kernel refused a golang-jwt HS256 at+jwt token: %v", err)
			}
			if c.UserID != 7 || c.Account != "bob" || c.SessionID != "sid-7" || c.SuperAdmin {
				t.Fatalf("claims = %+v", c)
			}
		})
	}

	refused := []struct {
		name string
		raw  string
	}{
		{"HS512 by golang-jwt", sign(t, jwt.SigningMethodHS512, "at+jwt", "2026-11", base(), key)},
		{"plain JWT typ", sign(t, jwt.SigningMethodHS256, "JWT", "2026-11", base(), key)},
		{"other key", sign(t, jwt.SigningMethodHS256, "at+jwt", "2026-11", base(), []byte("another-key-0123456789abcdef0123456789"))},
		{"kid of the other key", sign(t, jwt.SigningMethodHS256, "at+jwt", otherKid, base(), key)},
		{"unknown kid", sign(t, jwt.SigningMethodHS256, "at+jwt", "retired", base(), key)},
		{"pre-ring header with the second key", sign(t, jwt.SigningMethodHS256, "at+jwt", "", base(), other)},
		{"wrong aud", sign(t, jwt.SigningMethodHS256, "at+jwt", "2026-11", func() jwt.MapClaims {
			c := base()
			c["aud"] = "OtherService"
			return c
		}(), key)},
		{"no jti", sign(t, jwt.SigningMethodHS256, "at+jwt", "2026-11", func() jwt.MapClaims {
			c := base()
			delete(c, "jti")
			return c
		}(), key)},
		{"expired", sign(t, jwt.SigningMethodHS256, "at+jwt", "2026-11", func() jwt.MapClaims {
			c := base()
			c["exp"] = now.Add(-time.Hour).Unix()
			return c
		}(), key)},
		{"none", func() string {
			raw, _ := jwt.NewWithClaims(jwt.SigningMethodNone, base()).SignedString(jwt.UnsafeAllowNoneSignatureType)
			return raw
		}()},
	}
	for _, tt := range refused {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			if _, err := iss.Verify(tt.raw); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
