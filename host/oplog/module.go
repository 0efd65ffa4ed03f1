package oplog

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysexceptionlog"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// Name is the module name Api:DisabledModules refers to. The login-log
// endpoints belong to the login service; the operation- and exception-log
// endpoints are here.
const Name = "Log"

// Titles of the clearing actions in the operation log (wire contract §4.9).
const (
	TitleClearOpLog        = "Clear the operation log"
	TitleClearExceptionLog = "Clear the exception log"
)

// menus are the seeded pages and buttons (wire contract §5.2) under the
// 日志审计 catalog (500).
var menus = []seed.Menu{
	{ID: 520, ParentID: 500, Type: seed.MenuPage, Title: "操作日志", Path: "/system/log/op", Component: "system/log/op/index", Icon: "ph:scroll-duotone", Sort: 2},
	{ID: 521, ParentID: 520, Type: seed.MenuButton, Title: "操作日志-查询", Permission: "GET:/api/v1/sys/log/op/page", Sort: 1},
	{ID: 525, ParentID: 520, Type: seed.MenuButton, Title: "操作日志-清空", Permission: "DELETE:/api/v1/sys/log/op", Sort: 2},
	{ID: 526, ParentID: 520, Type: seed.MenuButton, Title: "操作日志-导出", Permission: "GET:/api/v1/sys/log/op/export", Sort: 3},

	{ID: 530, ParentID: 500, Type: seed.MenuPage, Title: "异常日志", Path: "/system/log/exception", Component: "system/log/exception/index", Icon: "ph:warning-octagon-duotone", Sort: 3},
	{ID: 531, ParentID: 530, Type: seed.MenuButton, Title: "异常日志-查询", Permission: "GET:/api/v1/sys/log/exception/page", Sort: 1},
	{ID: 535, ParentID: 530, Type: seed.MenuButton, Title: "异常日志-清空", Permission: "DELETE:/api/v1/sys/log/exception", Sort: 2},
}

// Module returns the log area (operation and exception logs) as a kernel
// module. Writing the logs is wired by the host (Writer.Middleware on the
// route table, Recorder.Record in the central error handler); the module
// only serves the pages and the clearing actions.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes, Retention: retention}
}

// logs serves the operation- and exception-log pages and their clearing.
type logs struct {
	client   *ent.Client
	settings *sysconfig.Service
}

func routes(d *module.Deps, api *route.Group) error {
	l := logs{client: d.Client, settings: d.Settings}
	maxPageSize := d.Config.API.MaxPageSize
	op := api.Group("/sys/log/op")
	op.Get("/page", route.Permission, bind.Page(maxPageSize, readOpFilter, l.OpPage)).Doc("Operation log", nil, request.PagedList[Item]{}).
		Paged("Title", "Path", "Success:bool", "OperatorId:int64", "StartTime:date-time", "EndTime:date-time")
	op.Delete("", route.Permission, bind.Read(l.ClearOp)).NeedsReauth().Doc(TitleClearOpLog, nil, true)
	// Exports are operation-logged explicitly (wire contract §4.9).
	op.Get("/export", route.Permission, l.export).Doc("Export the operation log (xlsx)", nil, nil).
		Queries("Title", "Path", "Success:bool", "OperatorId:int64", "StartTime:date-time", "EndTime:date-time", "columns").OpLog = true

	ex := api.Group("/sys/log/exception")
	ex.Get("/page", route.Permission, bind.Page(maxPageSize, readExceptionFilter, l.ExceptionPage)).Doc("Exception log", nil, request.PagedList[exceptionlog.Item]{}).
		Paged("Path", "ExceptionType", "StartTime:date-time", "EndTime:date-time")
	ex.Delete("", route.Permission, bind.Read(l.ClearException)).NeedsReauth().Doc(TitleClearExceptionLog, nil, true)
	return nil
}

// readOpFilter reads the operation-log page's filter from the query string.
func readOpFilter(c fiber.Ctx) (Filter, error) {
	f := Filter{Title: request.Query(c, "Title"), Path: request.Query(c, "Path"), Lang: request.Language(c)}
	var err error
	if f.Success, err = request.QueryBool(c, "Success"); err != nil {
		return f, err
	}
	if f.OperatorID, err = request.QueryInt64(c, "OperatorId"); err != nil {
		return f, err
	}
	if f.StartTime, err = request.QueryTime(c, "StartTime"); err != nil {
		return f, err
	}
	if f.EndTime, err = request.QueryTime(c, "EndTime"); err != nil {
		return f, err
	}
	return f, nil
}

// readExceptionFilter reads the exception-log page's filter from the query
// string.
func readExceptionFilter(c fiber.Ctx) (exceptionlog.Filter, error) {
	f := exceptionlog.Filter{Path: request.Query(c, "Path"), ExceptionType: request.Query(c, "ExceptionType")}
	var err error
	if f.StartTime, err = request.QueryTime(c, "StartTime"); err != nil {
		return f, err
	}
	if f.EndTime, err = request.QueryTime(c, "EndTime"); err != nil {
		return f, err
	}
	return f, nil
}

// OpPage is one page of the operation log.
func (l logs) OpPage(ctx context.Context, f Filter, p request.Page) ([]Item, int, error) {
	return Page(ctx, l.client, f, p)
}

// ClearOp empties the operation log and reports true.
func (l logs) ClearOp(ctx context.Context) (bool, error) {
	if _, err := Clear(ctx, l.client); err != nil {
		return false, err
	}
	return true, nil
}

// ExceptionPage is one page of the exception log.
func (l logs) ExceptionPage(ctx context.Context, f exceptionlog.Filter, p request.Page) ([]exceptionlog.Item, int, error) {
	return exceptionlog.Page(ctx, l.client, f, p)
}

// ClearException empties the exception log and reports true.
func (l logs) ClearException(ctx context.Context) (bool, error) {
	if _, err := exceptionlog.Clear(ctx, l.client); err != nil {
		return false, err
	}
	return true, nil
}

// retention purges the operation and exception logs for the kernel's
// log-retention job.
func retention(d *module.Deps) []module.Retention {
	return []module.Retention{
		{Name: "operation log", Purge: func(ctx context.Context, before time.Time) (int, error) {
			return d.Client.SysOpLog.Delete().Where(sysoplog.CreateTimeLT(before)).Exec(ctx)
		}},
		{Name: "exception log", Purge: func(ctx context.Context, before time.Time) (int, error) {
			return d.Client.SysExceptionLog.Delete().Where(sysexceptionlog.CreateTimeLT(before)).Exec(ctx)
		}},
	}
}
