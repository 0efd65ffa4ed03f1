package role

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

const (
	maxName   = 64
	maxCode   = 64
	maxRemark = 512
)

// Service implements the role administration.
type Service struct {
	d      *module.Deps
	scopes *datascope.Cache
	// limits enforces the authority boundaries (41006, 42029).
	limits *authority.Checker
}

// NewService returns the service.
func NewService(d *module.Deps) *Service {
	scopes := d.Scopes()
	return &Service{d: d, scopes: scopes, limits: authority.New(d.Client, d.Perms, scopes)}
}

// writable loads a live role the caller may change (42002, 42029 for a
// role the caller holds, 41006 for one exceeding the caller's authority).
func (s *Service) writable(ctx context.Context, who datascope.Caller, id int64) (*ent.SysRole, error) {
	r, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.limits.Role(ctx, who, id); err != nil {
		return nil, err
	}
	return r, nil
}

// Caller resolves the data scope of an authenticated user.
func (s *Service) Caller(ctx context.Context, userID int64, superAdmin bool) (datascope.Caller, error) {
	return s.scopes.Caller(ctx, userID, superAdmin)
}

// holders returns the ids of the users linked to roles.
func holders(ctx context.Context, c *ent.Client, roleIDs ...int64) ([]int64, error) {
	links, err := c.SysUserRole.Query().Where(sysuserrole.RoleIDIn(roleIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(links))
	for _, l := range links {
		if !slices.Contains(out, l.UserID) {
			out = append(out, l.UserID)
		}
	}
	return out, nil
}

// live loads a live role (42002 when missing).
func (s *Service) live(ctx context.Context, id int64) (*ent.SysRole, error) {
	r, err := s.d.Client.SysRole.Query().Where(sysrole.ID(id), sysrole.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.RoleNotFound)
	}
	return r, err
}

// ---- roles ----

// sortColumns maps a SortField (entity property name, case-insensitive,
// underscores ignored) to a column.
var sortColumns = func() map[string]string {
	m := make(map[string]string, len(sysrole.Columns))
	for _, c := range sysrole.Columns {
		m[strings.ReplaceAll(c, "_", "")] = c
	}
	return m
}()

// Page lists live roles, by sort then id unless SortField names a column.
func (s *Service) Page(ctx context.Context, name string, p request.Page) ([]Role, int, error) {
	q := s.d.Client.SysRole.Query().Where(sysrole.IsDelete(false))
	if v := strings.TrimSpace(name); v != "" {
		q.Where(sysrole.NameContainsFold(v))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	q.Order(request.Order(p, sortColumns, sysrole.FieldID, sysrole.OrderOption(ent.Asc(sysrole.FieldSort, sysrole.FieldID)))...)
	rows, err := q.Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Role, len(rows))
	for i, r := range rows {
		out[i] = toRole(r)
	}
	return out, total, nil
}

// Get returns one live role.
func (s *Service) Get(ctx context.Context, id int64) (*Role, error) {
	r, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	out := toRole(r)
	return &out, nil
}

// input is a validated Input.
type input struct {
	name, code    string
	sort          int
	enabled       bool
	remark        *string
	isDelegatable bool
}

func check(in Input) (input, error) {
	v := input{
		name: strings.TrimSpace(in.Name), code: strings.TrimSpace(in.Code),
		enabled: in.Enabled == nil || *in.Enabled, isDelegatable: in.IsDelegatable != nil && *in.IsDelegatable,
	}
	if v.name == "" || utf8.RuneCountInString(v.name) > maxName || strings.ContainsFunc(v.name, unicode.IsControl) {
		return v, request.Invalid("name")
	}
	if v.code == "" || utf8.RuneCountInString(v.code) > maxCode ||
		strings.ContainsFunc(v.code, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return v, request.Invalid("code")
	}
	if in.Sort < math.MinInt32 || in.Sort > math.MaxInt32 {
		return v, request.Invalid("sort")
	}
	v.sort = int(in.Sort)
	if in.Remark != nil {
		if r := strings.TrimSpace(*in.Remark); r != "" {
			if utf8.RuneCountInString(r) > maxRemark {
				return v, request.Invalid("remark")
			}
			v.remark = &r
		}
	}
	return v, nil
}

