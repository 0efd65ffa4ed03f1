// Package inventory is a runnable example of a business application built on
// the kernel, one module that owns everything of its feature in this
// folder:
//
//   - business resources (resources.go): products with a category
//     dictionary and org-scoped stock levels, whose API, menus, recycle bin,
//     import, export and console pages come from a description;
//   - a page of its own (console.go): a stock dashboard the console loads at
//     run time;
//   - an approval flow (approval.go): a notice whose button approves a stock
//     adjustment, consumed once;
//   - hand-written routes over an in-memory item store with a menu page and
//     buttons carrying the routes' permission codes, its own error codes, a
//     runtime setting, a recycle-bin type, a cleanup job handler and its
//     share of a user's purge (module.Forget).
//
// Adding it to a kernel is one line (Options.Modules).
//
// Run it with: go run ./examples/inventory/cmd/inventory serve --environment Development
package inventory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/resource"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// The module's error codes live in the consumer segment (60000 and up).
const (
	ItemNotFound errcode.Code = 60001
	OutOfStock   errcode.Code = 60002
	// 60003 AdjustmentNotFound and 60004 StockLevelNotFound: approval.go.
)

// Errors is the module's enumeration; it appears in the error catalog with
// source "InventoryError".
var Errors = errcode.Enum{Name: "InventoryError", Members: []errcode.Member{
	{Code: ItemNotFound, Name: "ItemNotFound", MsgKey: "error.inventory.itemNotFound"},
	{Code: OutOfStock, Name: "OutOfStock", MsgKey: "error.inventory.outOfStock"},
	{Code: AdjustmentNotFound, Name: "AdjustmentNotFound", MsgKey: "error.inventory.adjustmentNotFound"},
	{Code: StockLevelNotFound, Name: "StockLevelNotFound", MsgKey: "error.inventory.stockLevelNotFound"},
}}

const (
	// RecycleType is the module's type in the recycle bin
	// (/api/v1/sys/recycle/inventory-item/...).
	RecycleType = "inventory-item"
	// KeyRecycleDays is the module's runtime setting: days a deleted item
	// stays in the recycle bin before the cleanup job purges it.
	KeyRecycleDays = "inventory.recycleDays"
	// HandlerPurge is the module's compiled job handler.
	HandlerPurge = "inventory.purgeDeleted"
)

var (
	codeList   = route.PermissionCode("GET", host.APIPrefix+"/inventory/items")
	codeItem   = route.PermissionCode("GET", host.APIPrefix+"/inventory/items/{id}")
	codeDelete = route.PermissionCode("DELETE", host.APIPrefix+"/inventory/items/{id}")
)

type item struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Stock     int        `json:"stock"`
	deletedAt *time.Time // in the recycle bin since
	deletedBy int64
}

// store holds the items of one kernel (a real module keeps its rows in its
// own tables; a map keeps the example short).
type store struct {
	mu    sync.Mutex
	now   func() time.Time
	items map[int64]*item
}

func newStore() *store {
	return &store{items: map[int64]*item{1: {ID: 1, Name: "Widget", Stock: 12}, 2: {ID: 2, Name: "Gadget"}, 3: {ID: 3, Name: "Gizmo", Stock: 3}}}
}

// live returns a copy of the live item of the {id} parameter.
func (s *store) live(c fiber.Ctx) (item, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return item{}, errcode.New(errcode.RequestInvalid).With("field", "id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	if !ok || it.deletedAt != nil {
		return item{}, errcode.New(ItemNotFound)
	}
	return *it, nil
}

// Module returns the inventory module.
func Module() host.Module { return ModuleAt(time.Now) }

