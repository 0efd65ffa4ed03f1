package token

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/adminkernel/kernel/config"
)

var (
	testKey = []byte("0123456789abcdef0123456789abcdef")
	testKID = config.DerivedKeyID(testKey)
	t0      = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	// std is the header of the tokens testKey signs.
	std = headerFor(testKID)
)

func newTestIssuer(t testing.TB, now time.Time) *Issuer {
	t.Helper()
	i, err := NewIssuer(testKey, "AdminKernel", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return i.WithClock(func() time.Time { return now })
}

func enc(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// forge builds a compact JWS with any header and payload, signed with
// HMAC-SHA256 under key (HMAC-SHA512 when sha512 is set).
func forge(key []byte, header, payload string, useSHA512 bool) string {
	input := enc(header) + "." + enc(payload)
	if useSHA512 {
		m := hmac.New(sha512.New, key)
		m.Write([]byte(input))
		return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	return input + "." + sign(key, input)
}

// claimsJSON returns a valid payload at now, adjusted by edit.
func claimsJSON(now time.Time, edit func(m map[string]any)) string {
	m := map[string]any{
		"sub":         "1001",
		"unique_name": "alice",
		"sid":         "sid-1",
		"iss":         "AdminKernel",
		"aud":         "AdminKernel",
		"jti":         "test-jti-0123456789",
		"iat":         now.Unix(),
		"nbf":         now.Unix(),
		"exp":         now.Add(time.Hour).Unix(),
	}
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestSignKnownAnswer checks the signing primitive against RFC 7515
// Appendix A.1 (HS256).
func TestSignKnownAnswer(t *testing.T) {
	key, err := base64.RawURLEncoding.DecodeString("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
	if err != nil {
		t.Fatal(err)
	}
	input := "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
	if got, want := sign(key, input), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"; got != want {
		t.Fatalf("sign = %s, want %s", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	iss := newTestIssuer(t, t0)
	tests := []struct {
		name string
		in   Claims
		ttl  time.Duration
	}{
		{"user", Claims{UserID: 1001, Account: "alice", SessionID: "sid-1"}, 2 * time.Hour},
		{"super-admin", Claims{UserID: 1, Account: "superAdmin", SessionID: strings.Repeat("s", 43), SuperAdmin: true}, time.Minute},
		{"large id and unicode account", Claims{UserID: 1<<53 - 1, Account: "张三<&>", SessionID: "x"}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, exp, err := iss.Issue(tt.in, tt.ttl)
			if err != nil {
				t.Fatal(err)
			}
			if want := t0.Add(tt.ttl); !exp.Equal(want) {
				t.Errorf("expiry = %v, want %v", exp, want)
			}
			if !strings.HasPrefix(raw, enc(`{"alg":"HS256","kid":"`+testKID+`","typ":"at+jwt"}`)+".") {
				t.Errorf("header of %s is not the HS256 at+jwt header with the key's kid", raw)
			}
			got, err := iss.Verify(raw)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := tt.in
			want.IssuedAt, want.NotBefore, want.ExpiresAt = t0, t0, exp
			if got != want {
				t.Errorf("claims = %+v, want %+v", got, want)
			}
		})
	}
}

func TestPayloadShape(t *testing.T) {
	iss := newTestIssuer(t, t0)
	for _, sadm := range []bool{false, true} {
		raw, _, err := iss.Issue(Claims{UserID: 7, Account: "bob", SessionID: "s7", SuperAdmin: sadm}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(payload, &m); err != nil {
			t.Fatal(err)
		}
		if m["sub"] != "7" || m["unique_name"] != "bob" || m["sid"] != "s7" || m["iss"] != "AdminKernel" {
			t.Errorf("payload %s", payload)
		}
		for _, k := range []string{"iat", "nbf", "exp"} {
			if _, ok := m[k].(float64); !ok {
				t.Errorf("payload %s: %s is not a number", payload, k)
			}
		}
		if v, ok := m["sadm"]; ok != sadm || (sadm && v != "true") {
			t.Errorf("super-admin %v: payload %s", sadm, payload)
		}
	}
}

func TestIssueRejectsIncompleteClaims(t *testing.T) {
	iss := newTestIssuer(t, t0)
	tests := []struct {
		name string
		c    Claims
		ttl  time.Duration
	}{
		{"no user", Claims{Account: "a", SessionID: "s"}, time.Hour},
		{"no session", Claims{UserID: 1, Account: "a"}, time.Hour},
		{"no account", Claims{UserID: 1, SessionID: "s"}, time.Hour},
		{"session id too long", Claims{UserID: 1, Account: "a", SessionID: strings.Repeat("s", 65)}, time.Hour},
		{"no lifetime", Claims{UserID: 1, Account: "a", SessionID: "s"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := iss.Issue(tt.c, tt.ttl); err == nil {
				t.Fatal("Issue succeeded")
			}
		})
	}
}

func TestNewIssuerValidates(t *testing.T) {
	tests := []struct {
		name   string
		key    []byte
		issuer string
		skew   time.Duration
	}{
		{"short key", []byte("0123456789abcdef0123456789abcde"), "AdminKernel", 0},
		{"no key", nil, "AdminKernel", 0},
		{"no issuer", testKey, " ", 0},
		{"negative skew", testKey, "AdminKernel", -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewIssuer(tt.key, tt.issuer, tt.skew); err == nil {
				t.Fatal("NewIssuer succeeded")
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	iss := newTestIssuer(t, t0)
	good, _, err := iss.Issue(Claims{UserID: 1001, Account: "alice", SessionID: "sid-1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	refresh, _, err := NewRefreshToken()
	if err != nil {
		t.Fatal(err)
	}
	otherKey := []byte("fedcba9876543210fedcba9876543210")

	tests := []struct {
		name string
		raw  string
		want error
	}{
		{"empty", "", ErrMalformed},
		{"one part", "abc", ErrMalformed},
		{"two parts", parts[0] + "." + parts[1], ErrMalformed},
		{"five parts (JWE)", good + ".x.y", ErrMalformed},
		{"empty payload", parts[0] + ".." + parts[2], ErrMalformed},
		{"too long", parts[0] + "." + strings.Repeat("A", MaxTokenLen) + "." + parts[2], ErrMalformed},
		{"refresh token", refresh, ErrMalformed},
		{"tampered signature", parts[0] + "." + parts[1] + "." + flip(parts[2], 5), ErrSignature},
		{"non-canonical signature encoding", parts[0] + "." + parts[1] + "." + nonCanonical(parts[2]), ErrSignature},
		{"truncated signature", parts[0] + "." + parts[1] + "." + parts[2][:40], ErrSignature},
		{"empty signature", parts[0] + "." + parts[1] + ".", ErrSignature},
		{"tampered payload", parts[0] + "." + enc(claimsJSON(t0, func(m map[string]any) { m["sub"] = "1" })) + "." + parts[2], ErrSignature},
		{"other key", forge(otherKey, std, claimsJSON(t0, nil), false), ErrSignature},
		{"alg none, no signature", enc(`{"alg":"none","typ":"at+jwt"}`) + "." + enc(claimsJSON(t0, nil)) + ".", ErrAlgorithm},
		{"alg none with a signature", forge(testKey, `{"alg":"none","typ":"at+jwt"}`, claimsJSON(t0, nil), false), ErrAlgorithm},
		{"alg NONE", forge(testKey, `{"alg":"NONE","typ":"at+jwt"}`, claimsJSON(t0, nil), false), ErrAlgorithm},
		{"HS512 under the same key", forge(testKey, `{"alg":"HS512","typ":"at+jwt"}`, claimsJSON(t0, nil), true), ErrAlgorithm},
		{"RS256 (key confusion)", forge(testKey, `{"alg":"RS256","typ":"at+jwt"}`, claimsJSON(t0, nil), false), ErrAlgorithm},
		{"RS256 ID token", forge(testKey, `{"alg":"RS256","typ":"JWT","kid":"k1"}`, claimsJSON(t0, nil), false), ErrAlgorithm},
		{"no alg", forge(testKey, `{"typ":"at+jwt"}`, claimsJSON(t0, nil), false), ErrAlgorithm},
		{"typ JWT", forge(testKey, `{"alg":"HS256","typ":"JWT"}`, claimsJSON(t0, nil), false), ErrType},
		{"no typ", forge(testKey, `{"alg":"HS256"}`, claimsJSON(t0, nil), false), ErrType},
		{"typ refresh", forge(testKey, `{"alg":"HS256","typ":"rt+jwt"}`, claimsJSON(t0, nil), false), ErrType},
		{"extra kid", forge(testKey, `{"alg":"HS256","typ":"at+jwt","kid":"../../etc/passwd"}`, claimsJSON(t0, nil), false), ErrHeader},
		{"unknown kid", forge(testKey, headerFor("retired-2026"), claimsJSON(t0, nil), false), ErrKeyID},
		{"kid of the key in another case", forge(testKey, headerFor(strings.ToUpper(testKID)), claimsJSON(t0, nil), false), ErrKeyID},
		{"kid header with whitespace", forge(testKey, `{"alg":"HS256", "kid":"`+testKID+`","typ":"at+jwt"}`, claimsJSON(t0, nil), false), ErrHeader},
		{"kid header reordered", forge(testKey, `{"alg":"HS256","typ":"at+jwt","kid":"`+testKID+`"}`, claimsJSON(t0, nil), false), ErrHeader},
		{"wrong aud", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["aud"] = "OtherService" }), false), ErrAudience},
		{"aud array without the audience", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["aud"] = []string{"a", "b"} }), false), ErrAudience},
		{"empty aud array", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["aud"] = []string{} }), false), ErrAudience},
		{"no aud", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "aud") }), false), ErrAudience},
		{"aud null", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["aud"] = nil }), false), ErrAudience},
		{"aud a number", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["aud"] = 7 }), false), ErrClaims},
		{"no jti", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "jti") }), false), ErrClaims},
		{"empty jti", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["jti"] = "" }), false), ErrClaims},
		{"numeric jti", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["jti"] = 12 }), false), ErrClaims},
		{"jti too long", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["jti"] = strings.Repeat("j", 256) }), false), ErrClaims},
		{"legacy header, wrong aud", forge(testKey, LegacyHeader, claimsJSON(t0, func(m map[string]any) { m["aud"] = "OtherService" }), false), ErrAudience},
		{"jku", forge(testKey, `{"alg":"HS256","typ":"at+jwt","jku":"https://evil.example/jwks"}`, claimsJSON(t0, nil), false), ErrHeader},
		{"reordered header", forge(testKey, `{"typ":"at+jwt","alg":"HS256"}`, claimsJSON(t0, nil), false), ErrHeader},
		{"header not JSON", forge(testKey, `not json`, claimsJSON(t0, nil), false), ErrMalformed},
		{"header not base64url", "e+J.x.y", ErrMalformed},
		{"expired beyond skew", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["exp"] = t0.Add(-31 * time.Second).Unix() }), false), ErrExpired},
		{"expired at skew", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["exp"] = t0.Add(-30 * time.Second).Unix() }), false), ErrExpired},
		{"nbf beyond skew", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["nbf"] = t0.Add(31 * time.Second).Unix() }), false), ErrNotYetValid},
		{"iat beyond skew", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["iat"] = t0.Add(time.Hour).Unix() }), false), ErrNotYetValid},
		{"wrong issuer", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["iss"] = "SmartAdmin" }), false), ErrIssuer},
		{"no issuer", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "iss") }), false), ErrIssuer},
		{"no sid", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "sid") }), false), ErrClaims},
		{"sid too long", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["sid"] = strings.Repeat("s", 65) }), false), ErrClaims},
		{"no sub", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "sub") }), false), ErrClaims},
		{"numeric sub", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["sub"] = 1001 }), false), ErrClaims},
		{"sub not a number", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["sub"] = "alice" }), false), ErrClaims},
		{"sub zero", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["sub"] = "0" }), false), ErrClaims},
		{"no account", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "unique_name") }), false), ErrClaims},
		{"sadm not true", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["sadm"] = "yes" }), false), ErrClaims},
		{"sadm boolean", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["sadm"] = true }), false), ErrClaims},
		{"no exp", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { delete(m, "exp") }), false), ErrClaims},
		{"fractional exp", forge(testKey, std, claimsJSON(t0, func(m map[string]any) { m["exp"] = float64(t0.Unix()) + 3600.5 }), false), ErrClaims},
		{"payload not JSON", forge(testKey, std, `{"sub":`, false), ErrClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := iss.Verify(tt.raw)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %+v, %v; want %v", c, err, tt.want)
			}
			if c != (Claims{}) {
				t.Errorf("claims returned with an error: %+v", c)
			}
			if strings.Contains(err.Error(), "eyJ") {
				t.Errorf("the error %q quotes the token", err)
			}
		})
	}
}