// codeTaken reports a live role other than except holding code.
func (s *Service) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return s.d.Client.SysRole.Query().
		Where(sysrole.Code(code), sysrole.IsDelete(false), sysrole.IDNEQ(except)).Exist(ctx)
}

// Add creates a role and returns its id.
func (s *Service) Add(ctx context.Context, who datascope.Caller, in Input) (int64, error) {
	v, err := check(in)
	if err != nil {
		return 0, err
	}
	if taken, err := s.codeTaken(ctx, v.code, 0); err != nil {
		return 0, err
	} else if taken {
		return 0, errcode.New(errcode.RoleCodeExists)
	}
	r, err := s.d.Client.SysRole.Create().
		SetName(v.name).SetCode(v.code).SetSort(v.sort).SetEnabled(v.enabled).
		SetNillableRemark(v.remark).SetIsDelegatable(v.isDelegatable).SetCreateUserID(who.UserID).
		Save(ctx)
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.RoleCodeExists).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// Update replaces a role's fields; its users' permissions are recomputed
// at their next request.
func (s *Service) Update(ctx context.Context, who datascope.Caller, id int64, in Input) error {
	v, err := check(in)
	if err != nil {
		return err
	}
	if _, err := s.writable(ctx, who, id); err != nil {
		return err
	}
	if taken, err := s.codeTaken(ctx, v.code, id); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.RoleCodeExists)
	}
	upd := s.d.Client.SysRole.UpdateOneID(id).Where(sysrole.IsDelete(false)).
		SetName(v.name).SetCode(v.code).SetSort(v.sort).SetEnabled(v.enabled).
		SetIsDelegatable(v.isDelegatable).SetUpdateUserID(who.UserID)
	if v.remark != nil {
		upd.SetRemark(*v.remark)
	} else {
		upd.ClearRemark()
	}
	err = upd.Exec(ctx)
	switch {
	case ent.IsNotFound(err):
		return errcode.New(errcode.RoleNotFound)
	case ent.IsConstraintError(err):
		return errcode.New(errcode.RoleCodeExists).Wrap(err)
	case err != nil:
		return err
	}
	users, err := holders(ctx, s.d.Client, id)
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, users...)
}

// Delete soft-deletes a role.
func (s *Service) Delete(ctx context.Context, who datascope.Caller, id int64) error {
	if _, err := s.writable(ctx, who, id); err != nil {
		return err
	}
	return s.deleteRoles(ctx, who, []int64{id})
}

// BatchDelete soft-deletes roles in one transaction; ids naming no live role
// are skipped (48002 for an id that is not positive).
func (s *Service) BatchDelete(ctx context.Context, who datascope.Caller, in IDsInput) error {
	ids, err := distinct(in.IDs, "ids")
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	live, err := s.d.Client.SysRole.Query().Where(sysrole.IDIn(ids...), sysrole.IsDelete(false)).IDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range live {
		if err := s.limits.Role(ctx, who, id); err != nil {
			return err
		}
	}
	return s.deleteRoles(ctx, who, live)
}

