package menu

import (
	"context"
	"errors"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the menu area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the menu area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.menuKind(), "menu", []string{"POST:/api/v1/sys/menu/add", "PUT:/api/v1/sys/menu/{id}"}, "DELETE:/api/v1/sys/menu/{id}"),
		recycle.Codes(s.moduleKind(), "module", []string{"POST:/api/v1/sys/module/add", "PUT:/api/v1/sys/module/{id}"}, "DELETE:/api/v1/sys/module/{id}"),
	}
}

// menuKind: deleted menus. The delete kept the menu's role grants, so a
// restore gives them back: a caller other than the super-admin restores
// (or purges) only a menu whose codes they hold (41006). A menu under a
// deleted menu, or a top-level menu of a deleted module, answers 42032; a
// purge of a menu that still has child rows (deleted ones: live children
// forbid the delete) answers 42016, so that no row is left without its
// parent.
func (s *recycleBin) menuKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysMenu.Query().Where(sysmenu.IsDelete(true)).
				Order(ent.Desc(sysmenu.FieldUpdateTime), ent.Desc(sysmenu.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(m *ent.SysMenu) (int64, string, *string, recycle.Deleted) {
				code := recycle.NonEmpty(m.Permission)
				if code == nil && m.Path != nil {
					code = recycle.NonEmpty(*m.Path)
				}
				return m.ID, m.Title, code, recycle.Deleted{At: recycle.When(m.UpdateTime, m.CreateTime), By: m.UpdateUserID}
			})
		},
		Restore: s.restoreMenu,
		Purge:   s.purgeMenu,
	}
}

func (s *recycleBin) deletedMenu(ctx context.Context, who datascope.Caller, id int64) (*ent.SysMenu, error) {
	m, err := s.Client.SysMenu.Query().Where(sysmenu.ID(id), sysmenu.IsDelete(true)).Only(ctx)
	if err := recycle.Missing(err, id); err != nil {
		return nil, err
	}
	if err := s.Limits.Codes(ctx, who, authz.SplitCodes(m.Permission)); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *recycleBin) restoreMenu(ctx context.Context, who datascope.Caller, id int64) error {
	m, err := s.deletedMenu(ctx, who, id)
	if err != nil {
		return err
	}
	if m.ParentID != 0 {
		live, err := s.Client.SysMenu.Query().Where(sysmenu.ID(m.ParentID), sysmenu.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return recycle.ParentDeleted("menu")
		}
	}
	if m.ModuleID != nil {
		live, err := s.Client.SysModule.Query().Where(sysmodule.ID(*m.ModuleID), sysmodule.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return recycle.ParentDeleted("module")
		}
	}
	n, err := s.Client.SysMenu.Update().Where(sysmenu.ID(id), sysmenu.IsDelete(true)).
		SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
	if err := recycle.Affected(n, err, id); err != nil {
		return err
	}
	return s.menusChanged(ctx)
}

func (s *recycleBin) purgeMenu(ctx context.Context, who datascope.Caller, id int64) error {
	if _, err := s.deletedMenu(ctx, who, id); err != nil {
		return err
	}
	children, err := s.Client.SysMenu.Query().Where(sysmenu.ParentID(id), sysmenu.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if children {
		return errcode.New(errcode.MenuHasChildren)
	}
	err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysMenu.Delete().Where(sysmenu.ID(id), sysmenu.IsDelete(true)).Exec(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		return s.D.Forget(ctx, tx, module.ForgetMenu, id, who.UserID)
	})
	if err != nil {
		return err
	}
	return s.menusChanged(ctx)
}

// menusChanged is what the menu area does after a menu change: every
// user's permission set is dropped and a new portal generation starts.
func (s *recycleBin) menusChanged(ctx context.Context) error {
	_, err := s.D.Perms.InvalidateAll(ctx)
	_, gerr := BumpGeneration(ctx, s.D.Store)
	return errors.Join(err, gerr)
}

// moduleKind: deleted modules. The built-in module is never purged
// (42013); a module that menu rows still name (deleted menus: live ones
// forbid the delete) is not purged either (42023); a purge clears the
// users' default module when it was this one.
func (s *recycleBin) moduleKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysModule.Query().Where(sysmodule.IsDelete(true)).
				Order(ent.Desc(sysmodule.FieldUpdateTime), ent.Desc(sysmodule.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(m *ent.SysModule) (int64, string, *string, recycle.Deleted) {
				return m.ID, m.Title, recycle.Ptr(m.Code), recycle.Deleted{At: recycle.When(m.UpdateTime, m.CreateTime), By: m.UpdateUserID}
			})
		},
		Restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			m, err := s.Client.SysModule.Query().Where(sysmodule.ID(id), sysmodule.IsDelete(true)).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			taken, err := s.Client.SysModule.Query().Where(sysmodule.Code(m.Code), sysmodule.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return recycle.Conflict().With("code", m.Code)
			}
			n, err := s.Client.SysModule.Update().Where(sysmodule.ID(id), sysmodule.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			if err := recycle.Affected(n, err, id); err != nil {
				return err
			}
			_, err = BumpGeneration(ctx, s.D.Store)
			return err
		},
		Purge: func(ctx context.Context, who datascope.Caller, id int64) error {
			if id == SystemModuleID {
				return errcode.New(errcode.ModuleProtected)
			}
			attached, err := s.Client.SysMenu.Query().Where(sysmenu.ModuleID(id)).Exist(ctx)
			if err != nil {
				return err
			}
			if attached {
				return errcode.New(errcode.ModuleHasMenus)
			}
			err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
				n, err := tx.SysModule.Delete().Where(sysmodule.ID(id), sysmodule.IsDelete(true)).Exec(ctx)
				if err := recycle.Affected(n, err, id); err != nil {
					return err
				}
				return s.D.Forget(ctx, tx, module.ForgetMenuModule, id, who.UserID)
			})
			if err != nil {
				return err
			}
			_, err = BumpGeneration(ctx, s.D.Store)
			return err
		},
	}
}
