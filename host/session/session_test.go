package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/syssessiontoken"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/token"
)

func TestCreate(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "alice")
		longUA := strings.Repeat("Mozilla/5.0 ", 60) // 720 characters
		tests := []struct {
			name                string
			in                  session.NewSession
			wantUA, wantIP      *string
			wantMethod          string
			wantMFA             bool
			wantUALen, wantIPOK int
		}{
			{name: "password login", in: session.NewSession{UserID: uid, Method: "password", IP: "198.51.100.1", UserAgent: "Firefox", RefreshTTL: time.Hour},
				wantUA: ptr("Firefox"), wantIP: ptr("198.51.100.1"), wantMethod: "password"},
			{name: "external login with MFA and no client details", in: session.NewSession{UserID: uid, Method: "corp_oidc", MFA: true, RefreshTTL: time.Hour},
				wantMethod: "corp_oidc", wantMFA: true},
			{name: "user agent cut to 512 characters", in: session.NewSession{UserID: uid, Method: "sms", UserAgent: longUA, RefreshTTL: time.Hour},
				wantUA: ptr(strings.TrimSpace(longUA[:512])), wantMethod: "sms"},
			{name: "multi-byte user agent cut by characters", in: session.NewSession{UserID: uid, Method: "sms", UserAgent: strings.Repeat("浏览器", 200), RefreshTTL: time.Hour},
				wantUA: ptr(strings.Repeat("浏览器", 200)[:512*3]), wantMethod: "sms"},
			{name: "invalid UTF-8 and control characters dropped", in: session.NewSession{UserID: uid, Method: "password", UserAgent: "bad\xff\x00agent\r\n", IP: "::1", RefreshTTL: time.Hour},
				wantUA: ptr("badagent"), wantIP: ptr("::1"), wantMethod: "password"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				now := e.clock.Now()
				is, err := e.svc.Create(ctx, tt.in)
				if err != nil {
					t.Fatal(err)
				}
				if len(is.SessionID) != 43 || len(is.RefreshToken) != 86 {
					t.Fatalf("issued %+v", is)
				}
				if want := now.Add(tt.in.RefreshTTL); !is.RefreshExpiresAt.Equal(want) {
					t.Errorf("refresh expiry %v, want %v", is.RefreshExpiresAt, want)
				}
				row := e.row(t, is.SessionID)
				if row.UserID != uid || row.LoginMethod != tt.wantMethod || row.Mfa != tt.wantMFA {
					t.Errorf("row %+v", row)
				}
				if !equalPtr(row.UserAgent, tt.wantUA) || !equalPtr(row.IP, tt.wantIP) {
					t.Errorf("user agent %v ip %v, want %v %v", deref(row.UserAgent), deref(row.IP), deref(tt.wantUA), deref(tt.wantIP))
				}
				if !row.CreateTime.Equal(now) || !row.LastSeenTime.Equal(now) || !row.ExpiresAt.Equal(now.Add(tt.in.RefreshTTL)) {
					t.Errorf("times %v %v %v", row.CreateTime, row.LastSeenTime, row.ExpiresAt)
				}
				if row.RefreshTokenHash != token.HashRefreshToken(is.RefreshToken) || row.RevokedAt != nil {
					t.Errorf("refresh hash or revocation wrong: %+v", row)
				}
				tok, err := e.client.SysSessionToken.Query().Where(syssessiontoken.SessionID(is.SessionID)).Only(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if tok.TokenHash != token.HashRefreshToken(is.RefreshToken) || tok.RotatedAt != nil || tok.ParentID != nil {
					t.Errorf("token row %+v", tok)
				}
				if strings.Contains(tok.TokenHash, is.RefreshToken) {
					t.Error("the plain token is stored")
				}
				before := e.drv.statements()
				if !e.active(t, is.SessionID) {
					t.Fatal("new session not active")
				}
				if e.drv.statements() != before {
					t.Error("Active right after Create read the database")
				}
			})
		}

		t.Run("invalid input", func(t *testing.T) {
			for _, in := range []session.NewSession{
				{Method: "password", RefreshTTL: time.Hour},
				{UserID: uid, RefreshTTL: time.Hour},
				{UserID: uid, Method: "password"},
			} {
				if _, err := e.svc.Create(ctx, in); err == nil {
					t.Errorf("Create(%+v) succeeded", in)
				}
			}
		})
	})
}

