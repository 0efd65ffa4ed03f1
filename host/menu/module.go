// Package menu is a kernel feature area: Menus, modules and the personal portal (/api/v1/sys/menu, /api/v1/sys/module, /api/v1/personal/modules|menu|permissions|default-module).
package menu

import (
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Menu"

// menus are the seeded menu entries of this area: the menu and module
// pages under the 系统运维 catalog (300, owned by host/seed).
var menus = []seed.Menu{
	{ID: 330, ParentID: 300, Type: seed.MenuPage, Title: "菜单管理", Path: "/system/menu", Component: "system/menu/index", Icon: "ph:list-dashes-duotone", Sort: 3},
	{ID: 331, ParentID: 330, Type: seed.MenuButton, Title: "菜单-查询", Permission: "GET:/api/v1/sys/menu/tree;GET:/api/v1/sys/menu/routes", Sort: 1},
	{ID: 332, ParentID: 330, Type: seed.MenuButton, Title: "菜单-新增", Permission: "POST:/api/v1/sys/menu/add", Sort: 2},
	{ID: 333, ParentID: 330, Type: seed.MenuButton, Title: "菜单-更新", Permission: "PUT:/api/v1/sys/menu/{id}", Sort: 3},
	{ID: 334, ParentID: 330, Type: seed.MenuButton, Title: "菜单-删除", Permission: "DELETE:/api/v1/sys/menu/{id}", Sort: 4},

	{ID: 340, ParentID: 300, Type: seed.MenuPage, Title: "模块管理", Path: "/system/module", Component: "system/module/index", Icon: "ph:squares-four-duotone", Sort: 4},
	{ID: 341, ParentID: 340, Type: seed.MenuButton, Title: "模块-查询", Permission: "GET:/api/v1/sys/module/list;GET:/api/v1/sys/module/{id}", Sort: 1},
	{ID: 342, ParentID: 340, Type: seed.MenuButton, Title: "模块-新增", Permission: "POST:/api/v1/sys/module/add", Sort: 2},
	{ID: 343, ParentID: 340, Type: seed.MenuButton, Title: "模块-更新", Permission: "PUT:/api/v1/sys/module/{id}", Sort: 3},
	{ID: 344, ParentID: 340, Type: seed.MenuButton, Title: "模块-删除", Permission: "DELETE:/api/v1/sys/module/{id}", Sort: 4},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes, Recycle: recycleKinds}
}

func routes(d *module.Deps, api *route.Group) error {
	log := hclog.NewNullLogger()
	if d.Logger != nil {
		log = d.Logger("AdminKernel.Menu")
	}
	ttl := 20 * time.Minute
	if d.Config != nil && d.Config.Service.Cache.PermissionMinutes > 0 {
		ttl = time.Duration(d.Config.Service.Cache.PermissionMinutes) * time.Minute
	}
	disabled := map[string]bool{}
	if d.Config != nil {
		for _, m := range d.Config.API.DisabledModules {
			disabled[strings.ToLower(strings.TrimSpace(m))] = true
		}
	}

	mh := &menuService{client: d.Client, store: d.Store, perms: d.Perms, routes: d.Routes, disabled: disabled, log: log,
		limits: authority.New(d.Client, d.Perms, d.Scopes())}
	m := api.Group("/sys/menu")
	m.Get("/tree", route.Permission, bind.Read(mh.Tree)).Doc("Menu tree", nil, []*MenuTreeNode{})
	m.Get("/routes", route.Permission, bind.Read(mh.Routes)).Doc("Permission-gated routes", nil, []RouteItem{})
	m.Post("/add", route.Permission, bind.Create(authn.Require, mh.Add)).NeedsReauth().Doc("Add a menu", MenuInput{}, int64(0))
	m.Put("/{id}", route.Permission, bind.Change(authn.Require, mh.Update)).NeedsReauth().Doc("Update a menu", MenuInput{}, true)
	m.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, mh.Delete)).NeedsReauth().Doc("Delete a menu", nil, true)

	sm := &moduleService{client: d.Client, store: d.Store, log: log}
	g := api.Group("/sys/module")
	g.Get("/list", route.Permission, bind.Read(sm.List)).Doc("Modules", nil, []SysModule{})
	g.Get("/{id}", route.Permission, bind.ReadID(sm.Get)).Doc("Module", nil, SysModule{})
	g.Post("/add", route.Permission, bind.Create(bind.UserID, sm.Add)).Doc("Add a module", ModuleInput{}, int64(0))
	g.Put("/{id}", route.Permission, bind.Change(bind.UserID, sm.Update)).Doc("Update a module", ModuleInput{}, true)
	g.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, sm.Delete)).Doc("Delete a module", nil, true)

	ph := &portal{client: d.Client, perms: d.Perms, store: d.Store, ttl: ttl, log: log}
	p := api.Group("/personal")
	p.Get("/modules", route.Session, bind.ReadAs(authn.Require, ph.MyModules)).Doc("My modules", nil, MyModules{})
	p.Get("/menu", route.Session, ph.menuHandler).Doc("My menu of a module", nil, []*MenuNode{}).Queries("moduleId:int64")
	p.Put("/default-module", route.Session, bind.Create(authn.Require, ph.SetDefaultModule)).Doc("Set my default module", DefaultModuleInput{}, true)
	p.Get("/permissions", route.Session, bind.ReadAs(authn.Require, ph.Permissions)).Doc("My permission codes", nil, []string{})
	return nil
}
