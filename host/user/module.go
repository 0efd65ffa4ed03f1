// Package user is a kernel feature area: Users (/api/v1/sys/user).
//
// Every endpoint works within the caller's data scope (host/datascope): a
// user outside it answers 41005, and a restricted caller may only place
// users in orgs of their scope (42030). Only the super-admin may change a
// super-admin account, and nobody may disable or delete it (42007);
// administrators cannot disable or delete themselves (42029). Callers other
// than the super-admin may newly grant only enabled, delegatable roles
// (41004).
package user

import (
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "User"

// menus are the seeded menu entries of this area (wire contract §5.2,
// ids 230-238).
var menus = []seed.Menu{
	{ID: 230, ParentID: 200, Type: seed.MenuPage, Title: "用户管理", Path: "/system/user", Component: "system/user/index", Icon: "ph:user-duotone", Sort: 3},
	{ID: 231, ParentID: 230, Type: seed.MenuButton, Title: "用户-查询", Permission: "GET:/api/v1/sys/user/page;GET:/api/v1/sys/user/{id}", Sort: 1},
	{ID: 232, ParentID: 230, Type: seed.MenuButton, Title: "用户-新增", Permission: "POST:/api/v1/sys/user", Sort: 2},
	{ID: 233, ParentID: 230, Type: seed.MenuButton, Title: "用户-更新", Permission: "PUT:/api/v1/sys/user/{id}", Sort: 3},
	{ID: 234, ParentID: 230, Type: seed.MenuButton, Title: "用户-删除", Permission: "DELETE:/api/v1/sys/user/{id};POST:/api/v1/sys/user/batch-delete", Sort: 4},
	{ID: 235, ParentID: 230, Type: seed.MenuButton, Title: "用户-重置密码", Permission: "PUT:/api/v1/sys/user/{id}/password", Sort: 5},
	{ID: 236, ParentID: 230, Type: seed.MenuButton, Title: "用户-启用停用", Permission: "PUT:/api/v1/sys/user/{id}/enabled", Sort: 6},
	{ID: 237, ParentID: 230, Type: seed.MenuButton, Title: "用户-导入", Permission: "POST:/api/v1/sys/user/import/preview;POST:/api/v1/sys/user/import/validate;POST:/api/v1/sys/user/import/error-report;POST:/api/v1/sys/user/import/commit", Sort: 7},
	{ID: 238, ParentID: 230, Type: seed.MenuButton, Title: "用户-导出", Permission: "GET:/api/v1/sys/user/export", Sort: 8},
}

// Module returns the area as a kernel module.
// accounts is the login service (Kernel.Auth).
func Module(accounts Accounts) module.Module {
	return module.Module{Name: Name, Menus: menus, Recycle: recycleKinds, Forgets: forgets, Routes: func(d *module.Deps, api *route.Group) error {
		s := NewService(d, accounts)
		mount(api, s, d.Config.API.MaxPageSize)
		mountSheets(api, NewImporter(s, dict.New(d)), bind.Caller[datascope.Caller](s.scopes.RequestCaller))
		return nil
	}}
}
