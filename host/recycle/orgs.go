package recycle

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
	"github.com/adminkernel/kernel/host/request"
)

// orgKind: deleted organisations within the caller's data scope. A deleted
// org is in a restricted caller's scope when its id is (a custom scope), or
// when the caller's scope covers their own org and below and the deleted
// org hangs below that org (the live tree no longer holds it, so the cached
// scope does not). An org under a deleted org answers 42032; a purge of an
// org that still has child rows answers 42004.
func (s *Service) orgKind() kind {
	return kind{
		page: func(ctx context.Context, who datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysOrg.Query().Where(sysorg.IsDelete(true))
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
			return page(ctx, s, total, rows, err, func(o *ent.SysOrg) (int64, string, *string, deleted) {
				return o.ID, o.Name, ptr(o.Code), deleted{when(o.UpdateTime, o.CreateTime), o.UpdateUserID}
			})
		},
		restore: s.restoreOrg,
		purge:   s.purgeOrg,
	}
}

// visibleDeletedOrgs returns the ids of the deleted orgs in a restricted
// caller's scope (see orgKind).
func (s *Service) visibleDeletedOrgs(ctx context.Context, who datascope.Caller) ([]int64, error) {
	all, err := s.client.SysOrg.Query().Select(sysorg.FieldID, sysorg.FieldParentID, sysorg.FieldIsDelete).All(ctx)
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
func (s *Service) belowRoot(ctx context.Context, who datascope.Caller) (*int64, error) {
	u, err := s.client.SysUser.Query().Where(sysuser.ID(who.UserID)).Select(sysuser.FieldOrgID).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || u.OrgID == nil {
		return nil, err
	}
	links, err := s.client.SysUserRole.Query().Where(sysuserrole.UserID(who.UserID)).All(ctx)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	roles := make([]int64, len(links))
	for i, l := range links {
		roles[i] = l.RoleID
	}
	live, err := s.client.SysRole.Query().Where(sysrole.IDIn(roles...), sysrole.IsDelete(false), sysrole.Enabled(true)).IDs(ctx)
	if err != nil || len(live) == 0 {
		return nil, err
	}
	below, err := s.client.SysRoleDataScope.Query().Where(sysroledatascope.RoleIDIn(live...),
		sysroledatascope.IsDelete(false), sysroledatascope.ScopeType(int(datascope.OrgAndBelow))).Exist(ctx)
	if err != nil || !below {
		return nil, err
	}
	return u.OrgID, nil
}

// deletedOrg returns a deleted org in the caller's scope (42020 otherwise:
// an org outside the scope is not revealed).
func (s *Service) deletedOrg(ctx context.Context, who datascope.Caller, id int64) (*ent.SysOrg, error) {
	o, err := s.client.SysOrg.Query().Where(sysorg.ID(id), sysorg.IsDelete(true)).Only(ctx)
	if err := missing(err, id); err != nil {
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
		return nil, notFound(id)
	}
	return o, nil
}

func (s *Service) restoreOrg(ctx context.Context, who datascope.Caller, id int64) error {
	o, err := s.deletedOrg(ctx, who, id)
	if err != nil {
		return err
	}
	if o.ParentID != 0 {
		live, err := s.client.SysOrg.Query().Where(sysorg.ID(o.ParentID), sysorg.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			return parentDeleted("org")
		}
	}
	taken, err := s.client.SysOrg.Query().Where(sysorg.Code(o.Code), sysorg.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return conflict().With("code", o.Code)
	}
	n, err := s.client.SysOrg.Update().Where(sysorg.ID(id), sysorg.IsDelete(true)).
		SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
	if err := affected(n, err, id); err != nil {
		return err
	}
	return s.orgsChanged(ctx)
}

func (s *Service) purgeOrg(ctx context.Context, who datascope.Caller, id int64) error {
	if _, err := s.deletedOrg(ctx, who, id); err != nil {
		return err
	}
	children, err := s.client.SysOrg.Query().Where(sysorg.ParentID(id), sysorg.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if children {
		return errcode.New(errcode.OrgHasChildren)
	}
	err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		n, err := tx.SysOrg.Delete().Where(sysorg.ID(id), sysorg.IsDelete(true)).Exec(ctx)
		if err := affected(n, err, id); err != nil {
			return err
		}
		if err := tx.SysUser.Update().Where(sysuser.OrgID(id)).ClearOrgID().Exec(ctx); err != nil {
			return err
		}
		return dropCustomOrg(ctx, tx, id)
	})
	if err != nil {
		return err
	}
	return s.orgsChanged(ctx)
}

// dropCustomOrg removes org id from every custom data scope naming it
// (live and deleted rows).
func dropCustomOrg(ctx context.Context, tx *ent.Tx, id int64) error {
	rows, err := tx.SysRoleDataScope.Query().Where(sysroledatascope.CustomOrgIdsNotNil()).All(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		ids, _ := datascope.ParseOrgIDs(*r.CustomOrgIds)
		if !slices.Contains(ids, id) {
			continue
		}
		ids = slices.DeleteFunc(ids, func(v int64) bool { return v == id })
		if err := tx.SysRoleDataScope.UpdateOneID(r.ID).SetCustomOrgIds(datascope.FormatOrgIDs(ids)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// orgsChanged is what the org area does after a change of the tree: the
// cached data scopes ("own org and below" follows the tree) are dropped.
func (s *Service) orgsChanged(ctx context.Context) error {
	_, err := datascope.InvalidateAll(ctx, s.d.Store)
	return err
}

// positionKind: deleted positions (no unique key, no parent). A purge
// clears the position of the users that still name it.
func (s *Service) positionKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysPosition.Query().Where(sysposition.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysposition.FieldUpdateTime), ent.Desc(sysposition.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(o *ent.SysPosition) (int64, string, *string, deleted) {
				return o.ID, o.Name, nonEmpty(o.Code), deleted{when(o.UpdateTime, o.CreateTime), o.UpdateUserID}
			})
		},
		restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			n, err := s.client.SysPosition.Update().Where(sysposition.ID(id), sysposition.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			return affected(n, err, id)
		},
		purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			return database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
				n, err := tx.SysPosition.Delete().Where(sysposition.ID(id), sysposition.IsDelete(true)).Exec(ctx)
				if err := affected(n, err, id); err != nil {
					return err
				}
				return tx.SysUser.Update().Where(sysuser.PositionID(id)).ClearPositionID().Exec(ctx)
			})
		},
	}
}
