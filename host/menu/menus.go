package menu

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// MenuTreeNode is a node of the administration menu tree (GET /sys/menu/tree).
type MenuTreeNode struct {
	ID         int64   `json:"id"`
	ParentID   int64   `json:"parentId"`
	Type       int     `json:"type"`
	Title      string  `json:"title"`
	Permission string  `json:"permission"`
	Sort       int     `json:"sort"`
	Enabled    bool    `json:"enabled"`
	ModuleID   *int64  `json:"moduleId"`
	Path       *string `json:"path"`
	Component  *string `json:"component"`
	Icon       *string `json:"icon"`
	Visible    bool    `json:"visible"`
	// Children are sorted by sort, then id.
	Children []*MenuTreeNode `json:"children"`
}

// MenuInput is the body of POST /sys/menu/add and PUT /sys/menu/{id}.
// Omitted enabled and visible mean true.
type MenuInput struct {
	ParentID   request.Int64  `json:"parentId"`
	Type       request.Int64  `json:"type"`
	Title      string         `json:"title"`
	Permission *string        `json:"permission"`
	Sort       request.Int64  `json:"sort"`
	Enabled    *bool          `json:"enabled"`
	ModuleID   *request.Int64 `json:"moduleId"`
	Path       *string        `json:"path"`
	Component  *string        `json:"component"`
	Icon       *string        `json:"icon"`
	Visible    *bool          `json:"visible"`
}

// RouteItem is one permission-gated endpoint (GET /sys/menu/routes).
type RouteItem struct {
	// Code is the route's permission code, e.g.
	// DELETE:/api/v1/sys/session/{sessionid}.
	Code string `json:"code"`
	// Method is upper case.
	Method string `json:"method"`
	// Path is the route template in its original case, e.g.
	// /api/v1/sys/session/{sessionId}.
	Path string `json:"path"`
}

// menuFields is a validated MenuInput.
type menuFields struct {
	parentID              int64
	typ                   int
	title, permission     string
	sort                  int
	enabled, visible      bool
	moduleID              *int64
	path, component, icon *string
}

func (in MenuInput) validate() (menuFields, error) {
	f := menuFields{
		parentID: int64(in.ParentID), typ: int(in.Type), sort: int(in.Sort),
		enabled: request.BoolOr(in.Enabled, true), visible: request.BoolOr(in.Visible, true),
	}
	var err error
	if f.parentID < 0 {
		return f, request.Invalid("parentId")
	}
	if f.typ < seed.MenuCatalog || f.typ > seed.MenuButton {
		return f, request.Invalid("type")
	}
	if f.title, err = request.RequiredText("title", in.Title, 128); err != nil {
		return f, err
	}
	if in.Permission != nil {
		f.permission = strings.Join(authz.SplitCodes(*in.Permission), ";")
	}
	if utf8.RuneCountInString(f.permission) > 1024 {
		return f, request.Invalid("permission")
	}
	if f.path, err = request.OptionalText("path", in.Path, 512); err != nil {
		return f, err
	}
	if f.component, err = request.OptionalText("component", in.Component, 512); err != nil {
		return f, err
	}
	if f.icon, err = request.OptionalText("icon", in.Icon, 128); err != nil {
		return f, err
	}
	// The module belongs to top-level nodes only; below, it is inherited.
	if f.parentID == 0 && in.ModuleID != nil && *in.ModuleID > 0 {
		id := int64(*in.ModuleID)
		f.moduleID = &id
	}
	return f, nil
}

// menuService holds the rules of the administration menu (/sys/menu).
type menuService struct {
	client   *ent.Client
	store    cache.Store
	perms    *authz.Resolver
	limits   *authority.Checker
	routes   func() []route.Route
	disabled map[string]bool
	log      hclog.Logger
}

