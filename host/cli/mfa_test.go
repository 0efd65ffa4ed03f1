package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserpasskey"
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
	// A passkey as the database holds one: clear-mfa removes it too.
	k.Ent().SysUserPasskey.Create().SetUserID(1).SetCredentialID("AQID").SetCredentialHash(strings.Repeat("a", 64)).
		SetPublicKey([]byte{1}).SetName("key").SetCreatedAt(time.Now()).ExecX(ctx)

	out, errOut, err := s.cmd("", "user", "clear-mfa", "SUPERADMIN")
	if err != nil {
		t.Fatalf("clear-mfa: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "TOTP and passkeys of superAdmin (user 1) cleared; 1 session(s) ended") {
		t.Errorf("clear-mfa output:\n%s", out)
	}
	u := k.Ent().SysUser.Query().Where(sysuser.ID(1)).OnlyX(ctx)
	if u.TotpEnabled || u.TotpSecret != nil {
		t.Fatalf("after clear-mfa: enabled %v, secret %v", u.TotpEnabled, u.TotpSecret)
	}
	if n := k.Ent().SysUserPasskey.Query().Where(sysuserpasskey.UserID(1)).CountX(ctx); n != 0 {
		t.Fatalf("after clear-mfa: %d passkey(s) left", n)
	}
	login(k, "superAdmin", kerneltest.AdminPassword).ExpectCode(t, "login, required and not bound", errcode.TotpNotBound)

	if _, _, err := s.cmd("", "user", "clear-mfa", "nobody"); err == nil || !strings.Contains(err.Error(), "no live user") {
		t.Fatalf("clear-mfa of an unknown account = %v", err)
	}
}
