package link_test

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/file/link"
)

// edit applies the fuzzer's edits to s: each triple (op, position, byte)
// replaces, inserts or deletes one byte.
func edit(s string, edits []byte) string {
	b := []byte(s)
	for i := 0; i+2 < len(edits) && len(b) > 0; i += 3 {
		pos := int(edits[i+1]) % len(b)
		switch edits[i] % 3 {
		case 0:
			b[pos] = edits[i+2]
		case 1:
			b = append(b[:pos], append([]byte{edits[i+2]}, b[pos:]...)...)
		case 2:
			b = append(b[:pos], b[pos+1:]...)
		}
	}
	return string(b)
}

// FuzzLinkVerify: a link issued by the ring verifies only while the
// reference rules say it is valid (before its expiry, before its issue
// time plus the lifetime now in force, its key in the ring), and a link
// that differs from it in anything (id, expiry, purpose, any byte of the
// signature, or the URL as ParseView reads it) never verifies.
func FuzzLinkVerify(f *testing.F) {
	f.Add(int64(42), uint16(0), uint16(60), int64(0), int64(0), "view", []byte{0, 46, 'A'}, []byte{})
	f.Add(int64(42), uint16(60), uint16(0), int64(90*60), int64(0), "view", []byte{0, 60, '5'}, []byte{})
	f.Add(int64(7), uint16(120), uint16(60), int64(30*60), int64(1), "view", []byte{2, 1, 0}, []byte{0, 80, '1'})
	f.Add(int64(7), uint16(0), uint16(0), int64(-30), int64(0), "download", []byte{}, []byte{1, 70, '0'})
	f.Fuzz(func(t *testing.T, id int64, issuedTTL, nowTTL uint16, ago, dExp int64, purpose string, sigEdits, urlEdits []byte) {
		if id <= 0 || ago < -86400*365*100 || ago >= t0.Unix() {
			return
		}
		ttlThen := time.Duration(issuedTTL%1000) * time.Minute
		ttlNow := time.Duration(nowTTL%1000) * time.Minute
		issuedAt := t0.Add(-time.Duration(ago) * time.Second)
		raw, err := link.New([]link.Key{keyA}, ttlThen).ViewURL(id, issuedAt)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := strconv.ParseInt(u.Query().Get("exp"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		sig := u.Query().Get("sig")
		now := t0.Unix()
		iat := issuedAt.Unix()
		valid := (exp == 0 || now < exp) && (ttlNow == 0 || now < iat+int64(ttlNow/time.Second)) && iat <= now+60
		r := link.New([]link.Key{keyB, keyA}, ttlNow)
		if got := r.Verify(link.PurposeView, id, exp, sig, t0); got != valid {
			t.Fatalf("Verify(issued %d, exp %d, lifetime %v then %v now) = %v, reference %v", iat, exp, ttlThen, ttlNow, got, valid)
		}
		if link.New([]link.Key{keyB}, ttlNow).Verify(link.PurposeView, id, exp, sig, t0) {
			t.Fatal("verified with its key removed from the ring")
		}

		// Tampered: another purpose, id, expiry or signature never verifies.
		sig2 := edit(sig, sigEdits)
		exp2 := exp ^ dExp
		if purpose != link.PurposeView && r.Verify(purpose, id, exp, sig, t0) {
			t.Fatalf("verified for purpose %q", purpose)
		}
		if (sig2 != sig || exp2 != exp) && r.Verify(link.PurposeView, id, exp2, sig2, t0) {
			t.Fatalf("tampered link verified: exp %d -> %d, sig %q -> %q", exp, exp2, sig, sig2)
		}
		if r.Verify(link.PurposeView, id+1, exp, sig, t0) || r.Verify(link.PurposeView, id^1, exp, sig, t0) {
			t.Fatal("verified for another id")
		}

		// The URL as stored in a profile: ParseView accepts an edited URL
		// only when it still says the same id, expiry and signature.
		raw2 := edit(raw, urlEdits)
		if gotID, ok := r.ParseView(raw2, t0); ok {
			u2, err := url.Parse(raw2)
			if err != nil {
				t.Fatalf("ParseView accepted an unparsable URL %q", raw2)
			}
			q := u2.Query()
			e2, err := strconv.ParseInt(q.Get("exp"), 10, 64)
			if gotID != id || err != nil || e2 != exp || q.Get("sig") != sig {
				t.Fatalf("ParseView accepted %q (id %d) for %q", raw2, gotID, raw)
			}
		}
	})
}
