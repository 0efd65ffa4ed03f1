// Package configcenter is a kernel feature area: The config center (/api/v1/sys/config).
//
// Every write goes through the settings service's Changed (host/sysconfig),
// which drops the cached keys and the site info built from them, so a change
// takes effect on the next request for every reader of d.Settings (login
// captcha, external-login switches, rate limits, ...).
package configcenter

import (
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Config"

const (
	pageCodes   = "GET:/api/v1/sys/config/page;GET:/api/v1/sys/config/{id};GET:/api/v1/sys/config/value/{key};GET:/api/v1/auth/external/providers/all"
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
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

type handler struct {
	svc         *Service
	maxPageSize int
}

func routes(d *module.Deps, api *route.Group) error {
	ttl := time.Duration(d.Config.Service.Cache.PermissionMinutes) * time.Minute
	h := &handler{
		svc: &Service{
			Client: d.Client, Store: d.Store, Settings: d.Settings,
			CaptchaForced: d.Config.Service.Security.Captcha.Enabled, TTL: ttl,
		},
		maxPageSize: d.Config.API.MaxPageSize,
	}
	op := func(r *route.Route) { r.OpLog = true }
	g := api.Group("/sys/config")
	g.Get("/page", route.Permission, h.page).Doc("Config page", nil, request.PagedList[Config]{})
	g.Get("/site", route.Anonymous, h.site).Doc("Site info", nil, SiteInfo{})
	g.Get("/value/{key}", route.Permission, h.value).Doc("Config value (null when unset)", nil, "")
	g.Get("/{id}", route.Permission, h.get).Doc("Config detail", nil, Config{})
	op(g.Put("/batch", route.Permission, h.batch).Doc("Save config values", []BatchItem{}, true))
	op(g.Post("", route.Permission, h.add).Doc("Add config", Input{}, int64(0)))
	op(g.Put("/{id}", route.Permission, h.update).Doc("Update config", Input{}, true))
	op(g.Delete("/{id}", route.Permission, h.delete).Doc("Delete config", nil, true))
	return nil
}

func userID(c fiber.Ctx) (int64, error) {
	p, ok := authn.From(c)
	if !ok {
		return 0, errcode.New(errcode.TokenInvalid)
	}
	return p.UserID, nil
}

func (h *handler) page(c fiber.Ctx) error {
	p, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	f := Filter{
		ConfigKey:          request.Query(c, "ConfigKey"),
		Name:               request.Query(c, "Name"),
		GroupCode:          request.Query(c, "GroupCode"),
		ExcludedGroupCodes: request.QueryAll(c, "ExcludedGroupCodes"),
	}
	items, total, err := h.svc.Page(c.Context(), f, p)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(p, total, items))
}

func (h *handler) get(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	out, err := h.svc.Get(c.Context(), id)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) value(c fiber.Ctx) error {
	v, err := h.svc.Value(c.Context(), request.Param(c, "key"))
	if err != nil {
		return err
	}
	return envelope.OK(c, v)
}

func (h *handler) site(c fiber.Ctx) error {
	out, err := h.svc.Site(c.Context())
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) batch(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	var items []BatchItem
	if err := request.JSON(c, &items); err != nil {
		return err
	}
	if err := h.svc.Batch(c.Context(), items, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) add(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	var in Input
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	id, err := h.svc.Add(c.Context(), in, uid)
	if err != nil {
		return err
	}
	return envelope.OK(c, id)
}

func (h *handler) update(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in Input
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if err := h.svc.Update(c.Context(), id, in, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) delete(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if err := h.svc.Delete(c.Context(), id, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
