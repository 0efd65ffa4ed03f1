// Package user is a kernel feature area: Users (/api/v1/sys/user).
package user

import (
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "User"

// menus are the seeded menu entries of this area.
var menus = []seed.Menu{}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	return nil
}