// ModuleAt returns the inventory module on the clock now (tests move it).
func ModuleAt(now func() time.Time) host.Module {
	s := newStore()
	s.now = now
	return resource.Attach(host.Module{
		Name:       "Inventory",
		Dicts:      Dicts,
		ErrorCodes: []errcode.Enum{Errors},
		Menus: []seed.Menu{
			{ID: 1000, Type: seed.MenuCatalog, Title: "库存", Path: "/inventory", Icon: "lucide:boxes", Sort: 10, ModuleID: 2},
			{ID: 1010, ParentID: 1000, Type: seed.MenuPage, Title: "库存查询", Path: "/inventory/items", Component: "inventory/items/index", Sort: 1},
			{ID: 1011, ParentID: 1010, Type: seed.MenuButton, Title: "库存-查询", Permission: codeItem, Sort: 1},
			{ID: 1012, ParentID: 1010, Type: seed.MenuButton, Title: "库存-删除", Permission: codeDelete, Sort: 2},
			// A page the module ships to the console (console.go), with the
			// permission of the list it reads.
			{ID: 1020, ParentID: 1000, Type: seed.MenuPage, Title: "库存看板", Path: "/inventory/dashboard", Component: ComponentDashboard, Icon: "ph:chart-line-duotone", Sort: 2},
			{ID: 1021, ParentID: 1020, Type: seed.MenuButton, Title: "库存看板-查询", Permission: codeList, Sort: 1},
			// The approval flow's buttons on the stock levels page (approval.go).
			approvalMenus[0], approvalMenus[1],
		},
		Console: consolePages(),
		Settings: []sysconfig.Entry{{
			Key: KeyRecycleDays, Kind: sysconfig.KindInt, Min: 1, Max: 365, Default: "30", Area: "inventory",
			Description: "days a deleted inventory item stays in the recycle bin before " + HandlerPurge + " purges it",
		}},
		Routes: func(d *module.Deps, api *route.Group) error {
			g := api.Group("/inventory")
			// The approval flow of stock adjustments (approval.go).
			(&approvals{d: d, pending: map[int64]adjustment{}}).mount(g)
			// Anonymous: a public stock check.
			g.Get("/stock/{id}", route.Anonymous, s.stock).Title = "Stock check"
			// Permission-gated: the code GET:/api/v1/inventory/items/{id} is
			// derived from the route; the menu button above grants it.
			g.Get("/items/{id}", route.Permission, s.get).Title = "Item detail"
			// The stock dashboard's list (menu 1020, button 1021).
			g.Get("/items", route.Permission, s.list).Title = "Stock overview"
			// A write: in the operation log under its title, like every
			// write of a signed-in caller.
			g.Delete("/items/{id}", route.Permission, s.remove).Title = "Delete an item"
			return nil
		},
		Recycle: func(*module.Deps) []module.RecycleKind {
			return []module.RecycleKind{{
				Type: RecycleType, RestoreCodes: []string{codeDelete}, PurgeCode: codeDelete,
				Page: s.page, Restore: s.restore, Purge: s.purge,
			}}
		},
		// A purged user leaves the items they deleted: the bin shows them
		// deleted by nobody (a real module clears its column inside tx).
		Forgets: func(*module.Deps) []module.Forget {
			return []module.Forget{{Of: module.ForgetUser, What: "deleted-by of inventory items", Run: func(_ context.Context, _ *ent.Tx, id, _ int64) error {
				s.mu.Lock()
				defer s.mu.Unlock()
				for _, it := range s.items {
					if it.deletedBy == id {
						it.deletedBy = 0
					}
				}
				return nil
			}}}
		},
		JobHandlers: func(d *module.Deps) []module.JobHandler {
			return []module.JobHandler{{
				Name:        HandlerPurge,
				Description: "Purges the inventory items deleted more than " + KeyRecycleDays + " days ago",
				Run: func(ctx context.Context, _ module.JobRun) (string, error) {
					days, err := d.Settings.Int(ctx, KeyRecycleDays)
					if err != nil {
						return "", err
					}
					return fmt.Sprintf("purged %d items", s.purgeOlder(s.now().AddDate(0, 0, -days))), nil
				},
			}}
		},
	}, Products(), StockLevels())
}

func (s *store) stock(c fiber.Ctx) error {
	it, err := s.live(c)
	if err != nil {
		return err
	}
	if it.Stock == 0 {
		return errcode.New(OutOfStock)
	}
	return envelope.OK(c, fiber.Map{"id": it.ID, "inStock": it.Stock})
}

// list answers the live items by id.
func (s *store) list(c fiber.Ctx) error {
	s.mu.Lock()
	out := make([]item, 0, len(s.items))
	for _, it := range s.items {
		if it.deletedAt == nil {
			out = append(out, *it)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b item) int { return int(a.ID - b.ID) })
	return envelope.OK(c, out)
}

func (s *store) get(c fiber.Ctx) error {
	it, err := s.live(c)
	if err != nil {
		return err
	}
	return envelope.OK(c, it)
}

// remove moves an item to the recycle bin.
func (s *store) remove(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	it, err := s.live(c)
	if err != nil {
		return err
	}
	at := s.now()
	s.mu.Lock()
	s.items[it.ID].deletedAt, s.items[it.ID].deletedBy = &at, p.UserID
	s.mu.Unlock()
	return envelope.OK(c, true)
}

// page lists the deleted items, newest deletion first.
func (s *store) page(_ context.Context, _ datascope.Caller, p request.Page) ([]module.RecycleItem, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var deleted []*item
	for _, it := range s.items {
		if it.deletedAt != nil {
			deleted = append(deleted, it)
		}
	}
	slices.SortFunc(deleted, func(a, b *item) int { return b.deletedAt.Compare(*a.deletedAt) })
	from := min(p.Offset(), len(deleted))
	to := min(from+p.Size, len(deleted))
	out := make([]module.RecycleItem, 0, to-from)
	for _, it := range deleted[from:to] {
		at, by := request.EntityTime(*it.deletedAt), it.deletedBy
		row := module.RecycleItem{ID: it.ID, Name: it.Name, DeletedAt: &at}
		if by != 0 {
			row.DeletedBy = &by
		}
		out = append(out, row)
	}
	return out, len(deleted), nil
}

// inBin returns the deleted item id (42020 when it is not in the bin).
func (s *store) inBin(id int64) (*item, error) {
	it, ok := s.items[id]
	if !ok || it.deletedAt == nil {
		return nil, errcode.New(errcode.RecycleNotFound).With("id", id)
	}
	return it, nil
}

func (s *store) restore(_ context.Context, _ datascope.Caller, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.inBin(id)
	if err != nil {
		return err
	}
	it.deletedAt = nil
	return nil
}

func (s *store) purge(_ context.Context, _ datascope.Caller, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.inBin(id); err != nil {
		return err
	}
	delete(s.items, id)
	return nil
}

// purgeOlder purges the items deleted before t and says how many.
func (s *store) purgeOlder(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, it := range s.items {
		if it.deletedAt != nil && it.deletedAt.Before(t) {
			delete(s.items, id)
			n++
		}
	}
	return n
}
