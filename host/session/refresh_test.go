package session_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/syssessiontoken"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/token"
)

const grace = 10 * time.Second

// refresh exchanges plain and fails the test on error.
func refresh(t *testing.T, svc *session.Service, plain string) session.Refreshed {
	t.Helper()
	r, err := svc.Refresh(context.Background(), plain)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	return r
}

// refused asserts that plain is refused with 40007.
func refused(t *testing.T, svc *session.Service, plain, what string) {
	t.Helper()
	r, err := svc.Refresh(context.Background(), plain)
	if !isCode(err, errcode.RefreshTokenInvalid) {
		t.Fatalf("%s: Refresh = %+v, %v; want 40007", what, r, err)
	}
	if r != (session.Refreshed{}) {
		t.Fatalf("%s: a refused refresh returned %+v", what, r)
	}
}

func TestRefreshRotation(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		strict := e.svc
		graceful := e.service(session.Options{RefreshGrace: grace})
		uid := e.user(t, "alice")

		t.Run("rotates and the old token dies", func(t *testing.T) {
			is := e.login(t, strict, uid)
			e.clock.Advance(time.Minute)
			r := refresh(t, strict, is.RefreshToken)
			if r.SessionID != is.SessionID || r.UserID != uid {
				t.Fatalf("refreshed %+v for session %s", r, is.SessionID)
			}
			if r.RefreshToken == is.RefreshToken || len(r.RefreshToken) != 86 {
				t.Fatalf("new refresh token %q", r.RefreshToken)
			}
			if !r.RefreshExpiresAt.Equal(is.RefreshExpiresAt) {
				t.Errorf("refresh moved the absolute expiry from %v to %v", is.RefreshExpiresAt, r.RefreshExpiresAt)
			}
			row := e.row(t, is.SessionID)
			if row.RefreshTokenHash != token.HashRefreshToken(r.RefreshToken) || row.PrevRefreshTokenHash == nil ||
				*row.PrevRefreshTokenHash != token.HashRefreshToken(is.RefreshToken) || row.RefreshRotatedAt == nil {
				t.Errorf("session row not updated by the rotation: %+v", row)
			}
			r2 := refresh(t, strict, r.RefreshToken)
			if r2.SessionID != is.SessionID {
				t.Fatal("the second refresh changed session")
			}
			// The first token is dead: presenting it is reuse.
			refused(t, strict, is.RefreshToken, "rotated token")
		})

		t.Run("reuse revokes the session and the newest token", func(t *testing.T) {
			is := e.login(t, strict, uid)
			r := refresh(t, strict, is.RefreshToken)
			refused(t, strict, is.RefreshToken, "reuse")
			refused(t, strict, r.RefreshToken, "newest token after reuse")
			if e.active(t, is.SessionID) {
				t.Fatal("session still active after reuse")
			}
			row := e.row(t, is.SessionID)
			if row.RevokedAt == nil || row.RevokeReason == nil || *row.RevokeReason != session.ReasonReuse {
				t.Fatalf("revocation not recorded: %+v", row)
			}
		})

		t.Run("reuse after the grace window revokes", func(t *testing.T) {
			is := e.login(t, graceful, uid)
			r := refresh(t, graceful, is.RefreshToken)
			e.clock.Advance(grace + time.Second)
			refused(t, graceful, is.RefreshToken, "previous token after the window")
			refused(t, graceful, r.RefreshToken, "newest token after reuse")
			if e.active(t, is.SessionID) {
				t.Fatal("session still active after reuse")
			}
		})

		t.Run("within the window the previous token gets one more pair and both work", func(t *testing.T) {
			is := e.login(t, graceful, uid)
			first := refresh(t, graceful, is.RefreshToken) // tab A
			e.clock.Advance(3 * time.Second)
			second := refresh(t, graceful, is.RefreshToken) // tab B, same old token
			if second.SessionID != is.SessionID || second.RefreshToken == first.RefreshToken {
				t.Fatalf("grace pair %+v", second)
			}
			if !e.active(t, is.SessionID) {
				t.Fatal("the grace refresh revoked the session")
			}
			// Both pairs keep working, each rotating on its own.
			a := refresh(t, graceful, first.RefreshToken)
			b := refresh(t, graceful, second.RefreshToken)
			refresh(t, graceful, a.RefreshToken)
			refresh(t, graceful, b.RefreshToken)
			if !e.active(t, is.SessionID) {
				t.Fatal("session revoked")
			}
		})

		t.Run("the grace use is single", func(t *testing.T) {
			is := e.login(t, graceful, uid)
			first := refresh(t, graceful, is.RefreshToken)
			second := refresh(t, graceful, is.RefreshToken)
			refused(t, graceful, is.RefreshToken, "third use inside the window")
			refused(t, graceful, first.RefreshToken, "first pair after reuse")
			refused(t, graceful, second.RefreshToken, "grace pair after reuse")
		})

		t.Run("only the immediately previous token has grace", func(t *testing.T) {
			is := e.login(t, graceful, uid)
			r1 := refresh(t, graceful, is.RefreshToken)
			refresh(t, graceful, r1.RefreshToken)
			// is.RefreshToken is two rotations old, though inside the window.
			refused(t, graceful, is.RefreshToken, "grandparent token")
			if e.active(t, is.SessionID) {
				t.Fatal("session still active")
			}
		})

		t.Run("strict mode has no grace", func(t *testing.T) {
			is := e.login(t, strict, uid)
			refresh(t, strict, is.RefreshToken)
			refused(t, strict, is.RefreshToken, "immediate reuse")
			if e.active(t, is.SessionID) {
				t.Fatal("session still active")
			}
		})

		t.Run("a revoked session cannot refresh", func(t *testing.T) {
			is := e.login(t, strict, uid)
			if err := strict.Revoke(context.Background(), is.SessionID, "logout"); err != nil {
				t.Fatal(err)
			}
			refused(t, strict, is.RefreshToken, "token of a revoked session")
		})

		t.Run("an expired session cannot refresh", func(t *testing.T) {
			is, err := strict.Create(context.Background(), session.NewSession{UserID: uid, Method: "sms", RefreshTTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(time.Hour)
			refused(t, strict, is.RefreshToken, "token of an expired session")
			if e.active(t, is.SessionID) {
				t.Fatal("expired session active")
			}
			if e.row(t, is.SessionID).RevokedAt != nil {
				t.Fatal("expiry was treated as reuse")
			}
		})

		t.Run("garbage is refused", func(t *testing.T) {
			for _, plain := range []string{"", "x", strings.Repeat("a", 86), strings.Repeat("a", 4096)} {
				refused(t, strict, plain, fmt.Sprintf("%.10q", plain))
			}
		})
	})
}

