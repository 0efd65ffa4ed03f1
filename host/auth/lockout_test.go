package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache/cachetest"
)

// TestLockoutCounters walks the counters of one account through a script:
// a pair locks at maxFail, other clients stay free, the account needs a
// captcha from captchaAt failures (locked attempts included) on every
// client, a success clears its own pair only, the window ends everything,
// and clearSubject (unlock) retires every pair at once.
func TestLockoutCounters(t *testing.T) {
	p := lockPolicy{maxFail: 3, minutes: 10, captchaAt: 6}
	const (
		attacker = "203.0.113.7"
		owner    = "198.51.100.9"
		v6a      = "2001:db8::1"
		v6b      = "2001:db8::ffff" // same /64 as v6a
		v6c      = "2001:db8:0:1::1"
	)
	type step struct {
		name        string
		client      string
		op          string // fail, succeed, state, advance, clear
		wantLocked  bool   // fail: this failure locked the pair; state: the pair is locked
		wantCaptcha bool   // state only
	}
	script := []step{
		{"attacker 1st failure", attacker, "fail", false, false},
		{"attacker 2nd failure", attacker, "fail", false, false},
		{"attacker 3rd failure locks the pair", attacker, "fail", true, false},
		{"attacker is locked (counts account-wide: 4)", attacker, "state", true, false},
		{"owner is not locked and needs no captcha", owner, "state", false, false},
		{"attacker still locked (5)", attacker, "state", true, false},
		{"owner fails once (6)", owner, "fail", false, false},
		{"owner now needs a captcha", owner, "state", false, true},
		{"a third client needs a captcha", v6c, "state", false, true},
		{"owner succeeds", owner, "succeed", false, false},
		{"a success does not lift the account-wide captcha", owner, "state", false, true},
		{"the window ends", "", "advance", false, false},
		{"attacker unlocked after the window", attacker, "state", false, false},
		{"owner needs no captcha after the window", owner, "state", false, false},
		{"IPv6 /64: 1st failure", v6a, "fail", false, false},
		{"IPv6 /64: 2nd failure from the same /64", v6b, "fail", false, false},
		{"IPv6 /64: 3rd failure locks the /64", v6a, "fail", true, false},
		{"IPv6 /64: the whole /64 is locked", v6b, "state", true, false},
		{"IPv6 /64: the next /64 is not", v6c, "state", false, false},
		{"unlock", "", "clear", false, false},
		{"unlocked /64", v6b, "state", false, false},
		{"counting starts again after unlock", v6a, "fail", false, false},
	}
	ctx := context.Background()
	store := cachetest.NewFake()
	const subject = "u42"
	for _, s := range script {
		t.Run(s.name, func(t *testing.T) {
			switch s.op {
			case "advance":
				store.Advance(time.Duration(p.minutes)*time.Minute + time.Second)
				return
			case "clear":
				if err := clearSubject(ctx, store, subject); err != nil {
					t.Fatal(err)
				}
				return
			}
			l, err := openLockout(ctx, store, subject, s.client)
			if err != nil {
				t.Fatal(err)
			}
			switch s.op {
			case "fail":
				locked, err := l.fail(ctx, p)
				if err != nil || locked != s.wantLocked {
					t.Fatalf("fail = %v, %v; want locked %v", locked, err, s.wantLocked)
				}
			case "succeed":
				if err := l.succeed(ctx); err != nil {
					t.Fatal(err)
				}
			case "state":
				st, err := l.state(ctx, p)
				if err != nil || (st.locked > 0) != s.wantLocked || st.needCaptcha != s.wantCaptcha {
					t.Fatalf("state = %+v, %v; want locked %v captcha %v", st, err, s.wantLocked, s.wantCaptcha)
				}
			}
		})
	}
	for _, k := range store.Keys() {
		if _, ttl, _ := store.Count(ctx, k); ttl <= 0 {
			t.Errorf("counter %s has no TTL", k)
		}
	}
}

// TestLockoutSubjectsAndClients: existing accounts are counted by id, other
// names by their lower-cased form; client keys group IPv6 by /64.
func TestLockoutSubjectsAndClients(t *testing.T) {
	subjects := []struct{ in, want string }{
		{"Ghost", "nghost"},
		{" GHOST ", "nghost"},
	}
	for _, s := range subjects {
		if got := subjectOf(nil, s.in); got != s.want {
			t.Errorf("subjectOf(nil, %q) = %q, want %q", s.in, got, s.want)
		}
	}
	clients := []struct{ in, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8::1", "2001:db8::/64"},
		{"", clientUnknown},
		{"garbage", clientUnknown},
	}
	for _, c := range clients {
		if got := clientKey(c.in); got != c.want {
			t.Errorf("clientKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestLockoutFailsClosed: a cache error is an error, never "not locked".
func TestLockoutFailsClosed(t *testing.T) {
	ctx := context.Background()
	p := lockPolicy{maxFail: 3, minutes: 10, captchaAt: 6}
	store := cachetest.NewFake()
	l, err := openLockout(ctx, store, "u1", "203.0.113.7")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("cache down")
	store.Fail(boom)
	if _, err := openLockout(ctx, store, "u1", "203.0.113.7"); !errors.Is(err, boom) {
		t.Errorf("openLockout = %v, want the cache error", err)
	}
	if _, err := l.state(ctx, p); !errors.Is(err, boom) {
		t.Errorf("state = %v, want the cache error", err)
	}
	if _, err := l.fail(ctx, p); !errors.Is(err, boom) {
		t.Errorf("fail = %v, want the cache error", err)
	}
}

// TestLockoutPolicyOff: maxFailCount 0 never locks, accountCaptchaThreshold
// 0 never asks for a captcha.
func TestLockoutPolicyOff(t *testing.T) {
	tests := []struct {
		name        string
		p           lockPolicy
		wantLocked  bool
		wantCaptcha bool
	}{
		{"both on", lockPolicy{maxFail: 3, minutes: 10, captchaAt: 3}, true, false},
		{"no lock", lockPolicy{maxFail: 0, minutes: 10, captchaAt: 3}, false, true},
		{"no captcha", lockPolicy{maxFail: 3, minutes: 10, captchaAt: 0}, true, false},
		{"both off", lockPolicy{maxFail: 0, minutes: 10, captchaAt: 0}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store := cachetest.NewFake()
			for i := 0; i < 10; i++ {
				l, err := openLockout(ctx, store, "nghost", "203.0.113.7")
				if err != nil {
					t.Fatal(err)
				}
				if st, err := l.state(ctx, tt.p); err != nil || st.locked > 0 {
					break
				}
				if _, err := l.fail(ctx, tt.p); err != nil {
					t.Fatal(err)
				}
			}
			l, err := openLockout(ctx, store, "nghost", "203.0.113.7")
			if err != nil {
				t.Fatal(err)
			}
			st, err := l.state(ctx, tt.p)
			if err != nil || (st.locked > 0) != tt.wantLocked || st.needCaptcha != tt.wantCaptcha {
				t.Fatalf("after 10 failures: %+v, %v; want locked %v captcha %v", st, err, tt.wantLocked, tt.wantCaptcha)
			}
		})
	}
}
