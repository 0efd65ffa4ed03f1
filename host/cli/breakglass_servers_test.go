//go:build !unit

package cli_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// onServers runs f on a kernel on a fresh PostgreSQL and a fresh MariaDB
// database, each with Redis under its own key prefix (the kernel keeps near
// copies of the session marks: Service:Cache:NearCacheSeconds defaults to
// 30), with the commands pointed at the same database and Redis prefix. An
// absent server fails the test.
func onServers(t *testing.T, f func(t *testing.T, s *shared)) {
	for _, db := range []string{config.DBPostgreSQL, config.DBMySQL} {
		t.Run(db, func(t *testing.T) {
			cfg := dbtest.Config(t, db)
			f(t, startShared(t, map[string]string{
				"Service__Database__DbType":           cfg.Service.Database.DbType,
				"Service__Database__ConnectionString": cfg.Service.Database.ConnectionString.Reveal(),
				"Service__Cache__Provider":            "Redis",
				"Service__Cache__Redis__Address":      kerneltest.RedisAddr(),
				"Service__Cache__Redis__KeyPrefix":    kerneltest.RedisPrefix(t),
			}))
		})
	}
}

// TestResetPasswordOnServers: a locked-out super-admin with a live session;
// reset-password (another process's view: its own connections) ends the
// session on the running kernel at once (the old access token gets 401,
// the refresh fails), lifts the lock, and the new password logs in.
func TestResetPasswordOnServers(t *testing.T) {
	onServers(t, func(t *testing.T, s *shared) {
		k := s.k
		old := k.Login("superAdmin", kerneltest.AdminPassword)
		k.Do("GET", profile, old.AccessToken, nil).ExpectCode(t, "profile before the reset", 0) // cached, near copy included
		for range 5 {
			login(k, "superAdmin", "wrong")
		}
		login(k, "superAdmin", kerneltest.AdminPassword).ExpectCode(t, "locked", errcode.AccountLocked)

		out, errOut, err := s.cmd("", "user", "reset-password", "SuperAdmin", "--json")
		if err != nil {
			t.Fatalf("reset-password: %v\n%s", err, errOut)
		}
		var res struct {
			Password        string `json:"password"`
			SessionsRevoked int    `json:"sessionsRevoked"`
			LockoutCleared  bool   `json:"lockoutCleared"`
			SharedCache     bool   `json:"sharedCache"`
		}
		decode(t, out, &res)
		k.Leaks.Secrets = append(k.Leaks.Secrets, res.Password)
		if res.Password == "" || res.SessionsRevoked != 1 || !res.LockoutCleared || !res.SharedCache {
			t.Fatalf("reset-password --json = %+v", res)
		}
		if strings.Contains(errOut, "Restart the service") {
			t.Errorf("with Redis the command still talks of a restart:\n%s", errOut)
		}
		k.Do("GET", profile, old.AccessToken, nil).ExpectCode(t, "old access token after the reset", errcode.TokenInvalid)
		refresh(k, old.RefreshToken).ExpectCode(t, "old refresh token after the reset", errcode.RefreshTokenInvalid)
		login(k, "superAdmin", kerneltest.AdminPassword).ExpectCode(t, "old password", errcode.PasswordWrong)
		if tp := k.Login("superAdmin", res.Password); !tp.MustChangePassword || !tp.IsSuperAdmin {
			t.Fatalf("login with the new password = %+v", tp)
		}
	})
}

// TestResetPasswordConcurrentOnServers: two resets at once leave one whole
// password on PostgreSQL and MariaDB too.
func TestResetPasswordConcurrentOnServers(t *testing.T) {
	onServers(t, func(t *testing.T, s *shared) { resetTwice(t, s) })
}

// TestCreateSuperAdminOnServers: the new super-admin logs in on the running
// kernel; its id was generated with a leased worker id other than the
// kernel's, and the account is refused a second time in another case.
func TestCreateSuperAdminOnServers(t *testing.T) {
	onServers(t, func(t *testing.T, s *shared) {
		k := s.k
		out, _, err := s.cmd("", "user", "create-superadmin", "Rescue", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			UserID   int64  `json:"userId"`
			Password string `json:"password"`
			Worker   int    `json:"worker"`
		}
		decode(t, out, &res)
		k.Leaks.Secrets = append(k.Leaks.Secrets, res.Password)
		if lease := k.WorkerLease(); lease == nil || lease.Worker() == res.Worker {
			t.Fatalf("the command's worker id %d is the kernel's (lease %v)", res.Worker, lease)
		}
		if got := int(res.UserID>>6) & 63; got != res.Worker {
			t.Fatalf("user id %d carries worker %d, the command reported %d", res.UserID, got, res.Worker)
		}
		tp := k.Login("rescue", res.Password)
		if tp.UserID != res.UserID || !tp.IsSuperAdmin || !tp.MustChangePassword {
			t.Fatalf("login of the new super-admin = %+v", tp)
		}
		if _, _, err := s.cmd("", "user", "create-superadmin", "RESCUE"); err == nil || !strings.Contains(err.Error(), "already has the account") {
			t.Fatalf("a second create-superadmin RESCUE = %v", err)
		}
	})
}

// TestSessionRevokeOnServers: revoke --user refuses the user's access token
// (401) and refresh token on the running kernel at once, leaving others;
// revoke --all then refuses everyone's.
func TestSessionRevokeOnServers(t *testing.T) {
	onServers(t, func(t *testing.T, s *shared) {
		k := s.k
		k.User("alice", "Alice#Passw0rd")
		admin := k.Login("superAdmin", kerneltest.AdminPassword)
		alice := k.Login("alice", "Alice#Passw0rd")
		for _, tp := range []kerneltest.Tokens{admin, alice} {
			k.Do("GET", profile, tp.AccessToken, nil).ExpectCode(t, "profile before revoking", 0)
		}

		out, _, err := s.cmd("", "session", "revoke", "--user", "ALICE", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Scope       string `json:"scope"`
			Account     string `json:"account"`
			Revoked     int    `json:"revoked"`
			SharedCache bool   `json:"sharedCache"`
		}
		decode(t, out, &res)
		if res.Scope != "user" || res.Account != "alice" || res.Revoked != 1 || !res.SharedCache {
			t.Fatalf("revoke --user --json = %+v", res)
		}
		k.Do("GET", profile, alice.AccessToken, nil).ExpectCode(t, "alice's access token after revoke --user", errcode.TokenInvalid)
		refresh(k, alice.RefreshToken).ExpectCode(t, "alice's refresh token after revoke --user", errcode.RefreshTokenInvalid)
		k.Do("GET", profile, admin.AccessToken, nil).ExpectCode(t, "the admin's access token after revoke --user alice", 0)

		out, _, err = s.cmd("", "session", "revoke", "--all", "--yes")
		if err != nil || !strings.Contains(out, "1 session(s) ended") {
			t.Fatalf("revoke --all = %q, %v", out, err)
		}
		k.Do("GET", profile, admin.AccessToken, nil).ExpectCode(t, "the admin's access token after revoke --all", errcode.TokenInvalid)
		refresh(k, admin.RefreshToken).ExpectCode(t, "the admin's refresh token after revoke --all", errcode.RefreshTokenInvalid)
		k.Login("alice", "Alice#Passw0rd") // logging in again works
	})
}
