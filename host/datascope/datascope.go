// Package datascope resolves a user's data scope (wire contract §4.2,
// DataScopeType): which users' rows the user may see and manage.
//
// Every enabled, live role of the user may carry one live sys_role_data_scope
// row. The effective scope is the widest of them:
//
//   - 1 All beats everything: the scope is unrestricted;
//   - otherwise the org sets of 2 (own org), 3 (own org and its subtree, by
//     parent_id) and 5 (the role's custom org ids) are united, and 4 (self)
//     adds the user's own rows;
//   - a super-admin is unrestricted;
//   - a user without any scope-bearing role sees only their own rows.
//
// A scope is cached per user under KeyPrefix+<user id> for
// Service:Cache:PermissionMinutes and must be invalidated wherever permission
// sets are (role grants, role enable/disable/delete, user role or org
// changes); org-tree changes call InvalidateAll.
package datascope

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/cache"
)

// KeyPrefix namespaces cached scopes ("scope:<user id>"); the cache-clearing
// action flushes it together with the permission sets.
const KeyPrefix = "scope:"

// Type is the contract's DataScopeType.
type Type int

// Data scope types.
const (
	All         Type = 1
	Org         Type = 2
	OrgAndBelow Type = 3
	Self        Type = 4
	Custom      Type = 5
)

// Valid reports whether t is one of the five types.
func (t Type) Valid() bool { return t >= All && t <= Custom }

// Scope is a user's effective data scope. The zero value sees nothing.
type Scope struct {
	// UserID is the user the scope belongs to.
	UserID int64 `json:"userId"`
	// Unrestricted: every row is visible (scope 1 or super-admin).
	Unrestricted bool `json:"unrestricted"`
	// OrgIDs are the visible orgs (sorted, distinct) when restricted.
	OrgIDs []int64 `json:"orgIds"`
	// IncludeSelf: the user's own rows are visible too.
	IncludeSelf bool `json:"includeSelf"`
}

// Everything is the unrestricted scope (super-admin, trusted contexts).
func Everything(userID int64) Scope { return Scope{UserID: userID, Unrestricted: true} }

// HasOrg reports whether rows of org id are visible.
func (s Scope) HasOrg(id int64) bool {
	if s.Unrestricted {
		return true
	}
	_, ok := slices.BinarySearch(s.OrgIDs, id)
	return ok
}

// ContainsUser reports whether a user row (its id and org) is visible.
func (s Scope) ContainsUser(userID int64, orgID *int64) bool {
	if s.Unrestricted {
		return true
	}
	if s.IncludeSelf && userID == s.UserID {
		return true
	}
	return orgID != nil && s.HasOrg(*orgID)
}

// Users returns the predicates restricting a sys_user query to the scope
// (org_id IN orgs OR id = self); none when unrestricted. A scope that sees
// nothing yields a predicate matching no row.
func (s Scope) Users() []predicate.SysUser {
	if s.Unrestricted {
		return nil
	}
	var or []predicate.SysUser
	if len(s.OrgIDs) > 0 {
		or = append(or, sysuser.OrgIDIn(s.OrgIDs...))
	}
	if s.IncludeSelf {
		or = append(or, sysuser.ID(s.UserID))
	}
	switch len(or) {
	case 0:
		return []predicate.SysUser{sysuser.IDIn()} // IN () matches nothing
	case 1:
		return or
	default:
		return []predicate.SysUser{sysuser.Or(or...)}
	}
}

// Resolve computes the user's scope from the database (no cache).
func Resolve(ctx context.Context, client *ent.Client, userID int64) (Scope, error) {
	u, err := client.SysUser.Query().
		Where(sysuser.ID(userID), sysuser.IsDelete(false)).
		Select(sysuser.FieldID, sysuser.FieldIsSuperAdmin, sysuser.FieldOrgID).
		Only(ctx)
	if ent.IsNotFound(err) {
		return Scope{UserID: userID}, nil
	}
	if err != nil {
		return Scope{}, err
	}
	if u.IsSuperAdmin {
		return Everything(userID), nil
	}
	links, err := client.SysUserRole.Query().Where(sysuserrole.UserID(userID)).All(ctx)
	if err != nil {
		return Scope{}, err
	}
	roleIDs := make([]int64, len(links))
	for i, l := range links {
		roleIDs[i] = l.RoleID
	}
	return ResolveFor(ctx, client, userID, u.OrgID, roleIDs)
}

// ResolveFor computes the scope a (non-super-admin) user in orgID would
// have holding roleIDs: the scope of the enabled, live ones among them. It
// answers "what would this user see after the change" before a write.
func ResolveFor(ctx context.Context, client *ent.Client, userID int64, orgID *int64, roleIDs []int64) (Scope, error) {
	var rows []Row
	if len(roleIDs) > 0 {
		live, err := client.SysRole.Query().
			Where(sysrole.IDIn(roleIDs...), sysrole.Enabled(true), sysrole.IsDelete(false)).IDs(ctx)
		if err != nil {
			return Scope{}, err
		}
		if len(live) > 0 {
			scopes, err := client.SysRoleDataScope.Query().
				Where(sysroledatascope.RoleIDIn(live...), sysroledatascope.IsDelete(false)).All(ctx)
			if err != nil {
				return Scope{}, err
			}
			for _, sc := range scopes {
				rows = append(rows, RowOf(sc))
			}
		}
	}
	return Of(ctx, client, userID, orgID, rows)
}

