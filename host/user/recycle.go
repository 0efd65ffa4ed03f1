package user

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the user area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the user area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.userKind(), "user", []string{"POST:/api/v1/sys/user", "PUT:/api/v1/sys/user/{id}"}, "DELETE:/api/v1/sys/user/{id}"),
	}
}

// userKind: deleted users within the caller's data scope. A restore brings
// the account back without roles or external-login bindings (the delete
// removed them); a purge removes the row and everything keyed by the
// user (purgeUserRows).
func (s *recycleBin) userKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, who datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysUser.Query().Where(sysuser.IsDelete(true)).Where(who.Scope.Users()...).
				Order(ent.Desc(sysuser.FieldUpdateTime), ent.Desc(sysuser.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(u *ent.SysUser) (int64, string, *string, recycle.Deleted) {
				return u.ID, u.Name, recycle.Ptr(u.Account), recycle.Deleted{At: recycle.When(u.UpdateTime, u.CreateTime), By: u.UpdateUserID}
			})
		},
		Restore: s.restoreUser,
		Purge:   s.purgeUser,
	}
}

// deletedUser returns a deleted user the caller may act on: in their data
// scope (41005, as the user area answers), a super-admin only for the
// super-admin (42007).
func (s *recycleBin) deletedUser(ctx context.Context, who datascope.Caller, id int64) (*ent.SysUser, error) {
	u, err := s.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(true)).Only(ctx)
	if err := recycle.Missing(err, id); err != nil {
		return nil, err
	}
	if !who.Scope.ContainsUser(u.ID, u.OrgID) {
		return nil, errcode.New(errcode.UserOutOfDataScope).With("id", u.ID)
	}
	if u.IsSuperAdmin && !who.SuperAdmin {
		return nil, errcode.New(errcode.SuperAdminProtected)
	}
	return u, nil
}

func (s *recycleBin) restoreUser(ctx context.Context, who datascope.Caller, id int64) error {
	u, err := s.deletedUser(ctx, who, id)
	if err != nil {
		return err
	}
	if u.OrgID != nil {
		live, err := s.Client.SysOrg.Query().Where(sysorg.ID(*u.OrgID), sysorg.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return recycle.ParentDeleted("org")
		}
	}
	if u.PositionID != nil {
		live, err := s.Client.SysPosition.Query().Where(sysposition.ID(*u.PositionID), sysposition.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return recycle.ParentDeleted("position")
		}
	}
	taken, err := s.Client.SysUser.Query().Where(sysuser.IsDelete(false),
		sysuser.Or(sysuser.Account(u.Account), sysuser.AccountNorm(schema.NormalizeAccount(u.Account)))).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return recycle.Conflict().With("account", u.Account)
	}
	n, err := s.Client.SysUser.Update().Where(sysuser.ID(id), sysuser.IsDelete(true)).
		SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
	if err := recycle.Affected(n, err, id); err != nil {
		return err
	}
	return s.D.InvalidateAccess(ctx, id)
}

func (s *recycleBin) purgeUser(ctx context.Context, who datascope.Caller, id int64) error {
	u, err := s.deletedUser(ctx, who, id)
	if err != nil {
		return err
	}
	if u.IsSuperAdmin {
		return errcode.New(errcode.SuperAdminProtected)
	}
	err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysUser.Delete().Where(sysuser.ID(id), sysuser.IsDelete(true), sysuser.IsSuperAdmin(false)).Exec(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		return s.purgeUserRows(ctx, tx, id, who.UserID)
	})
	if err != nil {
		return err
	}
	return s.D.InvalidateAccess(ctx, id)
}

// purgeUserRows removes the rows keyed by a purged user that this module
// owns (role links; other users naming them as director lose the
// reference), then runs every module's forget of the user (sessions,
// external bindings, factors, notice marks and receivers, ...). Logs
// (login, operation) and uploaded files stay: they are records of what
// happened.
func (s *recycleBin) purgeUserRows(ctx context.Context, tx *ent.Tx, id, by int64) error {
	if _, err := tx.SysUserRole.Delete().Where(sysuserrole.UserID(id)).Exec(ctx); err != nil {
		return err
	}
	if err := tx.SysUser.Update().Where(sysuser.DirectorID(id)).ClearDirectorID().Exec(ctx); err != nil {
		return err
	}
	return s.D.Forget(ctx, tx, module.ForgetUser, id, by)
}