func ptr(s string) *string { return &s }

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func equalPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func TestConcurrencyPolicy(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		tests := []struct {
			name       string
			max        int
			logins     int
			sameTime   bool
			wantActive int
		}{
			{"unlimited", 0, 4, false, 4},
			{"max 2 of 4", 2, 4, false, 2},
			{"single session", 1, 3, false, 1},
			{"max 2 of 4 in the same instant", 2, 4, true, 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				uid := e.user(t, "user-"+strings.ReplaceAll(tt.name, " ", "-"))
				other := e.user(t, "other-"+strings.ReplaceAll(tt.name, " ", "-"))
				otherSession := e.login(t, e.svc, other)
				var sids []string
				for range tt.logins {
					if !tt.sameTime {
						e.clock.Advance(time.Second)
					}
					is, err := e.svc.Create(ctx, session.NewSession{UserID: uid, Method: "password", MaxConcurrent: tt.max, RefreshTTL: time.Hour})
					if err != nil {
						t.Fatal(err)
					}
					sids = append(sids, is.SessionID)
				}
				revoked := len(sids) - tt.wantActive
				for i, sid := range sids {
					before := e.drv.statements()
					got := e.active(t, sid)
					if got != (i >= revoked) {
						t.Errorf("login %d active = %v, want %v (the oldest are revoked)", i, got, i >= revoked)
					}
					if e.drv.statements() != before {
						t.Errorf("login %d: Active read the database: the revocation did not update the cache", i)
					}
					if i < revoked {
						if r := e.row(t, sid); r.RevokeReason == nil || *r.RevokeReason != session.ReasonConcurrency {
							t.Errorf("login %d revoke reason %v", i, deref(r.RevokeReason))
						}
					}
				}
				if !e.active(t, otherSession.SessionID) {
					t.Error("another user's session was revoked")
				}
			})
		}
	})
}

