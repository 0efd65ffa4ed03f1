package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/session"
)

func TestTouchEvery(t *testing.T) {
	tests := []struct {
		idle, want time.Duration
	}{
		{0, session.LastSeenEvery},
		{-time.Minute, session.LastSeenEvery},
		{time.Minute, 15 * time.Second},
		{2 * time.Second, time.Second},
		{4 * time.Minute, time.Minute},
		{30 * time.Minute, time.Minute},
	}
	for _, tt := range tests {
		if got := session.TouchEvery(tt.idle); got != tt.want {
			t.Errorf("TouchEvery(%v) = %v, want %v", tt.idle, got, tt.want)
		}
	}
}

func TestSingleMode(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid, other := e.user(t, "single"), e.user(t, "bystander")
		bystander := e.login(t, e.svc, other)
		var sids []string
		for i := range 3 {
			e.clock.Advance(time.Second)
			// Single wins over MaxConcurrent.
			is, err := e.svc.Create(ctx, session.NewSession{UserID: uid, Method: "password", Single: true, MaxConcurrent: 5, RefreshTTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			sids = append(sids, is.SessionID)
			for j, sid := range sids {
				before := e.drv.statements()
				if got := e.active(t, sid); got != (j == i) {
					t.Errorf("after login %d: session %d active = %v, want %v", i, j, got, j == i)
				}
				if e.drv.statements() != before {
					t.Errorf("after login %d: session %d read the database: the revocation did not replace its mark", i, j)
				}
			}
		}
		for _, sid := range sids[:2] {
			if r := e.row(t, sid); r.RevokeReason == nil || *r.RevokeReason != session.ReasonSingle {
				t.Errorf("revoke reason %q, want %q", deref(r.RevokeReason), session.ReasonSingle)
			}
		}
		if !e.active(t, bystander.SessionID) {
			t.Error("another user's session was revoked")
		}
	})
}

func TestAbsoluteEnd(t *testing.T) {
	// A long CacheTTL: the mark must still not outlive the session.
	forEachDialect(t, session.Options{CacheTTL: time.Hour}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "absolute")
		is, err := e.svc.Create(ctx, session.NewSession{UserID: uid, Method: "password", RefreshTTL: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(9 * time.Minute)
		if !e.active(t, is.SessionID) {
			t.Fatal("not active before its end")
		}
		e.clock.Advance(time.Minute)
		if e.active(t, is.SessionID) {
			t.Fatal("active at its absolute end")
		}
		refused(t, e.svc, is.RefreshToken, "refresh after the absolute end")
	})
}

func TestIdleTimeout(t *testing.T) {
	const idle = 4 * time.Minute // touch interval 1 minute
	forEachDialect(t, session.Options{Idle: idle, CacheTTL: time.Hour}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "idler")

		t.Run("a hit touches no database, and the mark lasts one touch interval", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			e.drv.poison.Store(true)
			e.clock.Advance(59 * time.Second)
			ok, err := e.svc.Active(ctx, is.SessionID)
			e.drv.poison.Store(false)
			if !ok || err != nil {
				t.Fatalf("hit within the touch interval: %v, %v", ok, err)
			}
			e.clock.Advance(2 * time.Second)
			before := e.drv.statements()
			if !e.active(t, is.SessionID) {
				t.Fatal("not active after 61 s")
			}
			if e.drv.statements() == before {
				t.Fatal("a mark was trusted past the touch interval")
			}
			if got := e.row(t, is.SessionID).LastSeenTime; !got.Equal(e.clock.Now()) {
				t.Errorf("last seen %v, want %v (the miss records activity)", got, e.clock.Now())
			}
		})

		t.Run("a copy of the mark is not trusted past the idle end", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			key := session.KeyPrefix + is.SessionID
			mark, ok := e.store.raw(key)
			if !ok {
				t.Fatal("no mark after login")
			}
			// Kept without the entry's TTL, as a replica-local copy might be.
			if err := e.store.Set(ctx, key, []byte(mark), 0); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(idle + time.Second)
			if e.active(t, is.SessionID) {
				t.Fatal("a copy of the mark kept an idle session alive")
			}
		})

		t.Run("steady use keeps the session", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			for range 20 {
				e.clock.Advance(50 * time.Second)
				if !e.active(t, is.SessionID) {
					t.Fatal("an active session ended")
				}
			}
			refresh(t, e.svc, is.RefreshToken)
		})

		t.Run("unused for longer than idle: refused, revoked, refresh refused", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			e.clock.Advance(idle + time.Second)
			if e.active(t, is.SessionID) {
				t.Fatal("an idle session is active")
			}
			if r := e.row(t, is.SessionID); r.RevokedAt == nil || deref(r.RevokeReason) != session.ReasonIdle {
				t.Errorf("idle session: revoked %v reason %q, want revoked with %q", r.RevokedAt, deref(r.RevokeReason), session.ReasonIdle)
			}
			refused(t, e.svc, is.RefreshToken, "refresh of an idle session")
		})

		t.Run("refresh of an idle session is refused even before any request", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			e.clock.Advance(idle + time.Second)
			refused(t, e.svc, is.RefreshToken, "refresh after idle")
			if e.active(t, is.SessionID) {
				t.Fatal("a refresh revived an idle session")
			}
		})

		t.Run("a refresh is not activity", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			e.clock.Advance(idle - time.Minute)
			r := refresh(t, e.svc, is.RefreshToken)
			e.clock.Advance(2 * time.Minute)
			if e.active(t, is.SessionID) {
				t.Fatal("a refresh extended the idle timeout")
			}
			refused(t, e.svc, r.RefreshToken, "refresh after idle")
		})

		t.Run("a touch by another replica keeps the session", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			// Replica B has its own (empty) cache view: it misses and
			// records the request.
			b := e.service(session.Options{Idle: idle, CacheTTL: time.Hour})
			e.clock.Advance(idle - 30*time.Second)
			if _, err := e.store.DeletePrefix(ctx, session.KeyPrefix); err != nil {
				t.Fatal(err)
			}
			if ok, err := b.Active(ctx, is.SessionID); !ok || err != nil {
				t.Fatalf("replica B: %v, %v", ok, err)
			}
			e.clock.Advance(time.Minute) // idle + 30 s after login, 1 minute after B's request
			if !e.active(t, is.SessionID) {
				t.Fatal("a session used on another replica ended as idle")
			}
		})

		t.Run("the lists leave idle sessions out", func(t *testing.T) {
			lister := e.user(t, "lister")
			is := e.login(t, e.svc, lister)
			list, err := e.svc.ListUser(ctx, lister)
			if err != nil || len(list) != 1 || list[0].SessionID != is.SessionID {
				t.Fatalf("ListUser = %+v, %v", list, err)
			}
			e.clock.Advance(idle + time.Second)
			if list, err := e.svc.ListUser(ctx, lister); err != nil || len(list) != 0 {
				t.Fatalf("ListUser after idle = %+v, %v; want none", list, err)
			}
			online, _, err := e.svc.Online(ctx, session.OnlineFilter{UserID: &lister})
			if err != nil || len(online) != 0 {
				t.Fatalf("Online after idle = %+v, %v; want none", online, err)
			}
		})
	})
}

