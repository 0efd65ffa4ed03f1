package oplog

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to. The login-log
// endpoints belong to the login service; the operation- and exception-log
// endpoints are here.
const Name = "Log"

// Titles of the clearing actions in the operation log (wire contract §4.9).
const (
	TitleClearOpLog        = "清空操作日志"
	TitleClearExceptionLog = "清空异常日志"
)

// menus are the seeded pages and buttons (wire contract §5.2) under the
// 日志审计 catalog (500). The export button 526 is not seeded: the export
// endpoint is not implemented.
var menus = []seed.Menu{
	{ID: 520, ParentID: 500, Type: seed.MenuPage, Title: "操作日志", Path: "/system/log/op", Component: "system/log/op/index", Icon: "ph:scroll-duotone", Sort: 2},
	{ID: 521, ParentID: 520, Type: seed.MenuButton, Title: "操作日志-查询", Permission: "GET:/api/v1/sys/log/op/page", Sort: 1},
	{ID: 525, ParentID: 520, Type: seed.MenuButton, Title: "操作日志-清空", Permission: "DELETE:/api/v1/sys/log/op", Sort: 2},

	{ID: 530, ParentID: 500, Type: seed.MenuPage, Title: "异常日志", Path: "/system/log/exception", Component: "system/log/exception/index", Icon: "ph:warning-octagon-duotone", Sort: 3},
	{ID: 531, ParentID: 530, Type: seed.MenuButton, Title: "异常日志-查询", Permission: "GET:/api/v1/sys/log/exception/page", Sort: 1},
	{ID: 535, ParentID: 530, Type: seed.MenuButton, Title: "异常日志-清空", Permission: "DELETE:/api/v1/sys/log/exception", Sort: 2},
}

// Module returns the log area (operation and exception logs) as a kernel
// module. Writing the logs is wired by the host (Writer.Middleware on the
// route table, Recorder.Record in the central error handler); the module
// only serves the pages and the clearing actions.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

type handler struct {
	client      *ent.Client
	maxPageSize int
}

func routes(d *module.Deps, api *route.Group) error {
	h := &handler{client: d.Client, maxPageSize: d.Config.API.MaxPageSize}
	op := api.Group("/sys/log/op")
	op.Get("/page", route.Permission, h.opPage).Doc("Operation log", nil, request.PagedList[Item]{})
	op.Delete("", route.Permission, h.clearOp).Doc(TitleClearOpLog, nil, true)

	ex := api.Group("/sys/log/exception")
	ex.Get("/page", route.Permission, h.exceptionPage).Doc("Exception log", nil, request.PagedList[exceptionlog.Item]{})
	ex.Delete("", route.Permission, h.clearException).Doc(TitleClearExceptionLog, nil, true)
	return nil
}

func (h *handler) opPage(c fiber.Ctx) error {
	page, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	f := Filter{Title: request.Query(c, "Title"), Path: request.Query(c, "Path")}
	if f.Success, err = request.QueryBool(c, "Success"); err != nil {
		return err
	}
	if f.OperatorID, err = request.QueryInt64(c, "OperatorId"); err != nil {
		return err
	}
	if f.StartTime, err = request.QueryTime(c, "StartTime"); err != nil {
		return err
	}
	if f.EndTime, err = request.QueryTime(c, "EndTime"); err != nil {
		return err
	}
	items, total, err := Page(c.Context(), h.client, f, page)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(page, total, items))
}

func (h *handler) clearOp(c fiber.Ctx) error {
	if _, err := Clear(c.Context(), h.client); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) exceptionPage(c fiber.Ctx) error {
	page, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	f := exceptionlog.Filter{Path: request.Query(c, "Path"), ExceptionType: request.Query(c, "ExceptionType")}
	if f.StartTime, err = request.QueryTime(c, "StartTime"); err != nil {
		return err
	}
	if f.EndTime, err = request.QueryTime(c, "EndTime"); err != nil {
		return err
	}
	items, total, err := exceptionlog.Page(c.Context(), h.client, f, page)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(page, total, items))
}

func (h *handler) clearException(c fiber.Ctx) error {
	if _, err := exceptionlog.Clear(c.Context(), h.client); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
