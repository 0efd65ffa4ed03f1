// Package role is a kernel feature area: Roles and data scopes (/api/v1/sys/role).
package role

import (
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Role"

// menus are the seeded menu entries of this area.
var menus = []seed.Menu{}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	return nil
}