func TestActiveCache(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "bob")

		t.Run("a hit does not read the database", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			e.drv.poison.Store(true)
			defer e.drv.poison.Store(false)
			for range 3 {
				if !e.active(t, is.SessionID) {
					t.Fatal("not active")
				}
			}
			if n := e.drv.statements(); n == 0 {
				t.Fatal("the counting driver saw nothing at all")
			}
		})

		t.Run("a copy of an active mark is not trusted past its deadline", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			key := session.KeyPrefix + is.SessionID
			mark, ok := e.store.raw(key)
			if !ok || len(mark) != 9 || mark[0] != '1' {
				t.Fatalf("active mark = %q, %v; want '1' and an 8-byte deadline", mark, ok)
			}
			// A copy kept without the entry's TTL (as a replica-local cache
			// might keep it) and read after the deadline inside it.
			if err := e.store.Set(ctx, key, []byte(mark), 0); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(session.DefaultCacheTTL + time.Second)
			before := e.drv.statements()
			if !e.active(t, is.SessionID) {
				t.Fatal("not active")
			}
			if e.drv.statements() == before {
				t.Fatal("an expired mark was trusted without reading the database")
			}
			for _, bad := range []string{"1", "1short", "x"} {
				if err := e.store.Set(ctx, key, []byte(bad), 0); err != nil {
					t.Fatal(err)
				}
				before := e.drv.statements()
				if !e.active(t, is.SessionID) {
					t.Fatalf("mark %q: not active", bad)
				}
				if e.drv.statements() == before {
					t.Fatalf("a malformed mark %q was trusted", bad)
				}
			}
		})

		t.Run("a miss reads once and caches", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			if _, err := e.store.DeletePrefix(ctx, session.KeyPrefix); err != nil {
				t.Fatal(err)
			}
			before := e.drv.statements()
			if !e.active(t, is.SessionID) {
				t.Fatal("not active")
			}
			if e.drv.statements() == before {
				t.Fatal("a miss did not read the database")
			}
			before = e.drv.statements()
			if !e.active(t, is.SessionID) {
				t.Fatal("not active")
			}
			if e.drv.statements() != before {
				t.Fatal("the answer was not cached")
			}
		})

		t.Run("revoke is seen by the next call without a database read", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			if !e.active(t, is.SessionID) {
				t.Fatal("not active")
			}
			if err := e.svc.Revoke(ctx, is.SessionID, "logout"); err != nil {
				t.Fatal(err)
			}
			e.drv.poison.Store(true)
			ok, err := e.svc.Active(ctx, is.SessionID)
			e.drv.poison.Store(false)
			if err != nil || ok {
				t.Fatalf("Active after revoke = %v, %v; want false from the cache", ok, err)
			}
			// The revoked answer survives a cache miss too.
			if _, err := e.store.DeletePrefix(ctx, session.KeyPrefix); err != nil {
				t.Fatal(err)
			}
			if e.active(t, is.SessionID) {
				t.Fatal("active after a miss")
			}
		})

		t.Run("unknown sessions are inactive and cached", func(t *testing.T) {
			for _, sid := range []string{"no-such-session", "", strings.Repeat("x", 65)} {
				if e.active(t, sid) {
					t.Fatalf("%q active", sid)
				}
			}
			before := e.drv.statements()
			if e.active(t, "no-such-session") {
				t.Fatal("active")
			}
			if e.drv.statements() != before {
				t.Fatal("the inactive answer was not cached")
			}
		})

		t.Run("a session expires in the cache with the session", func(t *testing.T) {
			is, err := e.svc.Create(ctx, session.NewSession{UserID: uid, Method: "password", RefreshTTL: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !e.active(t, is.SessionID) {
				t.Fatal("not active")
			}
			e.clock.Advance(30 * time.Second)
			if e.active(t, is.SessionID) {
				t.Fatal("active after its expiry")
			}
		})

		t.Run("the cache TTL bounds staleness", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			// Revoked behind the service's back (another replica with its
			// own in-process cache).
			if err := e.client.SysSession.Update().Where(syssession.SessionID(is.SessionID)).SetRevokedAt(e.clock.Now()).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(session.DefaultCacheTTL)
			if e.active(t, is.SessionID) {
				t.Fatal("active after the cache TTL")
			}
		})

		t.Run("cache down: the database answers", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			e.store.fail.Store(true)
			defer e.store.fail.Store(false)
			if !e.active(t, is.SessionID) {
				t.Fatal("not active with the cache down")
			}
			if err := e.svc.Revoke(ctx, is.SessionID, "logout"); err == nil {
				t.Fatal("Revoke reported success although the cache entry could not be cleared")
			}
			if e.active(t, is.SessionID) {
				t.Fatal("active after revoke with the cache down")
			}
		})

		t.Run("cache miss and database down: fail closed", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			if _, err := e.store.DeletePrefix(ctx, session.KeyPrefix); err != nil {
				t.Fatal(err)
			}
			e.drv.poison.Store(true)
			ok, err := e.svc.Active(ctx, is.SessionID)
			e.drv.poison.Store(false)
			if err == nil || ok {
				t.Fatalf("Active = %v, %v; want an error", ok, err)
			}
		})

		t.Run("a revoke racing a miss is not hidden by the stale mark", func(t *testing.T) {
			is := e.login(t, e.svc, uid)
			if _, err := e.store.DeletePrefix(ctx, session.KeyPrefix); err != nil {
				t.Fatal(err)
			}
			key := session.KeyPrefix + is.SessionID
			fired := false
			// Between the miss's database read and its cache write, another
			// request revokes the session and writes the revoked mark.
			e.store.beforeSet = func(k string, val []byte) {
				if k != key || len(val) == 0 || val[0] != '1' || fired {
					return
				}
				fired = true
				other := e.service(session.Options{})
				if err := other.Revoke(ctx, is.SessionID, "forced"); err != nil {
					t.Error(err)
				}
			}
			defer func() { e.store.beforeSet = nil }()
			ok, err := e.svc.Active(ctx, is.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if !fired {
				t.Fatal("the race was not staged")
			}
			if ok {
				t.Fatal("Active reported a session revoked meanwhile")
			}
			e.store.beforeSet = nil
			if v, _ := e.store.raw(key); v != "0" {
				t.Fatalf("cache holds %q, want the revoked mark", v)
			}
		})
	})
}

