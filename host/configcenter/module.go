// Package configcenter is a kernel feature area: The config center (/api/v1/sys/config).
//
// Every write goes through the settings service's Changed (host/sysconfig),
// which drops the cached keys and the site info built from them, so a change
// takes effect on the next request for every reader of d.Settings (login
// captcha, external-login switches, rate limits, ...).
package configcenter

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Config"

const (
	pageCodes   = "GET:/api/v1/sys/config/page;GET:/api/v1/sys/config/schema;GET:/api/v1/sys/config/{id};GET:/api/v1/sys/config/value/{key};GET:/api/v1/auth/external/providers/all"
	addCodes    = "POST:/api/v1/sys/config"
	updateCodes = "PUT:/api/v1/sys/config/{id};PUT:/api/v1/sys/config/batch"
	deleteCodes = "DELETE:/api/v1/sys/config/{id}"
)

// menus are the seeded menu entries of this area (wire contract §5.2 rows
// 310-314; the MFA buttons 315-318 belong to the MFA area).
var menus = []seed.Menu{
	{ID: 310, ParentID: 300, Type: seed.MenuPage, Title: "系统配置", Path: "/system/config", Component: "system/config/index", Icon: "ph:sliders-horizontal-duotone", Sort: 1},
	{ID: 311, ParentID: 310, Type: seed.MenuButton, Title: "系统配置-查询", Permission: pageCodes, Sort: 1},
	{ID: 312, ParentID: 310, Type: seed.MenuButton, Title: "系统配置-新增", Permission: addCodes, Sort: 2},
	{ID: 313, ParentID: 310, Type: seed.MenuButton, Title: "系统配置-修改", Permission: updateCodes, Sort: 3},
	{ID: 314, ParentID: 310, Type: seed.MenuButton, Title: "系统配置-删除", Permission: deleteCodes, Sort: 4},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes, Recycle: recycleKinds}
}

func routes(d *module.Deps, api *route.Group) error {
	svc := NewService(d.Client, d.Store, d.Settings, d.Config)
	maxPageSize := d.Config.API.MaxPageSize
	g := api.Group("/sys/config")
	g.Get("/page", route.Permission, bind.Page(maxPageSize, readFilter, svc.Page)).Doc("Config page", nil, request.PagedList[Config]{}).
		Paged("ConfigKey", "Name", "GroupCode", "ExcludedGroupCodes:[]string")
	g.Get("/site", route.Anonymous, bind.Read(svc.Site)).Doc("Site info", nil, SiteInfo{})
	g.Get("/schema", route.Permission, func(c fiber.Ctx) error {
		return envelope.OK(c, schema(d.Settings.Registry()))
	}).Doc("Config key types (the settings registry)", nil, []SchemaEntry{})
	g.Get("/value/{key}", route.Permission, func(c fiber.Ctx) error {
		v, err := svc.Value(c.Context(), request.Param(c, "key"))
		if err != nil {
			return err
		}
		return envelope.OK(c, v)
	}).Doc("Config value (null when unset)", nil, "")
	g.Get("/{id}", route.Permission, bind.ReadID(svc.Get)).Doc("Config detail", nil, Config{})
	g.Put("/batch", route.Permission, bind.Apply(bind.UserID, svc.Batch)).NeedsReauth().Doc("Save config values", []BatchItem{}, true)
	g.Post("", route.Permission, bind.Create(bind.UserID, svc.Add)).NeedsReauth().Doc("Add config", Input{}, int64(0))
	g.Put("/{id}", route.Permission, bind.Change(bind.UserID, svc.Update)).NeedsReauth().Doc("Update config", Input{}, true)
	g.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, svc.Delete)).NeedsReauth().Doc("Delete config", nil, true)
	return nil
}

// readFilter reads the config page's filter from the query string.
func readFilter(c fiber.Ctx) (Filter, error) {
	return Filter{
		ConfigKey:          request.Query(c, "ConfigKey"),
		Name:               request.Query(c, "Name"),
		GroupCode:          request.Query(c, "GroupCode"),
		ExcludedGroupCodes: request.QueryAll(c, "ExcludedGroupCodes"),
	}, nil
}