// Tree returns the live menus as a tree.
func (s *menuService) Tree(ctx context.Context) ([]*MenuTreeNode, error) {
	all, err := s.client.SysMenu.Query().Where(sysmenu.IsDelete(false)).
		Order(sysmenu.BySort(), sysmenu.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	nodes := make(map[int64]*MenuTreeNode, len(all))
	for _, m := range all {
		nodes[m.ID] = &MenuTreeNode{
			ID: m.ID, ParentID: m.ParentID, Type: m.Type, Title: m.Title, Permission: m.Permission,
			Sort: m.Sort, Enabled: m.Enabled, ModuleID: m.ModuleID,
			Path: m.Path, Component: m.Component, Icon: m.Icon, Visible: m.Visible,
			Children: []*MenuTreeNode{},
		}
	}
	// A node whose parent is missing is shown as a root, so it stays
	// reachable for repair.
	out := []*MenuTreeNode{}
	for _, m := range all {
		n := nodes[m.ID]
		if parent, ok := nodes[m.ParentID]; ok && m.ParentID != 0 && m.ParentID != m.ID {
			parent.Children = append(parent.Children, n)
		} else {
			out = append(out, n)
		}
	}
	return out, nil
}

// Routes lists every permission-gated route of the enabled modules,
// distinct by code, sorted by path then method.
func (s *menuService) Routes(context.Context) ([]RouteItem, error) {
	rs := s.routes() // sorted by path, then method
	out := make([]RouteItem, 0, len(rs))
	seen := make(map[string]bool, len(rs))
	for _, r := range rs {
		if r.Access != route.Permission || s.disabled[strings.ToLower(r.Module)] {
			continue
		}
		code := r.PermissionCode()
		if seen[code] {
			continue
		}
		seen[code] = true
		out = append(out, RouteItem{Code: code, Method: strings.ToUpper(r.Method), Path: r.Path})
	}
	return out, nil
}

// checkPermission checks a normalised permission field (codes joined with
// ';'; empty is allowed, for catalogs and pages): every code must be the
// code of a permission-gated route of the route table (42031, arg
// permission = the first that is not; routes of disabled modules count, as
// their seeded buttons do), and the caller must hold it (41006) unless they
// are the super-admin.
func (s *menuService) checkPermission(ctx context.Context, who authn.Principal, field string) error {
	if field == "" {
		return nil
	}
	codes := authz.SplitCodes(field)
	known := make(map[string]bool)
	for _, r := range s.routes() {
		if r.Access == route.Permission {
			known[r.PermissionCode()] = true
		}
	}
	for _, code := range codes {
		if !known[code] {
			return errcode.New(errcode.MenuPermissionInvalid).With("permission", code)
		}
	}
	return s.limits.Codes(ctx, datascope.Caller{UserID: who.UserID, SuperAdmin: who.SuperAdmin}, codes)
}

// checkParent returns 42017 unless parentID is 0 or a live catalog or page.
func (s *menuService) checkParent(ctx context.Context, parentID int64) error {
	if parentID == 0 {
		return nil
	}
	parent, err := s.client.SysMenu.Query().Where(sysmenu.ID(parentID), sysmenu.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.MenuInvalidParent)
	}
	if err != nil {
		return err
	}
	if parent.Type == seed.MenuButton {
		return errcode.New(errcode.MenuInvalidParent)
	}
	return nil
}

// checkModule returns 42011 unless the module is live.
func (s *menuService) checkModule(ctx context.Context, moduleID *int64) error {
	if moduleID == nil {
		return nil
	}
	ok, err := s.client.SysModule.Query().Where(sysmodule.ID(*moduleID), sysmodule.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.ModuleNotFound)
	}
	return nil
}

