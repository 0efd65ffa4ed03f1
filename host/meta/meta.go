// Package meta serves the anonymous error-code catalog
// (GET /api/v1/meta/error-codes), module "Meta", and seeds the console's
// error-catalog page (menu 390) that reads it.
package meta

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// ModuleName is the name Api:DisabledModules uses to switch the catalog off.
const ModuleName = "Meta"

// menus is the console's error-catalog page under 系统运维 (300). It has no
// buttons: the catalog needs no permission code, so granting the page is
// what shows it in a user's sidebar.
var menus = []seed.Menu{
	{ID: 390, ParentID: 300, Type: seed.MenuPage, Title: "错误码", Path: "/system/errorcode", Component: "system/errorcode/index", Icon: "ph:warning-octagon-duotone", Sort: 9},
}

// Module returns the catalog as a kernel module.
func Module() module.Module {
	return module.Module{Name: ModuleName, Menus: menus, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	catalog := d.Catalog
	api.Group("/meta").Get("/error-codes", route.Anonymous, func(c fiber.Ctx) error {
		return envelope.OK(c, catalog.Entries())
	}).Doc("Error-code catalog", nil, []errcode.Entry{})
	return nil
}