// Row is one role's data scope: its type and, for Custom, its org ids.
type Row struct {
	Type   Type
	Custom []int64
}

// RowOf converts a stored sys_role_data_scope row.
func RowOf(sc *ent.SysRoleDataScope) Row {
	ids, _ := ParseOrgIDs(deref(sc.CustomOrgIds))
	return Row{Type: Type(sc.ScopeType), Custom: ids}
}

// Of computes the scope of a user in orgID whose roles carry rows (the
// widest of them; none at all means the user's own rows only).
func Of(ctx context.Context, client *ent.Client, userID int64, orgID *int64, rows []Row) (Scope, error) {
	s := Scope{UserID: userID}
	if len(rows) == 0 {
		s.IncludeSelf = true
		return s, nil
	}
	orgs := map[int64]bool{}
	subtree := false
	for _, r := range rows {
		switch r.Type {
		case All:
			return Everything(userID), nil
		case Org:
			if orgID != nil {
				orgs[*orgID] = true
			}
		case OrgAndBelow:
			subtree = true
		case Self:
			s.IncludeSelf = true
		case Custom:
			for _, id := range r.Custom {
				orgs[id] = true
			}
		}
	}
	if subtree && orgID != nil {
		below, err := Subtree(ctx, client, *orgID)
		if err != nil {
			return Scope{}, err
		}
		for _, id := range below {
			orgs[id] = true
		}
	}
	s.OrgIDs = make([]int64, 0, len(orgs))
	for id := range orgs {
		s.OrgIDs = append(s.OrgIDs, id)
	}
	slices.Sort(s.OrgIDs)
	return s, nil
}

// Covers reports whether scope t lies within s ("scope within", see
// docs/design/security.md, Authority boundaries). Each scope is read as the set of
// orgs whose users it covers: unrestricted covers every org, a restricted
// scope exactly its OrgIDs (own org, own org and below and custom are
// resolved to org ids before they get here). Self (IncludeSelf) covers no
// org beyond the person themselves, so it is within anything and never
// counts. t is within s when s is unrestricted, or t is restricted and
// every org of t is an org of s.
func (s Scope) Covers(t Scope) bool {
	if s.Unrestricted {
		return true
	}
	if t.Unrestricted {
		return false
	}
	for _, id := range t.OrgIDs {
		if !s.HasOrg(id) {
			return false
		}
	}
	return true
}

// Subtree returns root and every live org below it (by parent_id).
func Subtree(ctx context.Context, client *ent.Client, root int64) ([]int64, error) {
	rows, err := client.SysOrg.Query().Where(sysorg.IsDelete(false)).
		Select(sysorg.FieldID, sysorg.FieldParentID).All(ctx)
	if err != nil {
		return nil, err
	}
	children := make(map[int64][]int64, len(rows))
	for _, o := range rows {
		children[o.ParentID] = append(children[o.ParentID], o.ID)
	}
	out := []int64{root}
	seen := map[int64]bool{root: true}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if !seen[c] { // a corrupt tree with a cycle must not loop
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// ParseOrgIDs parses a stored custom_org_ids value ("2,6"); blanks are
// skipped, and the result is sorted and distinct. ok is false when some
// element is not a positive integer (those elements are dropped).
func ParseOrgIDs(s string) (ids []int64, ok bool) {
	ok = true
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n <= 0 {
			ok = false
			continue
		}
		ids = append(ids, n)
	}
	slices.Sort(ids)
	return slices.Compact(ids), ok
}

// FormatOrgIDs renders ids the way custom_org_ids stores them ("2,6").
func FormatOrgIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func key(userID int64) string { return KeyPrefix + strconv.FormatInt(userID, 10) }

// Cache resolves scopes through the kernel cache.
type Cache struct {
	client *ent.Client
	store  cache.Store
	ttl    time.Duration
}

// New returns a cache; ttl is Service:Cache:PermissionMinutes.
func New(client *ent.Client, store cache.Store, ttl time.Duration) *Cache {
	return &Cache{client: client, store: store, ttl: ttl}
}

// Scope returns the user's scope, from the cache when present. A cache
// failure falls back to the database.
func (c *Cache) Scope(ctx context.Context, userID int64) (Scope, error) {
	if b, ok, err := c.store.Get(ctx, key(userID)); err == nil && ok {
		var s Scope
		if json.Unmarshal(b, &s) == nil && s.UserID == userID {
			return s, nil
		}
	}
	s, err := Resolve(ctx, c.client, userID)
	if err != nil {
		return Scope{}, err
	}
	if b, err := json.Marshal(s); err == nil {
		_ = c.store.Set(ctx, key(userID), b, c.ttl)
	}
	return s, nil
}

// Invalidate drops the cached scopes of the given users.
func Invalidate(ctx context.Context, store cache.Store, userIDs ...int64) error {
	if len(userIDs) == 0 {
		return nil
	}
	keys := make([]string, len(userIDs))
	for i, id := range userIDs {
		keys[i] = key(id)
	}
	return store.Delete(ctx, keys...)
}

// InvalidateAll drops every cached scope and returns how many.
func InvalidateAll(ctx context.Context, store cache.Store) (int, error) {
	return store.DeletePrefix(ctx, KeyPrefix)
}
