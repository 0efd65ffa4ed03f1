package link_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/file/link"
)

var (
	keyA = link.Key{ID: "a", Secret: []byte(strings.Repeat("A", 32))}
	keyB = link.Key{ID: "b", Secret: []byte(strings.Repeat("B", 32))}
	t0   = time.Unix(1_800_000_000, 0)
)

// legacySig is a signature as versions before issue times made it:
// "<key id>.<base64url HMAC over label, purpose, id, exp>", written here
// from the format rather than taken from the package.
func legacySig(k link.Key, purpose string, id, exp int64) string {
	h := hmac.New(sha256.New, k.Secret)
	fmt.Fprintf(h, "adminkernel file link\x00%s\x00%d\x00%d", purpose, id, exp)
	return k.ID + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// issue returns the (exp, sig) of a view link of id 42 issued at `at` by
// a ring of lifetime ttl.
func issue(t *testing.T, keys []link.Key, ttl time.Duration, at time.Time) (int64, string) {
	t.Helper()
	raw, err := link.New(keys, ttl).ViewURL(42, at)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	var exp int64
	if _, err := fmt.Sscan(u.Query().Get("exp"), &exp); err != nil {
		t.Fatal(err)
	}
	return exp, u.Query().Get("sig")
}

// TestLifetimeAppliesToIssuedLinks: a link is valid while now is before
// its own expiry and before its issue time plus the lifetime in force when
// it is checked; its key must still be in the ring.
func TestLifetimeAppliesToIssuedLinks(t *testing.T) {
	ring := func(ttl time.Duration, keys ...link.Key) *link.Ring { return link.New(keys, ttl) }
	cases := []struct {
		name      string
		issuedTTL time.Duration // the lifetime when the link was issued
		issuedAgo time.Duration
		check     *link.Ring
		want      bool
	}{
		{"no lifetime then and now, years later", 0, 3 * 365 * 24 * time.Hour, ring(0, keyA), true},
		{"no lifetime then, an hour now, issued 30 min ago", 0, 30 * time.Minute, ring(time.Hour, keyA), true},
		{"no lifetime then, an hour now, issued 61 min ago", 0, 61 * time.Minute, ring(time.Hour, keyA), false},
		{"no lifetime then, an hour now, issued a year ago", 0, 365 * 24 * time.Hour, ring(time.Hour, keyA), false},
		{"2 h then, 1 h now, issued 90 min ago", 2 * time.Hour, 90 * time.Minute, ring(time.Hour, keyA), false},
		{"2 h then, 1 h now, issued 30 min ago", 2 * time.Hour, 30 * time.Minute, ring(time.Hour, keyA), true},
		{"1 h then, 2 h now, issued 90 min ago: its own expiry holds", time.Hour, 90 * time.Minute, ring(2*time.Hour, keyA), false},
		{"1 h then, none now, issued 30 min ago", time.Hour, 30 * time.Minute, ring(0, keyA), true},
		{"1 h then, none now, issued 61 min ago", time.Hour, 61 * time.Minute, ring(0, keyA), false},
		{"1 h, exactly at the expiry", time.Hour, time.Hour, ring(time.Hour, keyA), false},
		{"1 h, one second before", time.Hour, time.Hour - time.Second, ring(time.Hour, keyA), true},
		{"key rotated in: old key still in the ring", 0, time.Minute, ring(0, keyB, keyA), true},
		{"key dropped", 0, time.Minute, ring(0, keyB), false},
		{"issued 30 s in the future (clock skew)", 0, -30 * time.Second, ring(time.Hour, keyA), true},
		{"issued 2 min in the future", 0, -2 * time.Minute, ring(time.Hour, keyA), false},
	}
	for _, c := range cases {
		exp, sig := issue(t, []link.Key{keyA}, c.issuedTTL, t0.Add(-c.issuedAgo))
		if got := c.check.Verify(link.PurposeView, 42, exp, sig, t0); got != c.want {
			t.Errorf("%s: Verify(exp=%d, %s) = %v, want %v", c.name, exp, sig, got, c.want)
		}
	}

	// Links of older versions carry no issue time: they count as issued
	// at the epoch, valid only while the lifetime is 0.
	old := legacySig(keyA, link.PurposeView, 42, 0)
	if !ring(0, keyA).Verify(link.PurposeView, 42, 0, old, t0) {
		t.Error("a link of an older version without expiry, no lifetime: refused")
	}
	if ring(time.Hour, keyA).Verify(link.PurposeView, 42, 0, old, t0) {
		t.Error("a link of an older version without expiry was accepted under a lifetime of 1 h")
	}
	oldExp := t0.Add(time.Minute).Unix()
	oldWithExp := legacySig(keyA, link.PurposeView, 42, oldExp)
	if !ring(0, keyA).Verify(link.PurposeView, 42, oldExp, oldWithExp, t0) {
		t.Error("a link of an older version with a future expiry, no lifetime: refused")
	}
	if ring(525600*time.Minute, keyA).Verify(link.PurposeView, 42, oldExp, oldWithExp, t0) {
		t.Error("a link of an older version (no issue time) was accepted under a lifetime")
	}
	if ring(0, keyA).Verify(link.PurposeView, 42, 0, legacySig(keyA, link.PurposeView, 43, 0), t0) {
		t.Error("an older version's link of another id was accepted")
	}
}

// TestEverySingleCharacterMutationFails: any one character of a
// signature changed to any other byte, one character removed or one added
// never verifies — among them the last base64 character changed to one
// with the same six data bits but other padding bits, which a lenient
// decoder reads as the same MAC.
func TestEverySingleCharacterMutationFails(t *testing.T) {
	r := link.New([]link.Key{keyA}, time.Hour)
	exp, sig := issue(t, []link.Key{keyA}, time.Hour, t0)
	if !r.Verify(link.PurposeView, 42, exp, sig, t0) {
		t.Fatalf("the link itself does not verify: %s", sig)
	}
	legacy := legacySig(keyA, link.PurposeView, 42, 0)
	lr := link.New([]link.Key{keyA}, 0)
	if !lr.Verify(link.PurposeView, 42, 0, legacy, t0) {
		t.Fatal("the older version's link does not verify")
	}
	for _, c := range []struct {
		ring *link.Ring
		exp  int64
		sig  string
	}{{r, exp, sig}, {lr, 0, legacy}} {
		tried := 0
		for i := range len(c.sig) {
			for b := range 256 {
				if byte(b) == c.sig[i] {
					continue
				}
				m := c.sig[:i] + string([]byte{byte(b)}) + c.sig[i+1:]
				tried++
				if c.ring.Verify(link.PurposeView, 42, c.exp, m, t0) {
					t.Errorf("%q (byte %d of %q changed to %#x) verifies", m, i, c.sig, b)
				}
			}
			if c.ring.Verify(link.PurposeView, 42, c.exp, c.sig[:i]+c.sig[i+1:], t0) {
				t.Errorf("byte %d of %q removed: verifies", i, c.sig)
			}
			if c.ring.Verify(link.PurposeView, 42, c.exp, c.sig[:i]+"A"+c.sig[i:], t0) {
				t.Errorf("a byte inserted at %d of %q: verifies", i, c.sig)
			}
		}
		if tried < 255*len(c.sig) {
			t.Fatalf("only %d mutations tried", tried)
		}
		// The padding-bit variants of the last character, named.
		mac := c.sig[strings.LastIndexByte(c.sig, '.')+1:]
		want, _ := base64.RawURLEncoding.DecodeString(mac)
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		same := 0
		for _, ch := range alphabet {
			m := mac[:len(mac)-1] + string(ch)
			if m == mac {
				continue
			}
			if got, err := base64.RawURLEncoding.DecodeString(m); err == nil && string(got) == string(want) {
				same++
				if c.ring.Verify(link.PurposeView, 42, c.exp, c.sig[:len(c.sig)-len(mac)]+m, t0) {
					t.Errorf("the last character %q -> %q (same MAC bytes to a lenient decoder) verifies", mac[len(mac)-1:], string(ch))
				}
			}
		}
		if same != 3 {
			t.Fatalf("%d padding-bit variants of the last character, want 3", same)
		}
	}
}

func TestSignatureShape(t *testing.T) {
	_, sig := issue(t, []link.Key{keyA}, 0, t0)
	parts := strings.Split(sig, ".")
	if len(parts) != 3 || parts[0] != "a" || parts[1] != fmt.Sprint(t0.Unix()) || len(parts[2]) != 43 {
		t.Fatalf("signature %q: want a.<issued>.<43 characters>", sig)
	}
	r := link.New([]link.Key{keyA}, 0)
	for _, bad := range []string{
		"a.0" + sig[len("a."+fmt.Sprint(t0.Unix())):], // issue time 0 with a leading zero form
		"a.0" + sig[2:], // a leading zero
		"a.+" + sig[2:],
		"a." + sig[2:] + "=", // padding
		"." + sig[2:],
		"a..x",
		"",
	} {
		if r.Verify(link.PurposeView, 42, 0, bad, t0) {
			t.Errorf("%q verifies", bad)
		}
	}
}
