// Package cacheadmin is the cache-clearing area (/api/v1/sys/cache): four
// actions for out-of-band database edits. No endpoint lists keys or reads
// values.
package cacheadmin

import (
	"context"

	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/host/sysconfig"
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

// service clears the kernel's caches.
type service struct {
	perms      *authz.Resolver
	store      cache.Store
	settings   *sysconfig.Service
	events     *events.Bus
	bumpPortal func(context.Context) (int64, error)
}

// FlushAuth drops every user's permission set and data scope and starts a
// new portal generation; the count is the number of users whose cached
// entries were dropped.
func (s service) FlushAuth(ctx context.Context) (int, error) {
	perms, err := s.perms.InvalidateAll(ctx)
	if err != nil {
		return 0, err
	}
	scopes, err := datascope.InvalidateAll(ctx, s.store)
	if err != nil {
		return 0, err
	}
	if _, err := s.bumpPortal(ctx); err != nil {
		return 0, err
	}
	return max(perms, scopes), nil
}

// FlushDict drops the cached dictionaries.
func (s service) FlushDict(ctx context.Context) (int, error) {
	return dict.InvalidateAll(ctx, s.store, s.events)
}

// FlushConfig drops the cached settings and site info.
func (s service) FlushConfig(ctx context.Context) (int, error) {
	return s.settings.ChangedAll(ctx)
}

// RebuildPortal starts a new portal menu generation and returns it.
func (s service) RebuildPortal(ctx context.Context) (int64, error) {
	return s.bumpPortal(ctx)
}

func routes(d *module.Deps, api *route.Group) error {
	s := service{perms: d.Perms, store: d.Store, settings: d.Settings, events: d.Events, bumpPortal: d.BumpPortal}
	g := api.Group("/sys/cache")
	g.Post("/flush-auth", route.Permission, bind.Read(s.FlushAuth)).Doc("Clear the permission and data-scope cache", nil, 0)
	g.Post("/flush-dict", route.Permission, bind.Read(s.FlushDict)).Doc("Clear the dictionary cache", nil, 0)
	g.Post("/flush-config", route.Permission, bind.Read(s.FlushConfig)).Doc("Clear the configuration cache (site info included)", nil, 0)
	g.Post("/rebuild-portal", route.Permission, bind.Read(s.RebuildPortal)).Doc("Start a new portal menu generation", nil, int64(0))
	return nil
}
