// Package dict is a kernel feature area: Dictionaries (/api/v1/sys/dict).
//
// The enabled items of a type are served through the cache entry
// "dict:<typeCode>"; every change through this package drops the entry of
// each type it touches (Invalidate), so it is visible on the next request.
package dict

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
const Name = "Dict"

// menus are the seeded menu entries of this area (wire contract §5.2 rows
// 320-328).
var menus = []seed.Menu{
	{ID: 320, ParentID: 300, Type: seed.MenuPage, Title: "字典管理", Path: "/system/dict", Component: "system/dict/index", Icon: "ph:book-open-text-duotone", Sort: 2},
	{ID: 321, ParentID: 320, Type: seed.MenuButton, Title: "字典类型-查询", Permission: "GET:/api/v1/sys/dict/type/page;GET:/api/v1/sys/dict/type/{id}", Sort: 1},
	{ID: 322, ParentID: 320, Type: seed.MenuButton, Title: "字典类型-新增", Permission: "POST:/api/v1/sys/dict/type", Sort: 2},
	{ID: 323, ParentID: 320, Type: seed.MenuButton, Title: "字典类型-修改", Permission: "PUT:/api/v1/sys/dict/type/{id}", Sort: 3},
	{ID: 324, ParentID: 320, Type: seed.MenuButton, Title: "字典类型-删除", Permission: "DELETE:/api/v1/sys/dict/type/{id};POST:/api/v1/sys/dict/type/batch-delete", Sort: 4},
	{ID: 325, ParentID: 320, Type: seed.MenuButton, Title: "字典项-查询", Permission: "GET:/api/v1/sys/dict/item/page", Sort: 5},
	{ID: 326, ParentID: 320, Type: seed.MenuButton, Title: "字典项-新增", Permission: "POST:/api/v1/sys/dict/item", Sort: 6},
	{ID: 327, ParentID: 320, Type: seed.MenuButton, Title: "字典项-修改", Permission: "PUT:/api/v1/sys/dict/item/{id}", Sort: 7},
	{ID: 328, ParentID: 320, Type: seed.MenuButton, Title: "字典项-删除", Permission: "DELETE:/api/v1/sys/dict/item/{id};POST:/api/v1/sys/dict/item/batch-delete", Sort: 8},
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
	h := &handler{
		svc: &Service{
			Client: d.Client, Store: d.Store, Events: d.Events,
			TTL: time.Duration(d.Config.Service.Cache.PermissionMinutes) * time.Minute,
		},
		maxPageSize: d.Config.API.MaxPageSize,
	}
	op := func(r *route.Route) { r.OpLog = true }

	t := api.Group("/sys/dict/type")
	t.Get("/page", route.Permission, h.typePage).Doc("Dictionary type page", nil, request.PagedList[Type]{})
	t.Get("/{id}", route.Permission, h.getType).Doc("Dictionary type detail", nil, Type{})
	op(t.Post("", route.Permission, h.addType).Doc("Add dictionary type", TypeInput{}, int64(0)))
	op(t.Put("/{id}", route.Permission, h.updateType).Doc("Update dictionary type", TypeInput{}, true))
	op(t.Delete("/{id}", route.Permission, h.deleteType).Doc("Delete dictionary type and its items", nil, true))
	op(t.Post("/batch-delete", route.Permission, h.batchDeleteTypes).Doc("Delete dictionary types and their items", IDs{}, true))

	api.Get("/sys/dict/items/{typeCode}", route.Session, h.items).Doc("Enabled items of a dictionary", nil, []Item{})

	i := api.Group("/sys/dict/item")
	i.Get("/page", route.Permission, h.itemPage).Doc("Dictionary item page", nil, request.PagedList[Item]{})
	op(i.Post("", route.Permission, h.addItem).Doc("Add dictionary item", ItemInput{}, int64(0)))
	op(i.Put("/{id}", route.Permission, h.updateItem).Doc("Update dictionary item", ItemInput{}, true))
	op(i.Delete("/{id}", route.Permission, h.deleteItem).Doc("Delete dictionary item", nil, true))
	op(i.Post("/batch-delete", route.Permission, h.batchDeleteItems).Doc("Delete dictionary items", IDs{}, true))
	return nil
}

func userID(c fiber.Ctx) (int64, error) {
	p, ok := authn.From(c)
	if !ok {
		return 0, errcode.New(errcode.TokenInvalid)
	}
	return p.UserID, nil
}

func (h *handler) typePage(c fiber.Ctx) error {
	p, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	items, total, err := h.svc.TypePage(c.Context(), request.Query(c, "Code"), request.Query(c, "Name"), p)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(p, total, items))
}

func (h *handler) getType(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	out, err := h.svc.GetType(c.Context(), id)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) addType(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	var in TypeInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	id, err := h.svc.AddType(c.Context(), in, uid)
	if err != nil {
		return err
	}
	return envelope.OK(c, id)
}

func (h *handler) updateType(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in TypeInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if err := h.svc.UpdateType(c.Context(), id, in, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) deleteType(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if err := h.svc.DeleteTypes(c.Context(), []int64{id}, true, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) batchDeleteTypes(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	ids, err := readIDs(c)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteTypes(c.Context(), ids, false, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) items(c fiber.Ctx) error {
	out, err := h.svc.Items(c.Context(), request.Param(c, "typeCode"))
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) itemPage(c fiber.Ctx) error {
	p, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	items, total, err := h.svc.ItemPage(c.Context(), request.Query(c, "TypeCode"), p)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(p, total, items))
}

func (h *handler) addItem(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	var in ItemInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	id, err := h.svc.AddItem(c.Context(), in, uid)
	if err != nil {
		return err
	}
	return envelope.OK(c, id)
}

func (h *handler) updateItem(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in ItemInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if err := h.svc.UpdateItem(c.Context(), id, in, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) deleteItem(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if err := h.svc.DeleteItems(c.Context(), []int64{id}, true, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func readIDs(c fiber.Ctx) ([]int64, error) {
	var in IDs
	if err := request.JSON(c, &in); err != nil {
		return nil, err
	}
	ids := make([]int64, len(in.IDs))
	for i, v := range in.IDs {
		ids[i] = int64(v)
	}
	return ids, nil
}

func (h *handler) batchDeleteItems(c fiber.Ctx) error {
	uid, err := userID(c)
	if err != nil {
		return err
	}
	ids, err := readIDs(c)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteItems(c.Context(), ids, false, uid); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
