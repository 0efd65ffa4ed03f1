// Package meta serves the anonymous error-code catalog
// (GET /api/v1/meta/error-codes), module "Meta".
package meta

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
)

// ModuleName is the name Api:DisabledModules uses to switch the catalog off.
const ModuleName = "Meta"

// Routes registers the catalog endpoint on the /api/v1 group.
func Routes(api *route.Group, catalog *errcode.Catalog) {
	g := api.Table().Group(ModuleName, api.Prefix()+"/meta")
	g.Get("/error-codes", route.Anonymous, func(c fiber.Ctx) error {
		return envelope.OK(c, catalog.Entries())
	}).Doc("Error-code catalog", nil, []errcode.Entry{})
}