// TestIdleTimeoutBySecondFactor: IdleMFA (IdleMinutesMfa) applies to the
// sessions whose login verified a second factor, Idle to the others; each
// ends after its own timeout (requests, refresh and the lists), and a zero
// IdleMFA means the normal timeout.
func TestIdleTimeoutBySecondFactor(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		normal, mfa time.Duration
		// first ends after firstEnd; the other then lives until otherEnd
		// (0: it has no idle timeout).
		firstMFA           bool
		firstEnd, otherEnd time.Duration
	}{
		{"longer with a second factor", 4 * time.Minute, 12 * time.Minute, false, 4 * time.Minute, 12 * time.Minute},
		{"shorter with a second factor", 12 * time.Minute, 4 * time.Minute, true, 4 * time.Minute, 12 * time.Minute},
		{"zero IdleMFA follows the normal timeout", 4 * time.Minute, 0, true, 4 * time.Minute, 4 * time.Minute},
		{"only second-factor sessions idle out", 0, 4 * time.Minute, true, 4 * time.Minute, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachDialect(t, session.Options{Idle: c.normal, IdleMFA: c.mfa, CacheTTL: time.Hour}, func(t *testing.T, e *env) {
				uid := e.user(t, "factor")
				login := func(mfa bool) session.Issued {
					is, err := e.svc.Create(ctx, session.NewSession{UserID: uid, Method: session.MethodPassword, MFA: mfa, RefreshTTL: 7 * 24 * time.Hour})
					if err != nil {
						t.Fatal(err)
					}
					return is
				}
				// Listing is not activity; a request (active) is, so each
				// session gets a request only once its fate is decided.
				listed := func(sid string) bool {
					items, err := e.svc.ListUser(ctx, uid)
					if err != nil {
						t.Fatal(err)
					}
					for _, it := range items {
						if it.SessionID == sid {
							return true
						}
					}
					return false
				}
				first, other := login(c.firstMFA), login(!c.firstMFA)

				e.clock.Advance(c.firstEnd - time.Second)
				if !listed(first.SessionID) || !listed(other.SessionID) {
					t.Fatal("a session left the list before its idle timeout")
				}
				e.clock.Advance(2 * time.Second)
				if listed(first.SessionID) || e.active(t, first.SessionID) {
					t.Errorf("mfa=%v: still live after %v unused", c.firstMFA, c.firstEnd+time.Second)
				}
				refused(t, e.svc, first.RefreshToken, "refresh after the idle timeout")
				switch c.otherEnd {
				case c.firstEnd:
					if listed(other.SessionID) || e.active(t, other.SessionID) {
						t.Errorf("mfa=%v: still live after %v unused", !c.firstMFA, c.firstEnd+time.Second)
					}
				case 0:
					e.clock.Advance(24 * time.Hour)
					if !listed(other.SessionID) || !e.active(t, other.SessionID) {
						t.Errorf("mfa=%v: ended without an idle timeout", !c.firstMFA)
					}
				default:
					if !listed(other.SessionID) {
						t.Errorf("mfa=%v: left the list after %v, its timeout is %v", !c.firstMFA, c.firstEnd+time.Second, c.otherEnd)
					}
					e.clock.Advance(c.otherEnd - c.firstEnd - 2*time.Second)
					if !listed(other.SessionID) {
						t.Errorf("mfa=%v: left the list before %v", !c.firstMFA, c.otherEnd)
					}
					e.clock.Advance(2 * time.Second)
					if listed(other.SessionID) || e.active(t, other.SessionID) {
						t.Errorf("mfa=%v: still live after %v unused", !c.firstMFA, c.otherEnd+time.Second)
					}
				}
			})
		})
	}
}
