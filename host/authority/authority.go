// Package authority enforces the authority boundaries (docs/design/security.md,
// "Authority boundaries"): an administrator other than the super-admin may
// act on a user, grant a role or write a permission code only within what
// they hold themselves.
//
// "Within" has two halves, both required:
//
//   - codes: every permission code concerned is one of the caller's own
//     codes (authz, the cached set);
//   - scope: the data scope concerned is within the caller's own, in the
//     sense of datascope.Scope.Covers: each scope is resolved to the set of
//     org ids it covers (all = every org; own org, own org and below and
//     custom = those org ids; self = no org beyond the person, which is
//     within anything) and the one set must be a subset of the other.
//
// Every refusal is errcode.AuthorityExceeded (41006). The super-admin
// passes every check. The user, role, menu and session areas call this
// package; none of them repeats the rule.
package authority

import (
	"context"
	"slices"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
)

// Checker answers authority checks.
type Checker struct {
	client *ent.Client
	perms  *authz.Resolver
	scopes *datascope.Cache
}

// New returns a checker over the kernel's database, permission sets and
// data scopes.
func New(client *ent.Client, perms *authz.Resolver, scopes *datascope.Cache) *Checker {
	return &Checker{client: client, perms: perms, scopes: scopes}
}

func exceeded() *errcode.Error { return errcode.New(errcode.AuthorityExceeded) }

// codesWithin reports the first of codes the caller does not hold ("" when
// all are held).
func (c *Checker) codesWithin(ctx context.Context, who datascope.Caller, codes []string) (string, error) {
	if len(codes) == 0 {
		return "", nil
	}
	own, err := c.perms.Codes(ctx, who.UserID)
	if err != nil {
		return "", err
	}
	for _, code := range codes {
		if _, ok := slices.BinarySearch(own, code); !ok {
			return code, nil
		}
	}
	return "", nil
}

// Codes refuses (41006, arg code) unless the caller holds every code. Codes
// are normalised (authz.NormalizeCode) by the caller.
func (c *Checker) Codes(ctx context.Context, who datascope.Caller, codes []string) error {
	if who.SuperAdmin {
		return nil
	}
	missing, err := c.codesWithin(ctx, who, codes)
	if err != nil {
		return err
	}
	if missing != "" {
		return exceeded().With("code", missing)
	}
	return nil
}

// Holding is what a user holds, or would hold after a change.
type Holding struct {
	SuperAdmin bool
	Codes      []string
	Scope      datascope.Scope
}

// Within refuses (41006, arg id = the user) unless h is within the caller's
// codes and data scope.
func (c *Checker) Within(ctx context.Context, who datascope.Caller, userID int64, h Holding) error {
	if who.SuperAdmin {
		return nil
	}
	if h.SuperAdmin || !who.Scope.Covers(h.Scope) {
		return exceeded().With("id", userID)
	}
	missing, err := c.codesWithin(ctx, who, h.Codes)
	if err != nil {
		return err
	}
	if missing != "" {
		return exceeded().With("id", userID)
	}
	return nil
}

// Users refuses (41006) when one of the users holds a code the caller does
// not, or has a data scope not within the caller's: the rule for every
// action on a user (update, enable, delete, reset password, assign roles,
// end sessions). Unknown or deleted users hold nothing.
func (c *Checker) Users(ctx context.Context, who datascope.Caller, userIDs ...int64) error {
	if who.SuperAdmin {
		return nil
	}
	for _, id := range userIDs {
		su, err := c.client.SysUser.Query().
			Where(sysuser.ID(id), sysuser.IsDelete(false), sysuser.IsSuperAdmin(true)).Exist(ctx)
		if err != nil {
			return err
		}
		codes, err := c.perms.Codes(ctx, id)
		if err != nil {
			return err
		}
		scope, err := c.scopes.Scope(ctx, id)
		if err != nil {
			return err
		}
		if err := c.Within(ctx, who, id, Holding{SuperAdmin: su, Codes: codes, Scope: scope}); err != nil {
			return err
		}
	}
	return nil
}

// WouldHold refuses (41006) when a user placed in orgID and holding
// exactly roleIDs would hold a code or a data scope beyond the caller's:
// the check of a role assignment or an org move, before it is written.
func (c *Checker) WouldHold(ctx context.Context, who datascope.Caller, userID int64, orgID *int64, roleIDs []int64) error {
	if who.SuperAdmin {
		return nil
	}
	h, err := c.holding(ctx, userID, orgID, roleIDs)
	if err != nil {
		return err
	}
	return c.Within(ctx, who, userID, h)
}

