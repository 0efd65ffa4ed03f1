// Package role is a kernel feature area: Roles and data scopes (/api/v1/sys/role).
//
// Every change that alters what a role grants — its menus, its data scope,
// its enabled flag, its holders, its deletion — drops the cached permission
// sets and data scopes of the users concerned, so the next request is
// checked against the new state.
package role

import (
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Role"

// menus are the seeded menu entries of this area (wire contract §5.2, ids
// 240-247). Button 245 also grants the menu tree (host/menu) the grant
// dialog shows.
var menus = []seed.Menu{
	{ID: 240, ParentID: 200, Type: seed.MenuPage, Title: "角色管理", Path: "/system/role", Component: "system/role/index", Icon: "ph:user-circle-gear-duotone", Sort: 4},
	{ID: 241, ParentID: 240, Type: seed.MenuButton, Title: "角色-查询", Permission: "GET:/api/v1/sys/role/page;GET:/api/v1/sys/role/{id}", Sort: 1},
	{ID: 242, ParentID: 240, Type: seed.MenuButton, Title: "角色-新增", Permission: "POST:/api/v1/sys/role/add", Sort: 2},
	{ID: 243, ParentID: 240, Type: seed.MenuButton, Title: "角色-更新", Permission: "PUT:/api/v1/sys/role/{id}", Sort: 3},
	{ID: 244, ParentID: 240, Type: seed.MenuButton, Title: "角色-删除", Permission: "DELETE:/api/v1/sys/role/{id};POST:/api/v1/sys/role/batch-delete", Sort: 4},
	{ID: 245, ParentID: 240, Type: seed.MenuButton, Title: "角色-分配菜单", Permission: "GET:/api/v1/sys/menu/tree;GET:/api/v1/sys/role/{id}/menus;PUT:/api/v1/sys/role/menu", Sort: 5},
	{ID: 246, ParentID: 240, Type: seed.MenuButton, Title: "角色-数据范围", Permission: "GET:/api/v1/sys/role/{id}/datascope;PUT:/api/v1/sys/role/datascope", Sort: 6},
	{ID: 247, ParentID: 240, Type: seed.MenuButton, Title: "角色-分配用户", Permission: "GET:/api/v1/sys/role/{id}/users;PUT:/api/v1/sys/role/users", Sort: 7},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes, Recycle: recycleKinds, Forgets: forgets}
}

func routes(d *module.Deps, api *route.Group) error {
	mount(api, NewService(d), d.Config.API.MaxPageSize)
	return nil
}
