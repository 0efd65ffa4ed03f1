package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/session"
)

// TestPasswordChangeState: a session opened with MustChangePassword answers
// PasswordChange from the cached mark (no database read on a hit) and from
// the row on a miss; PasswordChanged lifts it on the next read; other
// sessions are plain Active.
func TestPasswordChangeState(t *testing.T) {
	forEachDialect(t, session.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		uid := e.user(t, "newbie")
		restricted, err := e.svc.Create(ctx, session.NewSession{
			UserID: uid, Method: session.MethodPassword, MustChangePassword: true, RefreshTTL: time.Hour,
		})
		if err != nil {
			t.Fatal(err)
		}
		plain := e.login(t, e.svc, uid)
		state := func(sid string) session.State {
			t.Helper()
			st, err := e.svc.State(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}

		e.drv.poison.Store(true)
		if st := state(restricted.SessionID); st != session.PasswordChange {
			t.Fatalf("restricted session from the mark = %v, want PasswordChange", st)
		}
		if st := state(plain.SessionID); st != session.Active {
			t.Fatalf("plain session = %v, want Active", st)
		}
		e.drv.poison.Store(false)
		if !e.active(t, restricted.SessionID) {
			t.Fatal("a restricted session is still active")
		}

		if err := e.store.Delete(ctx, session.KeyPrefix+restricted.SessionID); err != nil {
			t.Fatal(err)
		}
		if st := state(restricted.SessionID); st != session.PasswordChange {
			t.Fatalf("restricted session from the row = %v, want PasswordChange", st)
		}

		if err := e.svc.PasswordChanged(ctx, uid); err != nil {
			t.Fatal(err)
		}
		if st := state(restricted.SessionID); st != session.Active {
			t.Fatalf("after PasswordChanged = %v, want Active", st)
		}
		if e.row(t, restricted.SessionID).MustChangePassword {
			t.Fatal("the row still carries the flag")
		}

		if err := e.svc.Revoke(ctx, restricted.SessionID, "logout"); err != nil {
			t.Fatal(err)
		}
		if st := state(restricted.SessionID); st != session.Inactive {
			t.Fatalf("after logout = %v, want Inactive", st)
		}
	})
}
