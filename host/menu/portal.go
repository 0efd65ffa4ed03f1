package menu

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/seed"
)

// The per-user portal (accessible modules, sidebar tree per module) is
// cached under keys that carry the portal generation, a cache counter.
// Bumping the counter makes every existing portal entry unread at once; the
// old entries expire by their TTL (Service:Cache:PermissionMinutes).
const (
	// GenerationKey is the counter holding the portal generation. Counters
	// are exempt from eviction, so the generation never goes backwards.
	GenerationKey = module.PortalGenerationKey
	// CachePrefix starts every cached portal entry:
	// portal:cache:<generation>:modules:<userId>:<superAdmin> and
	// portal:cache:<generation>:menu:<userId>:<superAdmin>:<moduleId>.
	// It does not span GenerationKey, so DeletePrefix(CachePrefix) never
	// touches the counter.
	CachePrefix = "portal:cache:"
)

// BumpGeneration starts a new portal generation and returns its number:
// every user's cached modules list and sidebar tree are recomputed on their
// next request. Call it after a change that alters what a user's portal
// shows and has been committed: menus, modules, role-menu grants,
// user-role links, a role's enabled flag or deletion, and the cache-clearing
// "rebuild portal" action.
func BumpGeneration(ctx context.Context, store cache.Store) (int64, error) {
	return store.Incr(ctx, GenerationKey, 1, 0)
}

// PortalModule is one entry of GET /personal/modules.
type PortalModule struct {
	ID           int64   `json:"id"`
	Code         string  `json:"code"`
	Title        string  `json:"title"`
	Icon         *string `json:"icon"`
	DefaultRoute *string `json:"defaultRoute"`
	Sort         int     `json:"sort"`
}

// MyModules is the data of GET /personal/modules.
type MyModules struct {
	Modules []PortalModule `json:"modules"`
	// DefaultModuleID is the user's stored default while it is still
	// accessible, else null.
	DefaultModuleID *int64 `json:"defaultModuleId"`
}

// MenuNode is a node of the portal sidebar (GET /personal/menu).
type MenuNode struct {
	ID        int64       `json:"id"`
	ParentID  int64       `json:"parentId"`
	Type      int         `json:"type"`
	Title     string      `json:"title"`
	Path      *string     `json:"path"`
	Component *string     `json:"component"`
	Icon      *string     `json:"icon"`
	Sort      int         `json:"sort"`
	Visible   bool        `json:"visible"`
	Children  []*MenuNode `json:"children"`
}

// DefaultModuleInput is the body of PUT /personal/default-module.
type DefaultModuleInput struct {
	ModuleID request.Int64 `json:"moduleId"`
}

// portal computes and caches the personal portal.
type portal struct {
	client *ent.Client
	perms  *authz.Resolver
	store  cache.Store
	ttl    time.Duration
	log    hclog.Logger
}

// cached returns the value under the current generation's key, computing
// and storing it on a miss. A cache failure never fails the request: the
// value is then computed from the database.
func cached[T any](ctx context.Context, p *portal, suffix string, compute func(context.Context) (T, error)) (T, error) {
	gen, _, err := p.store.Count(ctx, GenerationKey)
	if err != nil {
		p.log.Warn("portal generation unreadable; answering from the database", "error", err)
		return compute(ctx)
	}
	key := CachePrefix + strconv.FormatInt(gen, 10) + ":" + suffix
	if b, ok, err := p.store.Get(ctx, key); err == nil && ok {
		var v T
		if json.Unmarshal(b, &v) == nil {
			return v, nil
		}
	}
	v, err := compute(ctx)
	if err != nil {
		return v, err
	}
	if b, err := json.Marshal(v); err == nil {
		if err := p.store.Set(ctx, key, b, p.ttl); err != nil {
			p.log.Warn("caching the portal failed", "key", key, "error", err)
		}
	}
	return v, nil
}

func userKey(userID int64, super bool) string {
	return strconv.FormatInt(userID, 10) + ":" + strconv.FormatBool(super)
}

// Modules returns the modules the user may enter, sorted by sort then id.
func (p *portal) Modules(ctx context.Context, userID int64, super bool) ([]PortalModule, error) {
	return cached(ctx, p, "modules:"+userKey(userID, super), func(ctx context.Context) ([]PortalModule, error) {
		return p.computeModules(ctx, userID, super)
	})
}

