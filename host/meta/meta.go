// Package meta serves the anonymous error-code catalog
// (GET /api/v1/meta/error-codes), module "Meta".
package meta

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// ModuleName is the name Api:DisabledModules uses to switch the catalog off.
const ModuleName = "Meta"

// Module returns the catalog as a kernel module.
func Module() module.Module {
	return module.Module{Name: ModuleName, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	catalog := d.Catalog
	api.Group("/meta").Get("/error-codes", route.Anonymous, func(c fiber.Ctx) error {
		return envelope.OK(c, catalog.Entries())
	}).Doc("Error-code catalog", nil, []errcode.Entry{})
	return nil
}