func TestLastSeen(t *testing.T) {
	e := newEnv(t, dbtestSqlite(), session.Options{CacheTTL: 10 * time.Second})
	uid := e.user(t, "carol")
	is := e.login(t, e.svc, uid)
	created := e.row(t, is.SessionID).LastSeenTime
	tests := []struct {
		advance time.Duration
		want    time.Duration // last seen relative to creation
	}{
		// Every step misses (CacheTTL 10 s); last_seen_time is written only
		// when it is at least a minute old.
		{11 * time.Second, 0},                 // 11 s: seen 11 s ago
		{40 * time.Second, 0},                 // 51 s: seen 51 s ago
		{10 * time.Second, 61 * time.Second},  // 61 s: written
		{30 * time.Second, 61 * time.Second},  // 91 s: seen 30 s ago
		{40 * time.Second, 131 * time.Second}, // 131 s: written
	}
	var elapsed time.Duration
	for _, tt := range tests {
		e.clock.Advance(tt.advance)
		elapsed += tt.advance
		if !e.active(t, is.SessionID) {
			t.Fatal("not active")
		}
		got := e.row(t, is.SessionID).LastSeenTime.Sub(created)
		if got != tt.want {
			t.Errorf("after %v: last seen at +%v, want +%v", elapsed, got, tt.want)
		}
	}
	// A hit writes nothing.
	e.drv.poison.Store(true)
	defer e.drv.poison.Store(false)
	e.clock.Advance(time.Second)
	if ok, err := e.svc.Active(context.Background(), is.SessionID); !ok || err != nil {
		t.Fatalf("cache hit: %v, %v", ok, err)
	}
}

func dbtestSqlite() string { return dbtest.AllDialects[0] }

func TestRevoke(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		alice, bob := e.user(t, "alice"), e.user(t, "bob")

		t.Run("one session", func(t *testing.T) {
			a1, a2 := e.login(t, e.svc, alice), e.login(t, e.svc, alice)
			if err := e.svc.Revoke(ctx, a1.SessionID, "forced by an administrator"); err != nil {
				t.Fatal(err)
			}
			if e.active(t, a1.SessionID) || !e.active(t, a2.SessionID) {
				t.Fatal("wrong session revoked")
			}
			r := e.row(t, a1.SessionID)
			if r.RevokedAt == nil || deref(r.RevokeReason) != "forced by an administrator" {
				t.Fatalf("row %+v", r)
			}
			if err := e.svc.Revoke(ctx, a1.SessionID, "again"); err != nil {
				t.Fatalf("second revoke: %v", err)
			}
			if deref(e.row(t, a1.SessionID).RevokeReason) != "forced by an administrator" {
				t.Fatal("the second revoke overwrote the reason")
			}
		})

		t.Run("unknown session", func(t *testing.T) {
			for _, sid := range []string{"nope", ""} {
				if err := e.svc.Revoke(ctx, sid, "logout"); !isCode(err, errcode.SessionNotFound) {
					t.Fatalf("Revoke(%q) = %v, want 42024", sid, err)
				}
			}
			if ok, err := e.svc.Exists(ctx, "nope"); ok || err != nil {
				t.Fatalf("Exists = %v, %v", ok, err)
			}
		})

		t.Run("long reason is cut", func(t *testing.T) {
			a := e.login(t, e.svc, alice)
			if err := e.svc.Revoke(ctx, a.SessionID, strings.Repeat("r", 100)); err != nil {
				t.Fatal(err)
			}
			if got := deref(e.row(t, a.SessionID).RevokeReason); got != strings.Repeat("r", 64) {
				t.Fatalf("reason %q", got)
			}
		})

		t.Run("all of a user except one", func(t *testing.T) {
			keep := e.login(t, e.svc, alice)
			var others []string
			for range 3 {
				others = append(others, e.login(t, e.svc, alice).SessionID)
			}
			b := e.login(t, e.svc, bob)
			for _, sid := range others {
				if !e.active(t, sid) { // cache the active mark
					t.Fatal("not active")
				}
			}
			n, err := e.svc.RevokeUser(ctx, alice, "password changed", keep.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if n < 3 {
				t.Fatalf("revoked %d sessions, want at least 3", n)
			}
			e.drv.poison.Store(true)
			for _, sid := range others {
				if ok, err := e.svc.Active(ctx, sid); ok || err != nil {
					t.Errorf("revoked session: Active = %v, %v (must come from the cache)", ok, err)
				}
			}
			e.drv.poison.Store(false)
			if !e.active(t, keep.SessionID) || !e.active(t, b.SessionID) {
				t.Fatal("the kept session or another user's session was revoked")
			}
			n, err = e.svc.RevokeUser(ctx, alice, "disabled", "")
			if err != nil || n != 1 {
				t.Fatalf("RevokeUser without exception = %d, %v; want 1", n, err)
			}
			if e.active(t, keep.SessionID) {
				t.Fatal("kept session survived the second RevokeUser")
			}
		})

		t.Run("own sessions", func(t *testing.T) {
			a, b := e.login(t, e.svc, alice), e.login(t, e.svc, bob)
			if err := e.svc.RevokeOwn(ctx, alice, b.SessionID); !isCode(err, errcode.SessionNotFound) {
				t.Fatalf("revoking another user's session: %v, want 42024", err)
			}
			if !e.active(t, b.SessionID) {
				t.Fatal("another user's session was revoked")
			}
			if err := e.svc.RevokeOwn(ctx, alice, "missing"); !isCode(err, errcode.SessionNotFound) {
				t.Fatalf("revoking a missing session: %v, want 42024", err)
			}
			if err := e.svc.RevokeOwn(ctx, alice, a.SessionID); err != nil {
				t.Fatal(err)
			}
			if e.active(t, a.SessionID) {
				t.Fatal("own session still active")
			}
			if err := e.svc.RevokeOwn(ctx, alice, a.SessionID); err != nil {
				t.Fatalf("revoking an own revoked session again: %v", err)
			}
		})
	})
}

