package authn_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/token"
)

// TestPasswordChangeSession: a session that must change its password passes
// the Token guard (logout), the Session guard of passwordChangeRoutes
// (profile) and anonymous routes; every other Session or Permission route
// answers 403 / 40028, the super-admin's included. A normal session of the
// same user is not affected.
func TestPasswordChangeSession(t *testing.T) {
	f := newFixture(t, newMemStore())
	restricted := func(sadm bool) string {
		is, err := f.sessions.Create(context.Background(), session.NewSession{UserID: 7, Method: "password", MustChangePassword: true, RefreshTTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		access, _, err := f.issuer.Issue(token.Claims{UserID: 7, Account: "newbie", SessionID: is.SessionID, SuperAdmin: sadm}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + access
	}
	user, admin := restricted(false), restricted(true)
	_, plain := f.login(t, 7, "newbie", false)
	f.perms.grants[7] = []string{"GET:/api/v1/ping"}

	tests := []struct {
		name         string
		method, path string
		auth         string
		status       int
		code         errcode.Code
	}{
		{"anonymous route", "GET", pathAnon, user, http.StatusOK, 0},
		{"logout (token route)", "POST", pathLogout, user, http.StatusOK, 0},
		{"profile (allowed session route)", "GET", pathProfile, user, http.StatusOK, 0},
		{"session route", "GET", "/api/v1/bench", user, http.StatusForbidden, errcode.PasswordChangeRequired},
		{"permission route, granted", "GET", pathPing, user, http.StatusForbidden, errcode.PasswordChangeRequired},
		{"permission route, super-admin", "DELETE", "/api/v1/sys/session/x", admin, http.StatusForbidden, errcode.PasswordChangeRequired},
		{"normal session of the same user", "GET", pathPing, "Bearer " + plain, http.StatusOK, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.do(t, tt.method, tt.path, tt.auth)
			if a.status != tt.status || a.env.Code != tt.code {
				t.Fatalf("%s %s = HTTP %d code %d, want HTTP %d code %d", tt.method, tt.path, a.status, a.env.Code, tt.status, tt.code)
			}
		})
	}
}
