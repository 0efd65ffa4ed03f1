package org

import (
	"context"
	"slices"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the organisation area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the organisation area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.orgKind(), "org", []string{"POST:/api/v1/sys/org/add", "PUT:/api/v1/sys/org/{id}"}, "DELETE:/api/v1/sys/org/{id}"),
		recycle.Codes(s.positionKind(), "position", []string{"POST:/api/v1/sys/position/add", "PUT:/api/v1/sys/position/{id}"}, "DELETE:/api/v1/sys/position/{id}"),
	}
}

// orgKind: deleted organisations within the caller's data scope. A deleted
// org is in a restricted caller's scope when its id is (a custom scope), or
// when the caller's scope covers their own org and below and the deleted
// org hangs below that org (the live tree no longer holds it, so the cached
// scope does not). An org under a deleted org answers 42032; a purge of an
// org that still has child rows answers 42004.
func (s *recycleBin) orgKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, who datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysOrg.Query().Where(sysorg.IsDelete(true))
			if !who.Scope.Unrestricted {
				ids, err := s.visibleDeletedOrgs(ctx, who)
				if err != nil {
					return nil, 0, err
				}
				q.Where(sysorg.IDIn(ids...))
			}
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysorg.FieldUpdateTime), ent.Desc(sysorg.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return recycle.PageOf(ctx, s.Client, total, rows, err, func(o *ent.SysOrg) (int64, string, *string, recycle.Deleted) {
				return o.ID, o.Name, recycle.Ptr(o.Code), recycle.Deleted{At: recycle.When(o.UpdateTime, o.CreateTime), By: o.UpdateUserID}
			})
		},
		Restore: s.restoreOrg,
		Purge:   s.purgeOrg,
	}
}

// visibleDeletedOrgs returns the ids of the deleted orgs in a restricted
// caller's scope (see orgKind).
func (s *recycleBin) visibleDeletedOrgs(ctx context.Context, who datascope.Caller) ([]int64, error) {
	all, err := s.Client.SysOrg.Query().Select(sysorg.FieldID, sysorg.FieldParentID, sysorg.FieldIsDelete).All(ctx)
	if err != nil {
		return nil, err
	}
	root, err := s.belowRoot(ctx, who)
	if err != nil {
		return nil, err
	}
	parent := make(map[int64]int64, len(all))
	for _, o := range all {
		parent[o.ID] = o.ParentID
	}
	ids := []int64{}
	for _, o := range all {
		if o.IsDelete && inScope(who, root, parent, o.ID) {
			ids = append(ids, o.ID)
		}
	}
	return ids, nil
}

// inScope reports whether org id is in the caller's scope, or below root
// (the caller's own org when their scope is "own org and below").
func inScope(who datascope.Caller, root *int64, parent map[int64]int64, id int64) bool {
	if who.Scope.HasOrg(id) {
		return true
	}
	if root == nil {
		return false
	}
	seen := map[int64]bool{}
	for cur := id; cur != 0 && !seen[cur]; cur = parent[cur] {
		if cur == *root {
			return true
		}
		seen[cur] = true
	}
	return false
}

// belowRoot returns the caller's org when one of their live, enabled roles
// carries the scope "own org and below" (nil otherwise).
func (s *recycleBin) belowRoot(ctx context.Context, who datascope.Caller) (*int64, error) {
	u, err := s.Client.SysUser.Query().Where(sysuser.ID(who.UserID)).Select(sysuser.FieldOrgID).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || u.OrgID == nil {
		return nil, err
	}
	links, err := s.Client.SysUserRole.Query().Where(sysuserrole.UserID(who.UserID)).All(ctx)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	roles := make([]int64, len(links))
	for i, l := range links {
		roles[i] = l.RoleID
	}
	live, err := s.Client.SysRole.Query().Where(sysrole.IDIn(roles...), sysrole.IsDelete(false), sysrole.Enabled(true)).IDs(ctx)
	if err != nil || len(live) == 0 {
		return nil, err
	}
	below, err := s.Client.SysRoleDataScope.Query().Where(sysroledatascope.RoleIDIn(live...),
		sysroledatascope.IsDelete(false), sysroledatascope.ScopeType(int(datascope.OrgAndBelow))).Exist(ctx)
	if err != nil || !below {
		return nil, err
	}
	return u.OrgID, nil
}