// Menu returns the user's sidebar tree of a module.
func (p *portal) Menu(ctx context.Context, userID int64, super bool, moduleID int64) ([]*MenuNode, error) {
	if moduleID <= 0 {
		return []*MenuNode{}, nil
	}
	suffix := "menu:" + userKey(userID, super) + ":" + strconv.FormatInt(moduleID, 10)
	return cached(ctx, p, suffix, func(ctx context.Context) ([]*MenuNode, error) {
		return p.computeMenu(ctx, userID, super, moduleID)
	})
}

func (p *portal) computeModules(ctx context.Context, userID int64, super bool) ([]PortalModule, error) {
	mods, err := p.client.SysModule.Query().
		Where(sysmodule.IsDelete(false), sysmodule.Enabled(true)).
		Order(sysmodule.BySort(), sysmodule.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	out := []PortalModule{}
	var allowed map[int64]bool
	if !super {
		granted, err := grantedMenuIDs(ctx, p.client, userID)
		if err != nil || len(granted) == 0 {
			return out, err
		}
		snap, err := loadSnapshot(ctx, p.client)
		if err != nil {
			return nil, err
		}
		allowed = make(map[int64]bool)
		for _, id := range granted {
			if mid := snap.moduleOf(id); mid != 0 {
				allowed[mid] = true
			}
		}
	}
	for _, m := range mods {
		if allowed == nil || allowed[m.ID] {
			out = append(out, PortalModule{ID: m.ID, Code: m.Code, Title: m.Title, Icon: m.Icon, DefaultRoute: m.DefaultRoute, Sort: m.Sort})
		}
	}
	return out, nil
}

func (p *portal) computeMenu(ctx context.Context, userID int64, super bool, moduleID int64) ([]*MenuNode, error) {
	out := []*MenuNode{}
	live, err := p.client.SysModule.Query().
		Where(sysmodule.ID(moduleID), sysmodule.IsDelete(false), sysmodule.Enabled(true)).Exist(ctx)
	if err != nil || !live {
		return out, err
	}
	snap, err := loadSnapshot(ctx, p.client)
	if err != nil {
		return nil, err
	}
	var keep map[int64]bool
	if !super {
		granted, err := grantedMenuIDs(ctx, p.client, userID)
		if err != nil || len(granted) == 0 {
			return out, err
		}
		// Granted nodes plus their ancestors, so every granted page (or the
		// page of a granted button) hangs on its full catalog path.
		keep = make(map[int64]bool)
		for _, id := range granted {
			for cur, ok := snap.byID[id]; ok && !keep[cur.ID]; cur, ok = snap.byID[cur.ParentID] {
				keep[cur.ID] = true
				if cur.ParentID == 0 {
					break
				}
			}
		}
	}
	nodes := make(map[int64]*MenuNode)
	var order []*ent.SysMenu
	for _, m := range snap.ordered {
		if m.Type == seed.MenuButton || (keep != nil && !keep[m.ID]) || snap.moduleOf(m.ID) != moduleID {
			continue
		}
		nodes[m.ID] = &MenuNode{
			ID: m.ID, ParentID: m.ParentID, Type: m.Type, Title: m.Title,
			Path: m.Path, Component: m.Component, Icon: m.Icon, Sort: m.Sort, Visible: m.Visible,
			Children: []*MenuNode{},
		}
		order = append(order, m)
	}
	for _, m := range order {
		n := nodes[m.ID]
		if parent, ok := nodes[m.ParentID]; ok && m.ParentID != 0 {
			parent.Children = append(parent.Children, n)
		} else {
			out = append(out, n)
		}
	}
	return out, nil
}

// snapshot is the live, enabled menus, for walking the tree in memory (the
// menu table is small).
type snapshot struct {
	byID    map[int64]*ent.SysMenu
	ordered []*ent.SysMenu // by sort, then id
	module  map[int64]int64
}

func loadSnapshot(ctx context.Context, client *ent.Client) (*snapshot, error) {
	menus, err := client.SysMenu.Query().
		Where(sysmenu.IsDelete(false), sysmenu.Enabled(true)).
		Order(sysmenu.BySort(), sysmenu.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	s := &snapshot{byID: make(map[int64]*ent.SysMenu, len(menus)), ordered: menus, module: make(map[int64]int64, len(menus))}
	for _, m := range menus {
		s.byID[m.ID] = m
	}
	return s, nil
}

// moduleOf is the module of a menu: the module of its top-level ancestor.
// 0 when the chain to the top is broken by a disabled or deleted node (the
// whole subtree is then out of the portal), loops, or ends in a top-level
// node without a module.
func (s *snapshot) moduleOf(id int64) int64 {
	var chain []int64
	seen := make(map[int64]bool)
	result := int64(0)
	for cur := id; ; {
		if v, ok := s.module[cur]; ok {
			result = v
			break
		}
		m, ok := s.byID[cur]
		if !ok || seen[cur] {
			break
		}
		seen[cur] = true
		chain = append(chain, cur)
		if m.ParentID == 0 {
			if m.ModuleID != nil {
				result = *m.ModuleID
			}
			break
		}
		cur = m.ParentID
	}
	for _, c := range chain {
		s.module[c] = result
	}
	return result
}

// grantedMenuIDs are the menus granted to the user's enabled, live roles
// (the same rule as the permission resolver).
func grantedMenuIDs(ctx context.Context, client *ent.Client, userID int64) ([]int64, error) {
	links, err := client.SysUserRole.Query().Where(sysuserrole.UserID(userID)).All(ctx)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	roleIDs := make([]int64, len(links))
	for i, l := range links {
		roleIDs[i] = l.RoleID
	}
	live, err := client.SysRole.Query().
		Where(sysrole.IDIn(roleIDs...), sysrole.Enabled(true), sysrole.IsDelete(false)).IDs(ctx)
	if err != nil || len(live) == 0 {
		return nil, err
	}
	grants, err := client.SysRoleMenu.Query().Where(sysrolemenu.RoleIDIn(live...)).All(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(grants))
	for i, g := range grants {
		ids[i] = g.MenuID
	}
	return ids, nil
}

// MyModules returns the modules the caller may open and their default
// module when it is one of them.
func (p *portal) MyModules(ctx context.Context, who authn.Principal) (MyModules, error) {
	mods, err := p.Modules(ctx, who.UserID, who.SuperAdmin)
	if err != nil {
		return MyModules{}, err
	}
	out := MyModules{Modules: mods}
	u, err := p.client.SysUser.Query().Where(sysuser.ID(who.UserID), sysuser.IsDelete(false)).
		Select(sysuser.FieldDefaultModuleID).Only(ctx)
	if ent.IsNotFound(err) {
		return MyModules{}, errcode.New(errcode.UserNotFound)
	}
	if err != nil {
		return MyModules{}, err
	}
	if u.DefaultModuleID != nil {
		for _, m := range mods {
			if m.ID == *u.DefaultModuleID {
				out.DefaultModuleID = u.DefaultModuleID
				break
			}
		}
	}
	return out, nil
}

// SetDefaultModule makes one of the caller's modules their default and
// reports true.
func (p *portal) SetDefaultModule(ctx context.Context, who authn.Principal, in DefaultModuleInput) (bool, error) {
	mods, err := p.Modules(ctx, who.UserID, who.SuperAdmin)
	if err != nil {
		return false, err
	}
	id := int64(in.ModuleID)
	ok := false
	for _, m := range mods {
		ok = ok || m.ID == id
	}
	if !ok {
		return false, errcode.New(errcode.ModuleAccessDenied)
	}
	n, err := p.client.SysUser.Update().
		Where(sysuser.ID(who.UserID), sysuser.IsDelete(false)).
		SetDefaultModuleID(id).SetUpdateUserID(who.UserID).Save(ctx)
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, errcode.New(errcode.UserNotFound)
	}
	return true, nil
}

// Permissions returns the caller's permission codes (none listed for the
// super-admin, who holds them all).
func (p *portal) Permissions(ctx context.Context, who authn.Principal) ([]string, error) {
	if who.SuperAdmin {
		return []string{}, nil
	}
	return p.perms.Codes(ctx, who.UserID)
}

// menuHandler binds GET /personal/menu?moduleId=.
func (p *portal) menuHandler(c fiber.Ctx) error {
	who, err := authn.Require(c)
	if err != nil {
		return err
	}
	moduleID, err := request.QueryInt64(c, "moduleId")
	if err != nil {
		return err
	}
	var id int64
	if moduleID != nil {
		id = *moduleID
	}
	tree, err := p.Menu(c.Context(), who.UserID, who.SuperAdmin, id)
	if err != nil {
		return err
	}
	return envelope.OK(c, tree)
}
