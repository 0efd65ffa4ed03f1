package user

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/module"
)

// forgets are the user area's shares of other areas' purges: users lose
// the organisation, position or default menu module that went.
func forgets(*module.Deps) []module.Forget {
	return []module.Forget{
		{Of: module.ForgetOrg, What: "users' organisation", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			return tx.SysUser.Update().Where(sysuser.OrgID(id)).ClearOrgID().Exec(ctx)
		}},
		{Of: module.ForgetPosition, What: "users' position", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			return tx.SysUser.Update().Where(sysuser.PositionID(id)).ClearPositionID().Exec(ctx)
		}},
		{Of: module.ForgetMenuModule, What: "users' default module", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			return tx.SysUser.Update().Where(sysuser.DefaultModuleID(id)).ClearDefaultModuleID().Exec(ctx)
		}},
	}
}
