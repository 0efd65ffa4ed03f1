// Package recycle is a kernel feature area: the recycle bin
// (/api/v1/sys/recycle/{type}/*), over the soft-deleted types the modules
// declare (module.Module.Recycle, module.RecycleKind).
//
// A page lists the deleted rows of one type, newest deletion first. A
// restore sets is_delete and delete_key back to their live values (see
// ent/schema/mixin.go): a unique key taken meanwhile answers 42021, a child
// whose parent is deleted or gone answers 42032. A purge removes the row and
// the rows that depend on it. The owning module runs its own authority
// rules and drops its own caches; the bin routes the {type}, checks the
// area codes the kind declares (41007) and offers the kinds a kit (kit.go).
// docs/developers/recycle.md describes each type.
package recycle

import (
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Recycle"

// menus are the seeded menu entries of this area (wire contract §5.2):
// the 回收站 page under the 系统运维 catalog (300) and its three buttons.
var menus = []seed.Menu{
	{ID: 360, ParentID: 300, Type: seed.MenuPage, Title: "回收站", Path: "/system/recycle", Component: "system/recycle/index", Icon: "ph:recycle-duotone", Sort: 6},
	{ID: 361, ParentID: 360, Type: seed.MenuButton, Title: "回收站-查询", Permission: "GET:/api/v1/sys/recycle/{type}/page", Sort: 1},
	{ID: 365, ParentID: 360, Type: seed.MenuButton, Title: "回收站-还原", Permission: "POST:/api/v1/sys/recycle/{type}/{id}/restore", Sort: 5},
	{ID: 364, ParentID: 360, Type: seed.MenuButton, Title: "回收站-彻底删除", Permission: "DELETE:/api/v1/sys/recycle/{type}/{id}", Sort: 4},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	maxPage := 200
	if d.Config != nil && d.Config.API.MaxPageSize > 0 {
		maxPage = d.Config.API.MaxPageSize
	}
	mount(api, NewService(d), maxPage)
	return nil
}