// Add creates a menu under a live catalog or page (or at the root) and
// returns its id; the caller must hold every permission code it grants.
func (s *menuService) Add(ctx context.Context, p authn.Principal, in MenuInput) (int64, error) {
	f, err := in.validate()
	if err != nil {
		return 0, err
	}
	if err := s.checkParent(ctx, f.parentID); err != nil {
		return 0, err
	}
	if err := s.checkModule(ctx, f.moduleID); err != nil {
		return 0, err
	}
	if err := s.checkPermission(ctx, p, f.permission); err != nil {
		return 0, err
	}
	m, err := s.client.SysMenu.Create().
		SetParentID(f.parentID).SetType(f.typ).SetTitle(f.title).SetPermission(f.permission).
		SetSort(f.sort).SetEnabled(f.enabled).SetVisible(f.visible).
		SetNillableModuleID(f.moduleID).SetNillablePath(f.path).SetNillableComponent(f.component).
		SetNillableIcon(f.icon).SetCreateUserID(p.UserID).
		Save(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.changed(ctx); err != nil {
		return 0, err
	}
	return m.ID, nil
}

// Update changes a live menu; its new parent must be neither the node
// itself nor one of its descendants.
func (s *menuService) Update(ctx context.Context, p authn.Principal, id int64, in MenuInput) error {
	f, err := in.validate()
	if err != nil {
		return err
	}
	live, err := s.client.SysMenu.Query().Where(sysmenu.IsDelete(false)).
		Select(sysmenu.FieldID, sysmenu.FieldParentID).All(ctx)
	if err != nil {
		return err
	}
	parentOf := make(map[int64]int64, len(live))
	for _, m := range live {
		parentOf[m.ID] = m.ParentID
	}
	if _, ok := parentOf[id]; !ok {
		return errcode.New(errcode.MenuNotFound)
	}
	if err := s.checkParent(ctx, f.parentID); err != nil {
		return err
	}
	// The new parent must not be the node itself or one of its descendants.
	seen := make(map[int64]bool)
	for cur := f.parentID; cur != 0 && !seen[cur]; cur = parentOf[cur] {
		if cur == id {
			return errcode.New(errcode.MenuInvalidParent)
		}
		seen[cur] = true
	}
	if err := s.checkModule(ctx, f.moduleID); err != nil {
		return err
	}
	if err := s.checkPermission(ctx, p, f.permission); err != nil {
		return err
	}
	u := s.client.SysMenu.Update().Where(sysmenu.ID(id), sysmenu.IsDelete(false)).
		SetParentID(f.parentID).SetType(f.typ).SetTitle(f.title).SetPermission(f.permission).
		SetSort(f.sort).SetEnabled(f.enabled).SetVisible(f.visible).SetUpdateUserID(p.UserID)
	if f.moduleID == nil {
		u.ClearModuleID()
	} else {
		u.SetModuleID(*f.moduleID)
	}
	if f.path == nil {
		u.ClearPath()
	} else {
		u.SetPath(*f.path)
	}
	if f.component == nil {
		u.ClearComponent()
	} else {
		u.SetComponent(*f.component)
	}
	if f.icon == nil {
		u.ClearIcon()
	} else {
		u.SetIcon(*f.icon)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.MenuNotFound)
	}
	return s.changed(ctx)
}

// Delete soft-deletes a live menu without live children.
func (s *menuService) Delete(ctx context.Context, userID, id int64) error {
	ok, err := s.client.SysMenu.Query().Where(sysmenu.ID(id), sysmenu.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.MenuNotFound)
	}
	hasChildren, err := s.client.SysMenu.Query().
		Where(sysmenu.ParentID(id), sysmenu.IsDelete(false), sysmenu.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if hasChildren {
		return errcode.New(errcode.MenuHasChildren)
	}
	// Role grants of the menu stay: a deleted menu grants nothing (the
	// resolver reads live menus only), and a restore brings them back.
	n, err := s.client.SysMenu.Update().Where(sysmenu.ID(id), sysmenu.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(userID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.MenuNotFound)
	}
	return s.changed(ctx)
}

// changed runs after a committed menu change: every user's permission set
// is dropped and a new portal generation starts, so the next request of
// anyone sees the change.
func (s *menuService) changed(ctx context.Context) error {
	if _, err := s.perms.InvalidateAll(ctx); err != nil {
		s.log.Error("dropping the permission caches after a menu change failed", "error", err)
		return err
	}
	if _, err := BumpGeneration(ctx, s.store); err != nil {
		s.log.Error("bumping the portal generation after a menu change failed", "error", err)
		return err
	}
	return nil
}
