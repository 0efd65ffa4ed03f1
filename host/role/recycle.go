package role

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the role area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the role area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.roleKind(), "role", []string{"POST:/api/v1/sys/role/add", "PUT:/api/v1/sys/role/{id}"}, "DELETE:/api/v1/sys/role/{id}"),
	}
}

// roleKind: deleted roles. The delete removed the role's menu and user
// links and soft-deleted its data scope; a restore brings the role back
// with that data scope (when no live one exists) and no grants or holders.
// A caller other than the super-admin restores or purges only a role
// within their own codes and data scope (41006, host/authority).
func (s *recycleBin) roleKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysRole.Query().Where(sysrole.IsDelete(true)).
				Order(ent.Desc(sysrole.FieldUpdateTime), ent.Desc(sysrole.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(r *ent.SysRole) (int64, string, *string, recycle.Deleted) {
				return r.ID, r.Name, recycle.Ptr(r.Code), recycle.Deleted{At: recycle.When(r.UpdateTime, r.CreateTime), By: r.UpdateUserID}
			})
		},
		Restore: s.restoreRole,
		Purge:   s.purgeRole,
	}
}

// deletedRole returns a deleted role, its last deleted data scope (nil
// when it has none or a live one exists), after the authority check.
func (s *recycleBin) deletedRole(ctx context.Context, who datascope.Caller, id int64) (*ent.SysRole, *ent.SysRoleDataScope, error) {
	r, err := s.Client.SysRole.Query().Where(sysrole.ID(id), sysrole.IsDelete(true)).Only(ctx)
	if err := recycle.Missing(err, id); err != nil {
		return nil, nil, err
	}
	var scope *ent.SysRoleDataScope
	live, err := s.Client.SysRoleDataScope.Query().
		Where(sysroledatascope.RoleID(id), sysroledatascope.IsDelete(false)).Exist(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !live {
		scope, err = s.Client.SysRoleDataScope.Query().
			Where(sysroledatascope.RoleID(id), sysroledatascope.IsDelete(true)).
			Order(ent.Desc(sysroledatascope.FieldUpdateTime), ent.Desc(sysroledatascope.FieldID)).First(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return nil, nil, err
		}
	}
	if who.SuperAdmin {
		return r, scope, nil
	}
	codes, err := authz.RoleCodes(ctx, s.Client, []int64{id})
	if err != nil {
		return nil, nil, err
	}
	if err := s.Limits.Codes(ctx, who, codes); err != nil {
		return nil, nil, err
	}
	if scope != nil {
		if err := s.Limits.RoleScope(ctx, who, id, datascope.RowOf(scope)); err != nil {
			return nil, nil, err
		}
	}
	return r, scope, nil
}

func (s *recycleBin) restoreRole(ctx context.Context, who datascope.Caller, id int64) error {
	r, scope, err := s.deletedRole(ctx, who, id)
	if err != nil {
		return err
	}
	taken, err := s.Client.SysRole.Query().Where(sysrole.Code(r.Code), sysrole.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return recycle.Conflict().With("code", r.Code)
	}
	var holders []int64
	err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysRole.Update().Where(sysrole.ID(id), sysrole.IsDelete(true)).
			SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		if scope != nil {
			if err := tx.SysRoleDataScope.UpdateOneID(scope.ID).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Exec(ctx); err != nil {
				return recycle.RestoreErr(err)
			}
		}
		holders, err = holdersOf(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	return s.D.InvalidateAccess(ctx, holders...)
}

func (s *recycleBin) purgeRole(ctx context.Context, who datascope.Caller, id int64) error {
	if _, _, err := s.deletedRole(ctx, who, id); err != nil {
		return err
	}
	var holders []int64
	err := database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysRole.Delete().Where(sysrole.ID(id), sysrole.IsDelete(true)).Exec(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		if holders, err = holdersOf(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.SysUserRole.Delete().Where(sysuserrole.RoleID(id)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.SysRoleMenu.Delete().Where(sysrolemenu.RoleID(id)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.SysRoleDataScope.Delete().Where(sysroledatascope.RoleID(id)).Exec(ctx); err != nil {
			return err
		}
		return s.D.Forget(ctx, tx, module.ForgetRole, id, who.UserID)
	})
	if err != nil {
		return err
	}
	return s.D.InvalidateAccess(ctx, holders...)
}

// holdersOf returns the ids of the users linked to role id.
func holdersOf(ctx context.Context, tx *ent.Tx, id int64) ([]int64, error) {
	links, err := tx.SysUserRole.Query().Where(sysuserrole.RoleID(id)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(links))
	for i, l := range links {
		out[i] = l.UserID
	}
	return out, nil
}