// deleteRoles soft-deletes roles (is_delete and delete_key = id, freeing the
// code) and their data scopes, and removes their menu and user links, in
// one transaction; the former holders' cached sets are dropped.
func (s *Service) deleteRoles(ctx context.Context, who datascope.Caller, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var users []int64
	err := database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		for _, id := range ids {
			n, err := tx.SysRole.Update().Where(sysrole.ID(id), sysrole.IsDelete(false)).
				SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(who.UserID).Save(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				return errcode.New(errcode.RoleNotFound).With("id", id)
			}
		}
		var err error
		if users, err = holders(ctx, tx.Client(), ids...); err != nil {
			return err
		}
		if _, err := tx.SysRoleMenu.Delete().Where(sysrolemenu.RoleIDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.SysUserRole.Delete().Where(sysuserrole.RoleIDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
		scopes, err := tx.SysRoleDataScope.Query().
			Where(sysroledatascope.RoleIDIn(ids...), sysroledatascope.IsDelete(false)).IDs(ctx)
		if err != nil {
			return err
		}
		for _, sid := range scopes {
			if err := tx.SysRoleDataScope.UpdateOneID(sid).SetIsDelete(true).SetDeleteKey(sid).SetUpdateUserID(who.UserID).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, users...)
}

// ---- menus ----

// Menus returns the ids of the live menus granted to a role, sorted.
func (s *Service) Menus(ctx context.Context, id int64) ([]int64, error) {
	if _, err := s.live(ctx, id); err != nil {
		return nil, err
	}
	links, err := s.d.Client.SysRoleMenu.Query().Where(sysrolemenu.RoleID(id)).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(links) == 0 {
		return []int64{}, nil
	}
	ids := make([]int64, len(links))
	for i, l := range links {
		ids[i] = l.MenuID
	}
	out, err := s.d.Client.SysMenu.Query().Where(sysmenu.IDIn(ids...), sysmenu.IsDelete(false)).IDs(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// distinct validates and deduplicates ids (48002 naming field on a
// non-positive id).
func distinct(in []request.Int64, field string) ([]int64, error) {
	out := make([]int64, 0, len(in))
	for _, v := range in {
		if v <= 0 {
			return nil, request.Invalid(field)
		}
		if !slices.Contains(out, int64(v)) {
			out = append(out, int64(v))
		}
	}
	slices.Sort(out)
	return out, nil
}

// SetMenus replaces a role's menu grants (42015 for an unknown menu; 41006
// when the menus carry a code the caller does not hold).
func (s *Service) SetMenus(ctx context.Context, who datascope.Caller, in MenusInput) error {
	if in.RoleID <= 0 {
		return request.Invalid("roleId")
	}
	menuIDs, err := distinct(in.MenuIDs, "menuIds")
	if err != nil {
		return err
	}
	roleID := int64(in.RoleID)
	if _, err := s.writable(ctx, who, roleID); err != nil {
		return err
	}
	if len(menuIDs) > 0 {
		found, err := s.d.Client.SysMenu.Query().Where(sysmenu.IDIn(menuIDs...), sysmenu.IsDelete(false)).IDs(ctx)
		if err != nil {
			return err
		}
		for _, id := range menuIDs {
			if !slices.Contains(found, id) {
				return errcode.New(errcode.MenuNotFound).With("id", id)
			}
		}
	}
	if err := s.limits.MenuGrant(ctx, who, menuIDs); err != nil {
		return err
	}
	err = database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		if _, err := tx.SysRoleMenu.Delete().Where(sysrolemenu.RoleID(roleID)).Exec(ctx); err != nil {
			return err
		}
		if len(menuIDs) == 0 {
			return nil
		}
		return tx.SysRoleMenu.MapCreateBulk(menuIDs, func(c *ent.SysRoleMenuCreate, i int) {
			c.SetRoleID(roleID).SetMenuID(menuIDs[i]).SetCreateUserID(who.UserID)
		}).Exec(ctx)
	})
	if err != nil {
		return err
	}
	users, err := holders(ctx, s.d.Client, roleID)
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, users...)
}

// ---- data scope ----

// DataScope returns a role's live data scope, or nil.
func (s *Service) DataScope(ctx context.Context, id int64) (*DataScope, error) {
	if _, err := s.live(ctx, id); err != nil {
		return nil, err
	}
	row, err := s.d.Client.SysRoleDataScope.Query().
		Where(sysroledatascope.RoleID(id), sysroledatascope.IsDelete(false)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return toDataScope(row), nil
}

// SetDataScope sets a role's data scope. Type 5 (custom) needs at least one
// existing org (42003 names an unknown one); other types store no orgs. The
// scope may not be wider than the caller's own (41006).
func (s *Service) SetDataScope(ctx context.Context, who datascope.Caller, in DataScopeInput) error {
	if in.RoleID <= 0 {
		return request.Invalid("roleId")
	}
	if in.ScopeType < request.Int64(datascope.All) || in.ScopeType > request.Int64(datascope.Custom) {
		return request.Invalid("scopeType")
	}
	typ := datascope.Type(in.ScopeType)
	roleID := int64(in.RoleID)
	var custom *string
	var customIDs []int64
	if typ == datascope.Custom {
		orgIDs, err := distinct(in.CustomOrgIDs, "customOrgIds")
		if err != nil {
			return err
		}
		if len(orgIDs) == 0 {
			return request.Invalid("customOrgIds")
		}
		found, err := s.d.Client.SysOrg.Query().Where(sysorg.IDIn(orgIDs...), sysorg.IsDelete(false)).IDs(ctx)
		if err != nil {
			return err
		}
		for _, id := range orgIDs {
			if !slices.Contains(found, id) {
				return errcode.New(errcode.OrgNotFound).With("id", id)
			}
		}
		v := datascope.FormatOrgIDs(orgIDs)
		custom, customIDs = &v, orgIDs
	}
	if _, err := s.writable(ctx, who, roleID); err != nil {
		return err
	}
	if err := s.limits.RoleScope(ctx, who, roleID, datascope.Row{Type: typ, Custom: customIDs}); err != nil {
		return err
	}
	write := func() error {
		return database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
			cur, err := tx.SysRoleDataScope.Query().
				Where(sysroledatascope.RoleID(roleID), sysroledatascope.IsDelete(false)).First(ctx)
			if ent.IsNotFound(err) {
				return tx.SysRoleDataScope.Create().SetRoleID(roleID).SetScopeType(int(typ)).
					SetNillableCustomOrgIds(custom).SetCreateUserID(who.UserID).Exec(ctx)
			}
			if err != nil {
				return err
			}
			upd := tx.SysRoleDataScope.UpdateOneID(cur.ID).SetScopeType(int(typ)).SetUpdateUserID(who.UserID)
			if custom != nil {
				upd.SetCustomOrgIds(*custom)
			} else {
				upd.ClearCustomOrgIds()
			}
			return upd.Exec(ctx)
		})
	}
	err := write()
	if ent.IsConstraintError(err) {
		// A concurrent request created the row first: update it.
		err = write()
	}
	if err != nil {
		return err
	}
	users, err := holders(ctx, s.d.Client, roleID)
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, users...)
}

