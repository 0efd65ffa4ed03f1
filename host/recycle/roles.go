package recycle

import (
	"context"
	"errors"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/menu"
	"github.com/adminkernel/kernel/host/request"
)

// receiversRoles is the notice receiver type "roles" (host/notice).
const receiversRoles = 1

// roleKind: deleted roles. The delete removed the role's menu and user
// links and soft-deleted its data scope; a restore brings the role back
// with that data scope (when no live one exists) and no grants or holders.
// A caller other than the super-admin restores or purges only a role
// within their own codes and data scope (41006, host/authority).
func (s *Service) roleKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysRole.Query().Where(sysrole.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysrole.FieldUpdateTime), ent.Desc(sysrole.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(r *ent.SysRole) (int64, string, *string, deleted) {
				return r.ID, r.Name, ptr(r.Code), deleted{when(r.UpdateTime, r.CreateTime), r.UpdateUserID}
			})
		},
		restore: s.restoreRole,
		purge:   s.purgeRole,
	}
}

// deletedRole returns a deleted role, its last deleted data scope (nil
// when it has none or a live one exists), after the authority check.
func (s *Service) deletedRole(ctx context.Context, who datascope.Caller, id int64) (*ent.SysRole, *ent.SysRoleDataScope, error) {
	r, err := s.client.SysRole.Query().Where(sysrole.ID(id), sysrole.IsDelete(true)).Only(ctx)
	if err := missing(err, id); err != nil {
		return nil, nil, err
	}
	var scope *ent.SysRoleDataScope
	live, err := s.client.SysRoleDataScope.Query().
		Where(sysroledatascope.RoleID(id), sysroledatascope.IsDelete(false)).Exist(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !live {
		scope, err = s.client.SysRoleDataScope.Query().
			Where(sysroledatascope.RoleID(id), sysroledatascope.IsDelete(true)).
			Order(ent.Desc(sysroledatascope.FieldUpdateTime), ent.Desc(sysroledatascope.FieldID)).First(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return nil, nil, err
		}
	}
	if who.SuperAdmin {
		return r, scope, nil
	}
	codes, err := authz.RoleCodes(ctx, s.client, []int64{id})
	if err != nil {
		return nil, nil, err
	}
	if err := s.limits.Codes(ctx, who, codes); err != nil {
		return nil, nil, err
	}
	if scope != nil {
		if err := s.limits.RoleScope(ctx, who, id, datascope.RowOf(scope)); err != nil {
			return nil, nil, err
		}
	}
	return r, scope, nil
}

func (s *Service) restoreRole(ctx context.Context, who datascope.Caller, id int64) error {
	r, scope, err := s.deletedRole(ctx, who, id)
	if err != nil {
		return err
	}
	taken, err := s.client.SysRole.Query().Where(sysrole.Code(r.Code), sysrole.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return conflict().With("code", r.Code)
	}
	var holders []int64
	err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		n, err := tx.SysRole.Update().Where(sysrole.ID(id), sysrole.IsDelete(true)).
			SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
		if err := affected(n, err, id); err != nil {
			return err
		}
		if scope != nil {
			if err := tx.SysRoleDataScope.UpdateOneID(scope.ID).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Exec(ctx); err != nil {
				return restoreErr(err)
			}
		}
		holders, err = holdersOf(ctx, tx, id)
		return err
	})
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, holders...)
}

func (s *Service) purgeRole(ctx context.Context, who datascope.Caller, id int64) error {
	if _, _, err := s.deletedRole(ctx, who, id); err != nil {
		return err
	}
	var holders []int64
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		n, err := tx.SysRole.Delete().Where(sysrole.ID(id), sysrole.IsDelete(true)).Exec(ctx)
		if err := affected(n, err, id); err != nil {
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
		return dropReceivers(ctx, tx, id, receiversRoles)
	})
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, holders...)
}

// menuKind: deleted menus. The delete kept the menu's role grants, so a
// restore gives them back: a caller other than the super-admin restores
// (or purges) only a menu whose codes they hold (41006). A menu under a
// deleted menu, or a top-level menu of a deleted module, answers 42032; a
// purge of a menu that still has child rows (deleted ones: live children
// forbid the delete) answers 42016, so that no row is left without its
// parent.
func (s *Service) menuKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysMenu.Query().Where(sysmenu.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysmenu.FieldUpdateTime), ent.Desc(sysmenu.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(m *ent.SysMenu) (int64, string, *string, deleted) {
				code := nonEmpty(m.Permission)
				if code == nil && m.Path != nil {
					code = nonEmpty(*m.Path)
				}
				return m.ID, m.Title, code, deleted{when(m.UpdateTime, m.CreateTime), m.UpdateUserID}
			})
		},
		restore: s.restoreMenu,
		purge:   s.purgeMenu,
	}
}

func (s *Service) deletedMenu(ctx context.Context, who datascope.Caller, id int64) (*ent.SysMenu, error) {
	m, err := s.client.SysMenu.Query().Where(sysmenu.ID(id), sysmenu.IsDelete(true)).Only(ctx)
	if err := missing(err, id); err != nil {
		return nil, err
	}
	if err := s.limits.Codes(ctx, who, authz.SplitCodes(m.Permission)); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *Service) restoreMenu(ctx context.Context, who datascope.Caller, id int64) error {
	m, err := s.deletedMenu(ctx, who, id)
	if err != nil {
		return err
	}
	if m.ParentID != 0 {
		live, err := s.client.SysMenu.Query().Where(sysmenu.ID(m.ParentID), sysmenu.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return parentDeleted("menu")
		}
	}
	if m.ModuleID != nil {
		live, err := s.client.SysModule.Query().Where(sysmodule.ID(*m.ModuleID), sysmodule.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return parentDeleted("module")
		}
	}
	n, err := s.client.SysMenu.Update().Where(sysmenu.ID(id), sysmenu.IsDelete(true)).
		SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
	if err := affected(n, err, id); err != nil {
		return err
	}
	return s.menusChanged(ctx)
}

func (s *Service) purgeMenu(ctx context.Context, who datascope.Caller, id int64) error {
	if _, err := s.deletedMenu(ctx, who, id); err != nil {
		return err
	}
	children, err := s.client.SysMenu.Query().Where(sysmenu.ParentID(id), sysmenu.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if children {
		return errcode.New(errcode.MenuHasChildren)
	}
	err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		n, err := tx.SysMenu.Delete().Where(sysmenu.ID(id), sysmenu.IsDelete(true)).Exec(ctx)
		if err := affected(n, err, id); err != nil {
			return err
		}
		_, err = tx.SysRoleMenu.Delete().Where(sysrolemenu.MenuID(id)).Exec(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return s.menusChanged(ctx)
}

// menusChanged is what the menu area does after a menu change: every
// user's permission set is dropped and a new portal generation starts.
func (s *Service) menusChanged(ctx context.Context) error {
	_, err := s.d.Perms.InvalidateAll(ctx)
	_, gerr := menu.BumpGeneration(ctx, s.d.Store)
	return errors.Join(err, gerr)
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