func TestLists(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		alice, bob := e.user(t, "alice"), e.user(t, "bob")
		var aliceSIDs, bobSIDs []string
		for i := range 3 {
			e.clock.Advance(time.Second)
			aliceSIDs = append(aliceSIDs, e.login(t, e.svc, alice).SessionID)
			e.clock.Advance(time.Second)
			bobSIDs = append(bobSIDs, e.login(t, e.svc, bob).SessionID)
			_ = i
		}
		// Not listed: a revoked and an expired session.
		if err := e.svc.Revoke(ctx, aliceSIDs[0], "logout"); err != nil {
			t.Fatal(err)
		}
		short, err := e.svc.Create(ctx, session.NewSession{UserID: bob, Method: "sms", RefreshTTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(2 * time.Second)
		_ = short

		newestFirst := []string{bobSIDs[2], aliceSIDs[2], bobSIDs[1], aliceSIDs[1], bobSIDs[0]}
		tests := []struct {
			name      string
			f         session.OnlineFilter
			want      []string
			wantTotal int
		}{
			{"everyone", session.OnlineFilter{}, newestFirst, 5},
			{"second page", session.OnlineFilter{Offset: 2, Limit: 2}, newestFirst[2:4], 5},
			{"last page", session.OnlineFilter{Offset: 4, Limit: 2}, newestFirst[4:], 5},
			{"past the end", session.OnlineFilter{Offset: 10, Limit: 2}, nil, 5},
			{"one user", session.OnlineFilter{UserID: &alice, Limit: 10}, []string{aliceSIDs[2], aliceSIDs[1]}, 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				items, total, err := e.svc.Online(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				if total != tt.wantTotal || len(items) != len(tt.want) {
					t.Fatalf("total %d, %d items; want %d, %d", total, len(items), tt.wantTotal, len(tt.want))
				}
				for i, it := range items {
					if it.SessionID != tt.want[i] {
						t.Errorf("item %d = %s, want %s", i, it.SessionID, tt.want[i])
					}
					wantAccount := "alice"
					if it.UserID == bob {
						wantAccount = "bob"
					}
					if it.Account != wantAccount || deref(it.IP) != "203.0.113.7" || deref(it.UserAgent) != "test-agent" ||
						it.LoginTime.IsZero() || !it.ExpiresAt.After(it.LoginTime.Time) {
						t.Errorf("item %+v", it)
					}
				}
			})
		}

		t.Run("own list", func(t *testing.T) {
			items, err := e.svc.ListUser(ctx, alice)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 2 || items[0].SessionID != aliceSIDs[2] || items[1].SessionID != aliceSIDs[1] {
				t.Fatalf("items %+v", items)
			}
		})
	})
}

