package job

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Job"

// Module returns the /sys/job operations over e (nil when only the static
// parts of the modules are read: then there are no routes).
func Module(e *Engine) module.Module {
	m := module.Module{Name: Name, Recycle: recycleKinds}
	if e != nil {
		m.Routes = func(d *module.Deps, api *route.Group) error { return routes(d, api, e) }
		m.JobHandlers = func(*module.Deps) []module.JobHandler { return e.KernelHandlers() }
	}
	return m
}

func routes(d *module.Deps, api *route.Group, e *Engine) error {
	svc := NewService(d.Client, e, d.Events)
	maxPage := d.Config.API.MaxPageSize
	g := api.Group("/sys/job")
	g.Get("/page", route.Permission, bind.Page(maxPage, readFilter, svc.Page)).Doc("Job page", nil, request.PagedList[Job]{}).
		Paged("Name", "Status:int64", "HandlerKind:int64")
	g.Post("", route.Permission, bind.Create(bind.UserID, svc.Add)).NeedsReauth().Doc("Add job", Input{}, int64(0))
	g.Put("/{id}", route.Permission, bind.Change(bind.UserID, svc.Update)).NeedsReauth().Doc("Update job", Input{}, true)
	g.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, svc.Delete)).NeedsReauth().Doc("Delete job", nil, true)
	g.Post("/batch-delete", route.Permission, bind.Apply(bind.UserID, svc.BatchDelete)).NeedsReauth().Doc("Delete jobs", IDs{}, true)
	g.Put("/{id}/enabled", route.Permission, func(c fiber.Ctx) error {
		id, err := request.ParamInt64(c, "id")
		if err != nil {
			return err
		}
		enabled, err := request.QueryBool(c, "enabled")
		if err != nil {
			return err
		}
		if enabled == nil {
			return request.Invalid("enabled")
		}
		if err := svc.SetEnabled(c.Context(), id, *enabled); err != nil {
			return err
		}
		return envelope.OK(c, true)
	}).Doc("Pause or resume a job (query enabled=true|false)", nil, true).Queries("enabled:bool")
	g.Post("/{id}/run", route.Permission, bind.ReadIDAs(bind.UserID, svc.Run)).NeedsReauth().Doc("Run a job now (true once the run started; its row is in log/page)", nil, true)
	g.Post("/preview-cron", route.Session, func(c fiber.Ctx) error {
		var in PreviewInput
		if err := request.JSON(c, &in); err != nil {
			return err
		}
		out, err := svc.PreviewCron(c.Context(), in)
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}).Doc("Preview a cron expression", PreviewInput{}, PreviewOutput{})
	g.Get("/handlers", route.Permission, bind.Read(svc.Handlers)).Doc("Compiled handlers", nil, HandlerList{})
	g.Get("/log/page", route.Permission, bind.Page(maxPage, readLogFilter, svc.LogPage)).Doc("Run log page", nil, request.PagedList[Log]{}).
		Paged("JobId:int64", "RunStatus:int64", "StartFrom:date-time", "StartTo:date-time", "FireInstanceId")
	g.Post("/log/{id}/kill", route.Permission, bind.ReadID(svc.Kill)).Doc("Kill a run", nil, true)
	g.Post("/log/clear", route.Permission, bind.Create(bind.UserID, svc.Clear)).NeedsReauth().Doc("Clear the run log", ClearInput{}, 0)
	g.Get("/dashboard", route.Permission, bind.Read(svc.Dashboard)).Doc("Job dashboard", nil, Dashboard{})
	return nil
}

func readFilter(c fiber.Ctx) (Filter, error) {
	f := Filter{Name: request.Query(c, "Name")}
	var err error
	if f.Status, err = request.QueryInt64(c, "Status"); err != nil {
		return f, err
	}
	if f.HandlerKind, err = request.QueryInt64(c, "HandlerKind"); err != nil {
		return f, err
	}
	return f, nil
}

func readLogFilter(c fiber.Ctx) (LogFilter, error) {
	f := LogFilter{FireInstanceID: request.Query(c, "FireInstanceId")}
	var err error
	if f.JobID, err = request.QueryInt64(c, "JobId"); err != nil {
		return f, err
	}
	if f.RunStatus, err = request.QueryInt64(c, "RunStatus"); err != nil {
		return f, err
	}
	if f.StartFrom, err = request.QueryTime(c, "StartFrom"); err != nil {
		return f, err
	}
	if f.StartTo, err = request.QueryTime(c, "StartTo"); err != nil {
		return f, err
	}
	return f, nil
}