// TestConcurrentRefresh: of N parallel refreshes of one token exactly one
// rotates it (strict mode), on every dialect; in grace mode two tabs both
// succeed.
func TestConcurrentRefresh(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		uid := e.user(t, "racer")
		run := func(svc *session.Service, plain string, n int) (ok []session.Refreshed, failed []error) {
			var (
				mu    sync.Mutex
				start = make(chan struct{})
				wg    sync.WaitGroup
			)
			for range n {
				wg.Go(func() {
					<-start
					r, err := svc.Refresh(context.Background(), plain)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						ok = append(ok, r)
					} else {
						failed = append(failed, err)
					}
				})
			}
			close(start)
			wg.Wait()
			return ok, failed
		}

		t.Run("strict: 5 parallel, exactly 1 succeeds", func(t *testing.T) {
			for round := range 5 {
				is := e.login(t, e.svc, uid)
				ok, failed := run(e.svc, is.RefreshToken, 5)
				if len(ok) != 1 {
					t.Fatalf("round %d: %d successes (%v), want exactly 1", round, len(ok), failed)
				}
				for _, err := range failed {
					if !isCode(err, errcode.RefreshTokenInvalid) {
						t.Fatalf("round %d: a loser got %v, want 40007", round, err)
					}
				}
				n, err := e.client.SysSessionToken.Query().Where(syssessiontoken.SessionID(is.SessionID)).Count(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if n != 2 {
					t.Fatalf("round %d: %d token rows, want the login token and one successor", round, n)
				}
			}
		})

		t.Run("grace: two tabs refreshing together both succeed", func(t *testing.T) {
			svc := e.service(session.Options{RefreshGrace: grace})
			for round := range 5 {
				is := e.login(t, svc, uid)
				ok, failed := run(svc, is.RefreshToken, 2)
				if len(ok) != 2 {
					t.Fatalf("round %d: %d successes (%v), want 2", round, len(ok), failed)
				}
				for _, r := range ok {
					refresh(t, svc, r.RefreshToken)
				}
				if !e.active(t, is.SessionID) {
					t.Fatalf("round %d: session revoked", round)
				}
			}
		})
	})
}
