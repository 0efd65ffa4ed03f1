package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestClearMfa: `user clear-mfa` removes the super-admin's TOTP binding and
// ends its sessions; with TOTP still required of the super-admin the next
// login answers 40020 (bind again) instead of 40018.
func TestClearMfa(t *testing.T) {
	s := startShared(t, nil)
	k := s.k
	ctx := context.Background()
	k.Login("superAdmin", kerneltest.AdminPassword)
	for key, v := range map[string]string{"sys.security.totp.enabled": "true", "sys.security.totp.requireForSuperAdmin": "true"} {
		if err := k.Settings().Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	// A binding as the database holds one (the seed is never opened here).
	k.Ent().SysUser.Update().Where(sysuser.ID(1)).SetTotpEnabled(true).SetTotpSecret("v1.k.sealed").ExecX(ctx)
	login(k, "superAdmin", kerneltest.AdminPassword).ExpectCode(t, "login with TOTP bound", errcode.TotpRequired)

	out, errOut, err := s.cmd("", "user", "clear-mfa", "SUPERADMIN")
	if err != nil {
		t.Fatalf("clear-mfa: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "TOTP of superAdmin (user 1) cleared; 1 session(s) ended") {
		t.Errorf("clear-mfa output:\n%s", out)
	}
	u := k.Ent().SysUser.Query().Where(sysuser.ID(1)).OnlyX(ctx)
	if u.TotpEnabled || u.TotpSecret != nil {
		t.Fatalf("after clear-mfa: enabled %v, secret %v", u.TotpEnabled, u.TotpSecret)
	}
	login(k, "superAdmin", kerneltest.AdminPassword).ExpectCode(t, "login, required and not bound", errcode.TotpNotBound)

	if _, _, err := s.cmd("", "user", "clear-mfa", "nobody"); err == nil || !strings.Contains(err.Error(), "no live user") {
		t.Fatalf("clear-mfa of an unknown account = %v", err)
	}
}
