// Package org is a kernel feature area: Organisations and positions (/api/v1/sys/org, /api/v1/sys/position).
package org

import (
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Org"

// menus are the seeded menu entries of this area: the 组织管理 catalog
// with the organisation and position pages.
var menus = []seed.Menu{
	{ID: 200, Type: seed.MenuCatalog, Title: "组织管理", Icon: "ph:buildings-duotone", Sort: 2, ModuleID: 1},

	{ID: 210, ParentID: 200, Type: seed.MenuPage, Title: "机构管理", Path: "/system/org", Component: "system/org/index", Icon: "ph:tree-structure-duotone", Sort: 1},
	{ID: 211, ParentID: 210, Type: seed.MenuButton, Title: "机构-查询", Permission: "GET:/api/v1/sys/org/list;GET:/api/v1/sys/org/{id}", Sort: 1},
	{ID: 212, ParentID: 210, Type: seed.MenuButton, Title: "机构-新增", Permission: "POST:/api/v1/sys/org/add", Sort: 2},
	{ID: 213, ParentID: 210, Type: seed.MenuButton, Title: "机构-更新", Permission: "PUT:/api/v1/sys/org/{id}", Sort: 3},
	{ID: 214, ParentID: 210, Type: seed.MenuButton, Title: "机构-删除", Permission: "DELETE:/api/v1/sys/org/{id}", Sort: 4},
	{ID: 215, ParentID: 210, Type: seed.MenuButton, Title: "机构-复制", Permission: "POST:/api/v1/sys/org/{id}/copy", Sort: 5},

	{ID: 220, ParentID: 200, Type: seed.MenuPage, Title: "岗位管理", Path: "/system/position", Component: "system/position/index", Icon: "ph:identification-badge-duotone", Sort: 2},
	{ID: 221, ParentID: 220, Type: seed.MenuButton, Title: "岗位-查询", Permission: "GET:/api/v1/sys/position/page;GET:/api/v1/sys/position/{id}", Sort: 1},
	{ID: 222, ParentID: 220, Type: seed.MenuButton, Title: "岗位-新增", Permission: "POST:/api/v1/sys/position/add", Sort: 2},
	{ID: 223, ParentID: 220, Type: seed.MenuButton, Title: "岗位-更新", Permission: "PUT:/api/v1/sys/position/{id}", Sort: 3},
	{ID: 224, ParentID: 220, Type: seed.MenuButton, Title: "岗位-删除", Permission: "DELETE:/api/v1/sys/position/{id}", Sort: 4},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes, Recycle: recycleKinds}
}

func routes(d *module.Deps, api *route.Group) error {
	maxPage := 200
	if d.Config != nil && d.Config.API.MaxPageSize > 0 {
		maxPage = d.Config.API.MaxPageSize
	}

	mountOrgs(api, &orgService{client: d.Client, store: d.Store})
	mountPositions(api, &positionService{client: d.Client}, maxPage)
	return nil
}
