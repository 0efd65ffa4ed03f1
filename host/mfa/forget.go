package mfa

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuserpasskey"
	"github.com/adminkernel/kernel/ent/sysuserrecoverycode"
	"github.com/adminkernel/kernel/host/module"
)

// forgets: a purged user's passkeys and recovery codes go.
func forgets(*module.Deps) []module.Forget {
	return []module.Forget{{Of: module.ForgetUser, What: "passkeys and recovery codes", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
		if _, err := tx.SysUserPasskey.Delete().Where(sysuserpasskey.UserID(id)).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.SysUserRecoveryCode.Delete().Where(sysuserrecoverycode.UserID(id)).Exec(ctx)
		return err
	}}}
}