func (c *Checker) holding(ctx context.Context, userID int64, orgID *int64, roleIDs []int64) (Holding, error) {
	live, err := liveRoles(ctx, c.client, roleIDs)
	if err != nil {
		return Holding{}, err
	}
	codes, err := authz.RoleCodes(ctx, c.client, live)
	if err != nil {
		return Holding{}, err
	}
	scope, err := datascope.ResolveFor(ctx, c.client, userID, orgID, roleIDs)
	if err != nil {
		return Holding{}, err
	}
	return Holding{Codes: codes, Scope: scope}, nil
}

// RoleScope refuses (41006) when a role carrying data scope row would give
// one of its holders, or anybody in no org, a scope beyond the caller's.
// Own org and own org and below are relative to the holder, so they are
// resolved for each current holder; later holders are checked when they
// are assigned (WouldHold).
func (c *Checker) RoleScope(ctx context.Context, who datascope.Caller, roleID int64, row datascope.Row) error {
	if who.SuperAdmin {
		return nil
	}
	s, err := datascope.Of(ctx, c.client, 0, nil, []datascope.Row{row})
	if err != nil {
		return err
	}
	if !who.Scope.Covers(s) {
		return exceeded().With("id", roleID)
	}
	if row.Type != datascope.Org && row.Type != datascope.OrgAndBelow {
		return nil
	}
	users, err := holderRows(ctx, c.client, roleID)
	if err != nil {
		return err
	}
	for _, u := range users {
		s, err := datascope.Of(ctx, c.client, u.ID, u.OrgID, []datascope.Row{row})
		if err != nil {
			return err
		}
		if !who.Scope.Covers(s) {
			return exceeded().With("id", roleID)
		}
	}
	return nil
}

// Role is the rule of every write on a role (update, delete, menus, data
// scope, holders): a caller may not change a role they hold themselves
// (42029), nor a role whose codes or data scope exceed their own (41006:
// they could otherwise strip, disable or re-grant a more powerful role).
func (c *Checker) Role(ctx context.Context, who datascope.Caller, roleID int64) error {
	if who.SuperAdmin {
		return nil
	}
	held, err := c.client.SysUserRole.Query().
		Where(sysuserrole.UserID(who.UserID), sysuserrole.RoleID(roleID)).Exist(ctx)
	if err != nil {
		return err
	}
	if held {
		return errcode.New(errcode.CannotOperateSelf).With("id", roleID)
	}
	codes, err := authz.RoleCodes(ctx, c.client, []int64{roleID})
	if err != nil {
		return err
	}
	if missing, err := c.codesWithin(ctx, who, codes); err != nil {
		return err
	} else if missing != "" {
		return exceeded().With("id", roleID)
	}
	row, err := c.client.SysRoleDataScope.Query().
		Where(sysroledatascope.RoleID(roleID), sysroledatascope.IsDelete(false)).First(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.RoleScope(ctx, who, roleID, datascope.RowOf(row))
}

// MenuGrant refuses (41006, arg code) when the menus menuIDs carry a code
// the caller does not hold, disabled menus included (enabling a menu must
// not hand out a code nobody checked).
func (c *Checker) MenuGrant(ctx context.Context, who datascope.Caller, menuIDs []int64) error {
	if who.SuperAdmin {
		return nil
	}
	codes, err := authz.MenuCodes(ctx, c.client, menuIDs, false)
	if err != nil {
		return err
	}
	return c.Codes(ctx, who, codes)
}

func liveRoles(ctx context.Context, client *ent.Client, roleIDs []int64) ([]int64, error) {
	if len(roleIDs) == 0 {
		return nil, nil
	}
	return client.SysRole.Query().Where(sysrole.IDIn(roleIDs...), sysrole.Enabled(true), sysrole.IsDelete(false)).IDs(ctx)
}

func holderRows(ctx context.Context, client *ent.Client, roleID int64) ([]*ent.SysUser, error) {
	links, err := client.SysUserRole.Query().Where(sysuserrole.RoleID(roleID)).All(ctx)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	ids := make([]int64, len(links))
	for i, l := range links {
		ids[i] = l.UserID
	}
	return client.SysUser.Query().Where(sysuser.IDIn(ids...), sysuser.IsDelete(false)).
		Select(sysuser.FieldID, sysuser.FieldOrgID).All(ctx)
}
