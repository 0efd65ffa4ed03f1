// Package cacheadmin is the cache-clearing area (/api/v1/sys/cache): four
// actions for out-of-band database edits. No endpoint lists keys or reads
// values.
package cacheadmin

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Cache"

var menus = []seed.Menu{
	{ID: 380, ParentID: 300, Type: seed.MenuPage, Title: "缓存管理", Path: "/system/cache", Component: "system/cache/index", Icon: "ph:database-duotone", Sort: 8},
	{ID: 385, ParentID: 380, Type: seed.MenuButton, Title: "缓存-清空权限", Permission: "POST:/api/v1/sys/cache/flush-auth", Sort: 5},
	{ID: 386, ParentID: 380, Type: seed.MenuButton, Title: "缓存-清空字典", Permission: "POST:/api/v1/sys/cache/flush-dict", Sort: 6},
	{ID: 387, ParentID: 380, Type: seed.MenuButton, Title: "缓存-清空配置", Permission: "POST:/api/v1/sys/cache/flush-config", Sort: 7},
	{ID: 388, ParentID: 380, Type: seed.MenuButton, Title: "缓存-重建门户", Permission: "POST:/api/v1/sys/cache/rebuild-portal", Sort: 8},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	g := api.Group("/sys/cache")
	g.Post("/flush-auth", route.Permission, func(c fiber.Ctx) error {
		// Every user's permission set and data scope; the count is the
		// number of users whose cached entries were dropped.
		perms, err := d.Perms.InvalidateAll(c.Context())
		if err != nil {
			return err
		}
		scopes, err := datascope.InvalidateAll(c.Context(), d.Store)
		if err != nil {
			return err
		}
		if _, err := d.BumpPortal(c.Context()); err != nil {
			return err
		}
		return envelope.OK(c, max(perms, scopes))
	}).Doc("Clear the permission and data-scope cache", nil, 0)
	g.Post("/flush-dict", route.Permission, func(c fiber.Ctx) error {
		n, err := dict.InvalidateAll(c.Context(), d.Store, d.Events)
		if err != nil {
			return err
		}
		return envelope.OK(c, n)
	}).Doc("Clear the dictionary cache", nil, 0)
	g.Post("/flush-config", route.Permission, func(c fiber.Ctx) error {
		n, err := d.Settings.ChangedAll(c.Context())
		if err != nil {
			return err
		}
		return envelope.OK(c, n)
	}).Doc("Clear the configuration cache (site info included)", nil, 0)
	g.Post("/rebuild-portal", route.Permission, func(c fiber.Ctx) error {
		gen, err := d.BumpPortal(c.Context())
		if err != nil {
			return err
		}
		return envelope.OK(c, gen)
	}).Doc("Start a new portal menu generation", nil, int64(0))
	return nil
}
