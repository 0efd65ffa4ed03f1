//go:build !unit

package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestUserUnlockClearsTheSharedCounters: the break-glass path end to end —
// a kernel on Redis locks the super-admin's account for a client; `user
// unlock` (another process's view: its own database connection and Redis
// client) lifts it, in any letter case of the account.
func TestUserUnlockClearsTheSharedCounters(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"Service__Cache__Provider":            "Redis",
		"Service__Cache__Redis__Address":      kerneltest.RedisAddr(),
		"Service__Cache__Redis__KeyPrefix":    kerneltest.RedisPrefix(t),
		"Service__Database__DbType":           "Sqlite",
		"Service__Database__ConnectionString": "Data Source=" + filepath.Join(dir, "ak.db"),
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
		t.Setenv(k, v)
	}
	k := kerneltest.Start(t, environ)
	for i := 0; i < 5; i++ {
		k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": "wrong"})
	}
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword}).
		ExpectCode(t, "locked", errcode.AccountLocked)

	out, _, err := run(t, context.Background(), host.Options{}, "user", "unlock", "SUPERADMIN", "--content-root", dir, "--environment", "Development")
	if err != nil || !strings.Contains(out, "unlocked SUPERADMIN") {
		t.Fatalf("user unlock = %q, %v", out, err)
	}
	k.Login("superAdmin", kerneltest.AdminPassword)

	// A mistyped account is an error (exit status 1), not a success.
	out, _, err = run(t, context.Background(), host.Options{}, "user", "unlock", "superAdmn", "--content-root", dir, "--environment", "Development")
	if err == nil || !strings.Contains(err.Error(), `no live user has the account "superAdmn"`) {
		t.Fatalf("user unlock of an unknown account = %q, %v; want an error naming it", out, err)
	}
}
