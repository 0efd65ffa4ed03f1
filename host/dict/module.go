// Package dict is a kernel feature area: Dictionaries (/api/v1/sys/dict).
//
// The enabled items of a type are served through the cache entry
// "dict:<typeCode>"; every change through this package drops the entry of
// each type it touches (Invalidate), so it is visible on the next request.
package dict

import (
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/envelope"
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
	return module.Module{Name: Name, Menus: menus, Routes: routes, Recycle: recycleKinds}
}

// New returns the dictionary service over the kernel's database and cache
// (other areas read dictionaries through it: the user import's drop-downs).
func New(d *module.Deps) *Service {
	return &Service{
		client: d.Client, store: d.Store, events: d.Events,
		ttl: time.Duration(d.Config.Service.Cache.PermissionMinutes) * time.Minute,
	}
}

func routes(d *module.Deps, api *route.Group) error {
	svc := New(d)
	maxPageSize := d.Config.API.MaxPageSize

	t := api.Group("/sys/dict/type")
	t.Get("/page", route.Permission, bind.Page(maxPageSize, readTypeFilter, svc.TypePage)).Doc("Dictionary type page", nil, request.PagedList[Type]{}).Paged("Code", "Name")
	t.Get("/{id}", route.Permission, bind.ReadID(svc.GetType)).Doc("Dictionary type detail", nil, Type{})
	t.Post("", route.Permission, bind.Create(bind.UserID, svc.AddType)).Doc("Add dictionary type", TypeInput{}, int64(0))
	t.Put("/{id}", route.Permission, bind.Change(bind.UserID, svc.UpdateType)).Doc("Update dictionary type", TypeInput{}, true)
	t.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, svc.DeleteType)).Doc("Delete dictionary type and its items", nil, true)
	t.Post("/batch-delete", route.Permission, bind.Apply(bind.UserID, svc.DeleteTypeBatch)).Doc("Delete dictionary types and their items", IDs{}, true)

	api.Get("/sys/dict/items/{typeCode}", route.Session, func(c fiber.Ctx) error {
		out, err := svc.Items(c.Context(), request.Param(c, "typeCode"))
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}).Doc("Enabled items of a dictionary", nil, []Item{})

	i := api.Group("/sys/dict/item")
	i.Get("/page", route.Permission, bind.Page(maxPageSize, bind.Query("TypeCode"), svc.ItemPage)).Doc("Dictionary item page", nil, request.PagedList[Item]{}).Paged("TypeCode")
	i.Post("", route.Permission, bind.Create(bind.UserID, svc.AddItem)).Doc("Add dictionary item", ItemInput{}, int64(0))
	i.Put("/{id}", route.Permission, bind.Change(bind.UserID, svc.UpdateItem)).Doc("Update dictionary item", ItemInput{}, true)
	i.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, svc.DeleteItem)).Doc("Delete dictionary item", nil, true)
	i.Post("/batch-delete", route.Permission, bind.Apply(bind.UserID, svc.DeleteItemBatch)).Doc("Delete dictionary items", IDs{}, true)
	return nil
}

// readTypeFilter reads the type page's filter from the query string.
func readTypeFilter(c fiber.Ctx) (TypeFilter, error) {
	return TypeFilter{Code: request.Query(c, "Code"), Name: request.Query(c, "Name")}, nil
}
