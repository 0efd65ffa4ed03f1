package externalauth

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/module"
)

// forgets: a deleted user's external-login bindings are soft-deleted
// (delete_key = the binding's id frees the provider subject for another
// account); a purged user's bindings, live or deleted, go.
func forgets(*module.Deps) []module.Forget {
	return []module.Forget{{Of: module.ForgetDeletedUser, What: "external-login bindings", Run: func(ctx context.Context, tx *ent.Tx, id, by int64) error {
		bindings, err := tx.SysUserExternal.Query().
			Where(sysuserexternal.UserID(id), sysuserexternal.IsDelete(false)).IDs(ctx)
		if err != nil {
			return err
		}
		for _, b := range bindings {
			if err := tx.SysUserExternal.UpdateOneID(b).SetIsDelete(true).SetDeleteKey(b).SetUpdateUserID(by).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}}, {Of: module.ForgetUser, What: "external-login bindings", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
		_, err := tx.SysUserExternal.Delete().Where(sysuserexternal.UserID(id)).Exec(ctx)
		return err
	}}}
}