// ---- users ----

// visibleHolders returns the live holders of a role within the caller's
// scope, sorted.
func (s *Service) visibleHolders(ctx context.Context, c *ent.Client, who datascope.Caller, roleID int64) ([]int64, error) {
	ids, err := holders(ctx, c, roleID)
	if err != nil || len(ids) == 0 {
		return []int64{}, err
	}
	out, err := c.SysUser.Query().Where(sysuser.IDIn(ids...), sysuser.IsDelete(false)).
		Where(who.Scope.Users()...).IDs(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// Users returns the ids of the role's holders the caller may see.
func (s *Service) Users(ctx context.Context, who datascope.Caller, id int64) ([]int64, error) {
	if _, err := s.live(ctx, id); err != nil {
		return nil, err
	}
	return s.visibleHolders(ctx, s.d.Client, who, id)
}

// SetUsers replaces the role's holders within the caller's data scope:
// holders the caller cannot see keep the role; naming one gives 41005, and
// an unknown user 42001. A caller other than the super-admin may add
// holders only to an enabled, delegatable role (41004), may not change a
// role they hold (42029), and every holder added or removed must be within
// the caller's authority, the added ones also with the role (41006).
func (s *Service) SetUsers(ctx context.Context, who datascope.Caller, in UsersInput) error {
	if in.RoleID <= 0 {
		return request.Invalid("roleId")
	}
	userIDs, err := distinct(in.UserIDs, "userIds")
	if err != nil {
		return err
	}
	roleID := int64(in.RoleID)
	role, err := s.writable(ctx, who, roleID)
	if err != nil {
		return err
	}
	if len(userIDs) > 0 {
		rows, err := s.d.Client.SysUser.Query().Where(sysuser.IDIn(userIDs...), sysuser.IsDelete(false)).
			Select(sysuser.FieldID, sysuser.FieldOrgID).All(ctx)
		if err != nil {
			return err
		}
		byID := make(map[int64]*ent.SysUser, len(rows))
		for _, u := range rows {
			byID[u.ID] = u
		}
		for _, id := range userIDs {
			u, ok := byID[id]
			if !ok {
				return errcode.New(errcode.UserNotFound).With("id", id)
			}
			if !who.Scope.ContainsUser(u.ID, u.OrgID) {
				return errcode.New(errcode.UserOutOfDataScope).With("id", id)
			}
		}
	}
	if !who.SuperAdmin {
		if err := s.holderChangeWithin(ctx, who, roleID, userIDs); err != nil {
			return err
		}
	}
	var added, removed []int64
	err = database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		current, err := s.visibleHolders(ctx, tx.Client(), who, roleID)
		if err != nil {
			return err
		}
		all, err := holders(ctx, tx.Client(), roleID)
		if err != nil {
			return err
		}
		for _, id := range userIDs {
			if !slices.Contains(all, id) {
				added = append(added, id)
			}
		}
		for _, id := range current {
			if !slices.Contains(userIDs, id) {
				removed = append(removed, id)
			}
		}
		if len(added) > 0 && !who.SuperAdmin && (!role.Enabled || !role.IsDelegatable) {
			return errcode.New(errcode.RoleNotDelegatable).With("id", roleID)
		}

		if len(removed) > 0 {
			if _, err := tx.SysUserRole.Delete().Where(sysuserrole.RoleID(roleID), sysuserrole.UserIDIn(removed...)).Exec(ctx); err != nil {
				return err
			}
		}
		if len(added) == 0 {
			return nil
		}
		return tx.SysUserRole.MapCreateBulk(added, func(c *ent.SysUserRoleCreate, i int) {
			c.SetUserID(added[i]).SetRoleID(roleID).SetCreateUserID(who.UserID)
		}).Exec(ctx)
	})
	if err != nil {
		return err
	}
	return s.d.InvalidateAccess(ctx, append(added, removed...)...)
}