func TestListUserLimit(t *testing.T) {
	e := newEnv(t, dbtestSqlite(), session.Options{})
	uid := e.user(t, "busy")
	for range session.ListLimit + 5 {
		e.clock.Advance(time.Millisecond)
		e.login(t, e.svc, uid)
	}
	items, err := e.svc.ListUser(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != session.ListLimit {
		t.Fatalf("%d items, want %d", len(items), session.ListLimit)
	}
	for i := 1; i < len(items); i++ {
		if items[i].LoginTime.After(items[i-1].LoginTime.Time) {
			t.Fatal("not newest first")
		}
	}
}

func TestPurge(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "dave")
		live := e.login(t, e.svc, uid)
		refresh(t, e.svc, live.RefreshToken)
		gone := e.login(t, e.svc, uid)
		if err := e.svc.Revoke(ctx, gone.SessionID, "logout"); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		sessions, tokens, err := e.svc.Purge(ctx, 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if sessions != 0 || tokens != 1 {
			t.Fatalf("purged %d sessions, %d tokens; want 0, 1", sessions, tokens)
		}
		n, err := e.client.SysSessionToken.Query().Where(syssessiontoken.SessionID(live.SessionID)).Count(ctx)
		if err != nil || n != 2 {
			t.Fatalf("live session keeps %d token rows (%v), want 2", n, err)
		}
		e.clock.Advance(2 * time.Hour)
		sessions, _, err = e.svc.Purge(ctx, 2*time.Hour)
		if err != nil || sessions != 1 {
			t.Fatalf("purged %d sessions (%v), want the revoked one", sessions, err)
		}
		if ok, _ := e.svc.Exists(ctx, gone.SessionID); ok {
			t.Fatal("revoked session row kept")
		}
		if !e.active(t, live.SessionID) {
			t.Fatal("live session purged")
		}
	})
}

// TestPurgeInBatches: Purge walks the ended sessions a batch at a time
// (short statements on a table of a million rows) and still removes every
// ended one and nothing else, whatever the batch boundaries.
func TestPurgeInBatches(t *testing.T) {
	defer session.SetPurgeBatch(3)()
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "fay")
		var ended []string
		var live []string
		for i := 0; i < 11; i++ {
			is := e.login(t, e.svc, uid)
			if i%4 == 0 {
				live = append(live, is.SessionID)
				continue
			}
			if err := e.svc.Revoke(ctx, is.SessionID, "logout"); err != nil {
				t.Fatal(err)
			}
			ended = append(ended, is.SessionID)
		}
		e.clock.Advance(3 * time.Hour)
		sessions, tokens, err := e.svc.Purge(ctx, 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if sessions != len(ended) || tokens != len(ended) {
			t.Fatalf("purged %d sessions and %d tokens, want %d of each", sessions, tokens, len(ended))
		}
		for _, sid := range ended {
			if ok, _ := e.svc.Exists(ctx, sid); ok {
				t.Fatalf("ended session %s kept", sid)
			}
		}
		for _, sid := range live {
			if !e.active(t, sid) {
				t.Fatalf("live session %s purged", sid)
			}
		}
	})
}

func TestErrorsCarryNoToken(t *testing.T) {
	e := newEnv(t, dbtestSqlite(), session.Options{})
	uid := e.user(t, "erin")
	is := e.login(t, e.svc, uid)
	e.drv.poison.Store(true)
	_, err := e.svc.Refresh(context.Background(), is.RefreshToken)
	e.drv.poison.Store(false)
	if err == nil || strings.Contains(err.Error(), is.RefreshToken) || !errors.Is(err, errPoisoned) {
		t.Fatalf("Refresh with the database down = %v", err)
	}
}