// deletedOrg returns a deleted org in the caller's scope (42020 otherwise:
// an org outside the scope is not revealed).
func (s *recycleBin) deletedOrg(ctx context.Context, who datascope.Caller, id int64) (*ent.SysOrg, error) {
	o, err := s.Client.SysOrg.Query().Where(sysorg.ID(id), sysorg.IsDelete(true)).Only(ctx)
	if err := recycle.Missing(err, id); err != nil {
		return nil, err
	}
	if who.Scope.Unrestricted {
		return o, nil
	}
	ids, err := s.visibleDeletedOrgs(ctx, who)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ids, id) {
		return nil, recycle.NotFound(id)
	}
	return o, nil
}

func (s *recycleBin) restoreOrg(ctx context.Context, who datascope.Caller, id int64) error {
	o, err := s.deletedOrg(ctx, who, id)
	if err != nil {
		return err
	}
	if o.ParentID != 0 {
		live, err := s.Client.SysOrg.Query().Where(sysorg.ID(o.ParentID), sysorg.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return recycle.ParentDeleted("org")
		}
	}
	taken, err := s.Client.SysOrg.Query().Where(sysorg.Code(o.Code), sysorg.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return recycle.Conflict().With("code", o.Code)
	}
	n, err := s.Client.SysOrg.Update().Where(sysorg.ID(id), sysorg.IsDelete(true)).
		SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
	if err := recycle.Affected(n, err, id); err != nil {
		return err
	}
	return s.orgsChanged(ctx)
}

func (s *recycleBin) purgeOrg(ctx context.Context, who datascope.Caller, id int64) error {
	if _, err := s.deletedOrg(ctx, who, id); err != nil {
		return err
	}
	children, err := s.Client.SysOrg.Query().Where(sysorg.ParentID(id), sysorg.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if children {
		return errcode.New(errcode.OrgHasChildren)
	}
	err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysOrg.Delete().Where(sysorg.ID(id), sysorg.IsDelete(true)).Exec(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		return s.D.Forget(ctx, tx, module.ForgetOrg, id, who.UserID)
	})
	if err != nil {
		return err
	}
	return s.orgsChanged(ctx)
}

// orgsChanged is what the org area does after a change of the tree: the
// cached data scopes ("own org and below" follows the tree) are dropped.
func (s *recycleBin) orgsChanged(ctx context.Context) error {
	_, err := datascope.InvalidateAll(ctx, s.D.Store)
	return err
}

// positionKind: deleted positions (no unique key, no parent). A purge
// clears the position of the users that still name it (module user's
// forget).
func (s *recycleBin) positionKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysPosition.Query().Where(sysposition.IsDelete(true)).
				Order(ent.Desc(sysposition.FieldUpdateTime), ent.Desc(sysposition.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(o *ent.SysPosition) (int64, string, *string, recycle.Deleted) {
				return o.ID, o.Name, recycle.NonEmpty(o.Code), recycle.Deleted{At: recycle.When(o.UpdateTime, o.CreateTime), By: o.UpdateUserID}
			})
		},
		Restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			n, err := s.Client.SysPosition.Update().Where(sysposition.ID(id), sysposition.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			return recycle.Affected(n, err, id)
		},
		Purge: func(ctx context.Context, who datascope.Caller, id int64) error {
			return database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
				n, err := tx.SysPosition.Delete().Where(sysposition.ID(id), sysposition.IsDelete(true)).Exec(ctx)
				if err := recycle.Affected(n, err, id); err != nil {
					return err
				}
				return s.D.Forget(ctx, tx, module.ForgetPosition, id, who.UserID)
			})
		},
	}
}
