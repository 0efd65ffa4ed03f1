// Package inventory is a runnable example of a business application built on
// the kernel: one module with its own routes, a menu page with a button that
// carries the route's permission code, and its own error-code enumeration.
//
// Run it with: go run ./examples/inventory/cmd/inventory serve --environment Development
package inventory

import (
	"strconv"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// The module's error codes live in the consumer segment (60000 and up).
const (
	ItemNotFound errcode.Code = 60001
	OutOfStock   errcode.Code = 60002
)

// Errors is the module's enumeration; it appears in the error catalog with
// source "InventoryError".
var Errors = errcode.Enum{Name: "InventoryError", Members: []errcode.Member{
	{Code: ItemNotFound, Name: "ItemNotFound", MsgKey: "error.inventory.itemNotFound"},
	{Code: OutOfStock, Name: "OutOfStock", MsgKey: "error.inventory.outOfStock"},
}}

type item struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Stock int    `json:"stock"`
}

var items = map[int64]item{1: {1, "Widget", 12}, 2: {2, "Gadget", 0}}

// Module returns the inventory module.
func Module() host.Module {
	return host.Module{
		Name:       "Inventory",
		ErrorCodes: []errcode.Enum{Errors},
		Menus: []seed.Menu{
			{ID: 1000, Type: seed.MenuCatalog, Title: "库存", Icon: "lucide:boxes", Sort: 10, ModuleID: 2},
			{ID: 1010, ParentID: 1000, Type: seed.MenuPage, Title: "库存查询", Path: "/inventory/items", Component: "inventory/items/index", Sort: 1},
			{ID: 1011, ParentID: 1010, Type: seed.MenuButton, Title: "库存-查询", Permission: route.PermissionCode("GET", host.APIPrefix+"/inventory/items/{id}"), Sort: 1},
		},
		Routes: func(_ *module.Deps, api *route.Group) error {
			g := api.Group("/inventory")
			// Anonymous: a public stock check.
			g.Get("/stock/{id}", route.Anonymous, stock).Title = "Stock check"
			// Permission-gated: the code GET:/api/v1/inventory/items/{id} is
			// derived from the route; the menu button above grants it.
			g.Get("/items/{id}", route.Permission, getItem).Title = "Item detail"
			return nil
		},
	}
}

func lookup(c fiber.Ctx) (item, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return item{}, errcode.New(errcode.RequestInvalid).With("field", "id")
	}
	it, ok := items[id]
	if !ok {
		return item{}, errcode.New(ItemNotFound)
	}
	return it, nil
}

func stock(c fiber.Ctx) error {
	it, err := lookup(c)
	if err != nil {
		return err
	}
	if it.Stock == 0 {
		return errcode.New(OutOfStock)
	}
	return envelope.OK(c, fiber.Map{"id": it.ID, "inStock": it.Stock})
}

func getItem(c fiber.Ctx) error {
	it, err := lookup(c)
	if err != nil {
		return err
	}
	return envelope.OK(c, it)
}
