package token_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/adminkernel/kernel/host/token"
)

// The kernel signs and verifies its HS256 access tokens with the standard
// library (fewer allocations on the hot path). These tests pin it to
// golang-jwt v5, the reference implementation of the design card, in both
// directions.
func TestInteropWithGolangJWT(t *testing.T) {
	key := []byte("interop-signing-key-0123456789abcdef0123")
	iss, err := token.NewIssuer(key, "AdminKernel", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("golang-jwt verifies what the kernel issues", func(t *testing.T) {
		raw, exp, err := iss.Issue(token.Claims{UserID: 42, Account: "alice", SessionID: "sid-1", SuperAdmin: true}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		claims := jwt.MapClaims{}
		parsed, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return key, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("AdminKernel"), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
		if err != nil || !parsed.Valid {
			t.Fatalf("golang-jwt refused the kernel's token: %v", err)
		}
		if parsed.Header["typ"] != "at+jwt" {
			t.Errorf("typ = %v, want at+jwt", parsed.Header["typ"])
		}
		want := map[string]any{"sub": "42", "unique_name": "alice", "sid": "sid-1", "sadm": "true", "iss": "AdminKernel"}
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

	sign := func(t *testing.T, method jwt.SigningMethod, typ string, claims jwt.MapClaims, k any) string {
		t.Helper()
		tok := jwt.NewWithClaims(method, claims)
		tok.Header["typ"] = typ
		raw, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	now := time.Now()
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": strconv.Itoa(7), "unique_name": "bob", "sid": "sid-7", "iss": "AdminKernel",
			"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}

	t.Run("the kernel verifies a golang-jwt token with its header", func(t *testing.T) {
		// golang-jwt marshals its header map with sorted keys, which gives
		// exactly the canonical header bytes the kernel accepts.
		raw := sign(t, jwt.SigningMethodHS256, "at+jwt", base(), key)
		c, err := iss.Verify(raw)
		if err != nil {
			t.Fatalf("the kernel refused a golang-jwt HS256 at+jwt token: %v", err)
		}
		if c.UserID != 7 || c.Account != "bob" || c.SessionID != "sid-7" || c.SuperAdmin {
			t.Fatalf("claims = %+v", c)
		}
	})

	refused := []struct {
		name string
		raw  string
	}{
		{"HS512 by golang-jwt", sign(t, jwt.SigningMethodHS512, "at+jwt", base(), key)},
		{"plain JWT typ", sign(t, jwt.SigningMethodHS256, "JWT", base(), key)},
		{"other key", sign(t, jwt.SigningMethodHS256, "at+jwt", base(), []byte("another-key-0123456789abcdef0123456789"))},
		{"expired", sign(t, jwt.SigningMethodHS256, "at+jwt", func() jwt.MapClaims {
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