// holderChangeWithin checks, before the write, that every holder the new
// list adds or removes is within the caller's authority and that each
// added one, given the role too, stays within it (41006).
func (s *Service) holderChangeWithin(ctx context.Context, who datascope.Caller, roleID int64, userIDs []int64) error {
	c := s.d.Client
	current, err := s.visibleHolders(ctx, c, who, roleID)
	if err != nil {
		return err
	}
	all, err := holders(ctx, c, roleID)
	if err != nil {
		return err
	}
	var touched, added []int64
	for _, id := range userIDs {
		if !slices.Contains(all, id) {
			touched = append(touched, id)
			added = append(added, id)
		}
	}
	for _, id := range current {
		if !slices.Contains(userIDs, id) {
			touched = append(touched, id)
		}
	}
	if err := s.limits.Users(ctx, who, touched...); err != nil {
		return err
	}
	for _, id := range added {
		if err := s.wouldHold(ctx, c, who, id, roleID); err != nil {
			return err
		}
	}
	return nil
}

// wouldHold checks that user id, given the role too, stays within the
// caller's authority.
func (s *Service) wouldHold(ctx context.Context, c *ent.Client, who datascope.Caller, id, roleID int64) error {
	u, err := c.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).
		Select(sysuser.FieldID, sysuser.FieldOrgID).Only(ctx)
	if err != nil {
		return err
	}
	links, err := c.SysUserRole.Query().Where(sysuserrole.UserID(id)).All(ctx)
	if err != nil {
		return err
	}
	roles := []int64{roleID}
	for _, l := range links {
		roles = append(roles, l.RoleID)
	}
	return s.limits.WouldHold(ctx, who, id, u.OrgID, roles)
}