// nonCanonical sets one of the two unused low bits of the last character of
// an unpadded base64url encoding of 32 bytes: a lenient decoder would read
// the same bytes.
func nonCanonical(sig string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	return sig[:len(sig)-1] + string(alphabet[last^1])
}

func TestNonCanonicalHelper(t *testing.T) {
	sig := sign(testKey, "a.b")
	alt := nonCanonical(sig)
	a, err1 := base64.RawURLEncoding.DecodeString(sig)
	b, err2 := base64.RawURLEncoding.DecodeString(alt)
	if alt == sig || err1 != nil || err2 != nil || string(a) != string(b) {
		t.Fatalf("nonCanonical(%s) = %s: not another encoding of the same bytes", sig, alt)
	}
}

func TestVerifyAcceptsWithinSkew(t *testing.T) {
	iss := newTestIssuer(t, t0)
	tests := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"expired 29 s ago", func(m map[string]any) { m["exp"] = t0.Add(-29 * time.Second).Unix() }},
		{"nbf 30 s ahead", func(m map[string]any) { m["nbf"] = t0.Add(30 * time.Second).Unix() }},
		{"iat 30 s ahead", func(m map[string]any) { m["iat"] = t0.Add(30 * time.Second).Unix() }},
		{"no nbf nor iat", func(m map[string]any) { delete(m, "nbf"); delete(m, "iat") }},
		{"unknown claims", func(m map[string]any) { m["orgId"] = "12"; m["scope"] = "anything" }},
		{"aud an array holding the audience", func(m map[string]any) { m["aud"] = []string{"other", "AdminKernel"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := iss.Verify(forge(testKey, std, claimsJSON(t0, tt.edit), false)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestVerifyCopiesStrings: Fiber hands out header values that alias a
// buffer reused by the next request; claims must not alias the token.
func TestVerifyCopiesStrings(t *testing.T) {
	iss := newTestIssuer(t, t0)
	raw, _, err := iss.Issue(Claims{UserID: 5, Account: "carol", SessionID: "sid-carol"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte(raw)
	c, err := iss.Verify(unsafe.String(&buf[0], len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'x'
	}
	if c.Account != "carol" || c.SessionID != "sid-carol" {
		t.Fatalf("claims changed with the request buffer: %+v", c)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	iss := newTestIssuer(t, t0)
	raws := make([]string, 8)
	for i := range raws {
		var err error
		raws[i], _, err = iss.Issue(Claims{UserID: int64(i + 1), Account: "u", SessionID: "s"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, len(raws))
	for i, raw := range raws {
		go func() {
			for range 200 {
				c, err := iss.Verify(raw)
				if err != nil || c.UserID != int64(i+1) {
					done <- errors.Join(err, errors.New("wrong claims"))
					return
				}
				if _, err := iss.Verify(raw[:len(raw)-2] + "AA"); !errors.Is(err, ErrSignature) {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range raws {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestRefreshToken(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		plain, hash, err := NewRefreshToken()
		if err != nil {
			t.Fatal(err)
		}
		b, err := base64.RawURLEncoding.Strict().DecodeString(plain)
		if err != nil || len(b) != RefreshTokenBytes {
			t.Fatalf("%q is not 64 base64url bytes (%v)", plain, err)
		}
		if len(hash) != 64 || hash != HashRefreshToken(plain) || strings.Contains(hash, plain) {
			t.Fatalf("hash %q of %q", hash, plain)
		}
		if seen[plain] {
			t.Fatalf("duplicate token %q", plain)
		}
		seen[plain] = true
	}
	// SHA-256("abc"), FIPS 180-2 appendix B.1.
	if got := HashRefreshToken("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("HashRefreshToken(abc) = %s", got)
	}
}

// benchToken is an issuer and a token of the usual size.
func benchToken(b *testing.B) (*Issuer, string) {
	iss := newTestIssuer(b, time.Now())
	raw, _, err := iss.Issue(Claims{UserID: 123456789012, Account: "admin", SessionID: strings.Repeat("s", 43)}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	return iss, raw
}

func BenchmarkVerify(b *testing.B) {
	iss, raw := benchToken(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := iss.Verify(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyUncached is the first presentation of a token: HMAC and
// claims decoding (BenchmarkVerify measures the later ones).
func BenchmarkVerifyUncached(b *testing.B) {
	iss, raw := benchToken(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := iss.verify(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssue(b *testing.B) {
	iss := newTestIssuer(b, time.Now())
	c := Claims{UserID: 123456789012, Account: "admin", SessionID: strings.Repeat("s", 43)}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := iss.Issue(c, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}
