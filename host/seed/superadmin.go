package seed

import (
	"context"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
)

// RootOrgID is the org the seeded super-admin belongs to (the seeded root
// of the org tree).
const RootOrgID int64 = 1

// SuperAdmin describes an additional super-admin (`adminkernel user
// create-superadmin`).
type SuperAdmin struct {
	// Account is the login name, unique case-insensitively among live users
	// (the caller checks its shape, as the API does).
	Account string
	// Name is the display name (default: the account).
	Name string
	// PasswordHash is the stored form of the password.
	PasswordHash string
	// MustChangePassword restricts the first sessions to changing it.
	MustChangePassword bool
}

// CreateSuperAdmin adds a super-admin the way Run seeds the first one:
// enabled, with the super-admin flag and no role (a super-admin holds every
// permission without one), in the root org, password_changed_at now. Its id
// comes from the client's id source (database.WithIDs) and account_norm
// from the client's hook. An account a live user already has, in any letter
// case, gives errcode.AccountExists, also when another process takes it
// between the check and the insert (the unique index decides).
func CreateSuperAdmin(ctx context.Context, client *ent.Client, in SuperAdmin) (int64, error) {
	account := strings.TrimSpace(in.Account)
	taken, err := client.SysUser.Query().
		Where(sysuser.AccountNorm(schema.NormalizeAccount(account)), sysuser.IsDelete(false)).
		Exist(ctx)
	if err != nil {
		return 0, err
	}
	if taken {
		return 0, errcode.New(errcode.AccountExists).With("account", account)
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = account
	}
	u, err := client.SysUser.Create().
		SetAccount(account).
		SetName(name).
		SetPasswordHash(in.PasswordHash).
		SetPasswordChangedAt(time.Now()).
		SetIsSuperAdmin(true).
		SetEnabled(true).
		SetMustChangePassword(in.MustChangePassword).
		SetOrgID(RootOrgID).
		Save(ctx)
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.AccountExists).With("account", account).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}
