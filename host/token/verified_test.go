package token

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// movableIssuer is an Issuer whose clock the test moves.
func movableIssuer(t *testing.T) (*Issuer, *atomic.Int64) {
	t.Helper()
	var now atomic.Int64
	now.Store(t0.UnixNano())
	base, err := NewIssuer(testKey, "AdminKernel", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return base.WithClock(func() time.Time { return time.Unix(0, now.Load()) }), &now
}

// The cache of verified tokens changes no answer: every time check still
// runs on a hit, a token one byte away from a remembered one is verified
// from scratch, and only tokens that verified are remembered.
func TestVerifiedCache(t *testing.T) {
	iss, now := movableIssuer(t)
	raw, _, err := iss.Issue(Claims{UserID: 7, Account: "dave", SessionID: "sid-dave"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	first, err := iss.Verify(raw)
	if err != nil {
		t.Fatal(err)
	}
	if iss.seen.len() != 1 {
		t.Fatalf("remembered %d tokens after one verification, want 1", iss.seen.len())
	}
	again, err := iss.Verify(raw)
	if err != nil || again != first {
		t.Fatalf("second Verify = %+v, %v; want %+v", again, err, first)
	}

	// Tampered variants of a remembered token: each byte of the signature
	// and of the payload.
	for _, pos := range []int{len(raw) - 1, len(raw) - 20, strings.IndexByte(raw, '.') + 5} {
		b := []byte(raw)
		b[pos] ^= 0x01
		if _, err := iss.Verify(string(b)); err == nil {
			t.Fatalf("a token changed at byte %d verified", pos)
		}
	}
	if iss.seen.len() != 1 {
		t.Fatalf("failed tokens were remembered: %d entries", iss.seen.len())
	}

	// Not valid yet when the clock is set back beyond the skew, valid again
	// afterwards.
	now.Store(t0.Add(-31 * time.Second).UnixNano())
	if _, err := iss.Verify(raw); !errors.Is(err, ErrNotYetValid) {
		t.Fatalf("Verify before iat - skew: %v, want ErrNotYetValid", err)
	}
	now.Store(t0.UnixNano())
	if _, err := iss.Verify(raw); err != nil {
		t.Fatalf("Verify back at t0: %v", err)
	}

	// Expiry is checked on the remembered claims, skew included, and the
	// entry is dropped.
	now.Store(t0.Add(time.Hour + 29*time.Second).UnixNano())
	if _, err := iss.Verify(raw); err != nil {
		t.Fatalf("Verify within the skew after exp: %v", err)
	}
	now.Store(t0.Add(time.Hour + 30*time.Second).UnixNano())
	if _, err := iss.Verify(raw); !errors.Is(err, ErrExpired) {
		t.Fatalf("Verify after exp + skew: %v, want ErrExpired", err)
	}
	if iss.seen.len() != 0 {
		t.Fatalf("an expired token is still remembered (%d entries)", iss.seen.len())
	}
	if _, err := iss.Verify(raw); !errors.Is(err, ErrExpired) {
		t.Fatalf("Verify of the expired token from scratch: %v, want ErrExpired", err)
	}
}

func TestVerifiedCacheIsBounded(t *testing.T) {
	iss, _ := movableIssuer(t)
	const n = VerifiedCacheSize + VerifiedCacheSize/2
	raws := make([]string, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				raw, _, err := iss.Issue(Claims{UserID: int64(i + 1), Account: "u", SessionID: fmt.Sprintf("sid-%d", i)}, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				raws[i] = raw
				c, err := iss.Verify(raw)
				if err != nil || c.UserID != int64(i+1) || c.SessionID != fmt.Sprintf("sid-%d", i) {
					t.Errorf("Verify(token %d) = %+v, %v", i, c, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := iss.seen.len(); got > VerifiedCacheSize || got < VerifiedCacheSize/2 {
		t.Fatalf("remembered %d tokens; want between %d and the bound %d", got, VerifiedCacheSize/2, VerifiedCacheSize)
	}
	// Dropped entries verify again from scratch with the same claims.
	for i, raw := range raws[:100] {
		if c, err := iss.Verify(raw); err != nil || c.UserID != int64(i+1) {
			t.Fatalf("Verify(token %d) after eviction = %+v, %v", i, c, err)
		}
	}
}
