package role

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// handler is the HTTP side of the service.
type handler struct {
	svc         *Service
	maxPageSize int
}

func (h *handler) mount(api *route.Group) {
	g := api.Group("/sys/role")
	g.Get("/page", route.Permission, h.page).Doc("Role page", nil, request.PagedList[Role]{})
	g.Get("/{id}", route.Permission, h.get).Doc("Role detail", nil, Role{})
	g.Post("/add", route.Permission, h.add).Doc("Add a role", Input{}, int64(0))
	g.Put("/{id}", route.Permission, h.update).Doc("Update a role", Input{}, true)
	g.Delete("/{id}", route.Permission, h.delete).Doc("Delete a role", nil, true)
	g.Post("/batch-delete", route.Permission, h.batchDelete).Doc("Delete roles", IDsInput{}, true)
	g.Get("/{id}/menus", route.Permission, h.menus).Doc("Menus granted to a role", nil, []int64{})
	g.Put("/menu", route.Permission, h.setMenus).Doc("Grant menus to a role", MenusInput{}, true)
	g.Get("/{id}/datascope", route.Permission, h.dataScope).Doc("Data scope of a role", nil, DataScope{})
	g.Put("/datascope", route.Permission, h.setDataScope).Doc("Set the data scope of a role", DataScopeInput{}, true)
	g.Get("/{id}/users", route.Permission, h.users).Doc("Users holding a role", nil, []int64{})
	g.Put("/users", route.Permission, h.setUsers).Doc("Set the users holding a role", UsersInput{}, true)
}

func (h *handler) caller(c fiber.Ctx) (datascope.Caller, error) {
	return h.svc.scopes.RequestCaller(c)
}

func (h *handler) page(c fiber.Ctx) error {
	page, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	items, total, err := h.svc.Page(c.Context(), request.Query(c, "Name"), page)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(page, total, items))
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

func (h *handler) add(c fiber.Ctx) error {
	var in Input
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	id, err := h.svc.Add(c.Context(), who, in)
	if err != nil {
		return err
	}
	return envelope.OK(c, id)
}

func (h *handler) update(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in Input
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	if err := h.svc.Update(c.Context(), who, id, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) delete(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	if err := h.svc.Delete(c.Context(), who, id); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) batchDelete(c fiber.Ctx) error {
	var in IDsInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	ids, err := distinct(in.IDs, "ids")
	if err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	if err := h.svc.BatchDelete(c.Context(), who, ids); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) menus(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	out, err := h.svc.Menus(c.Context(), id)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) setMenus(c fiber.Ctx) error {
	var in MenusInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetMenus(c.Context(), who, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) dataScope(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	out, err := h.svc.DataScope(c.Context(), id)
	if err != nil {
		return err
	}
	if out == nil {
		return envelope.OK(c, nil)
	}
	return envelope.OK(c, out)
}

func (h *handler) setDataScope(c fiber.Ctx) error {
	var in DataScopeInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetDataScope(c.Context(), who, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) users(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	out, err := h.svc.Users(c.Context(), who, id)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) setUsers(c fiber.Ctx) error {
	var in UsersInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetUsers(c.Context(), who, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
