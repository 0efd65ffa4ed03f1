package user

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
	g := api.Group("/sys/user")
	g.Get("/page", route.Permission, h.page).Doc("User page", nil, request.PagedList[Item]{})
	g.Get("/{id}", route.Permission, h.get).Doc("User detail", nil, Detail{})
	g.Post("", route.Permission, h.create).Doc("Add a user", AddInput{}, CreateOutput{})
	g.Put("/{id}", route.Permission, h.update).Doc("Update a user", UpdateInput{}, true)
	g.Delete("/{id}", route.Permission, h.delete).Doc("Delete a user", nil, true)
	g.Post("/batch-delete", route.Permission, h.batchDelete).Doc("Delete users", IDsInput{}, true)
	g.Put("/{id}/password", route.Permission, h.resetPassword).Doc("Reset a user's password", PasswordInput{}, "")
	g.Put("/{id}/enabled", route.Permission, h.setEnabled).Doc("Enable or disable a user", EnabledInput{}, true)
}

// caller returns the authenticated administrator with their data scope.
func (h *handler) caller(c fiber.Ctx) (datascope.Caller, error) {
	return h.svc.scopes.RequestCaller(c)
}

// callerAndID also reads the {id} path parameter.
func (h *handler) callerAndID(c fiber.Ctx) (datascope.Caller, int64, error) {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return datascope.Caller{}, 0, err
	}
	who, err := h.caller(c)
	return who, id, err
}

func (h *handler) page(c fiber.Ctx) error {
	page, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	f := Filter{Account: request.Query(c, "Account"), Name: request.Query(c, "Name")}
	if f.OrgID, err = request.QueryInt64(c, "OrgId"); err != nil {
		return err
	}
	if f.RoleID, err = request.QueryInt64(c, "RoleId"); err != nil {
		return err
	}
	if f.Enabled, err = request.QueryBool(c, "Enabled"); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	items, total, err := h.svc.Page(c.Context(), who, f, page)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(page, total, items))
}

func (h *handler) get(c fiber.Ctx) error {
	who, id, err := h.callerAndID(c)
	if err != nil {
		return err
	}
	out, err := h.svc.Get(c.Context(), who, id)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) create(c fiber.Ctx) error {
	var in AddInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	out, err := h.svc.Create(c.Context(), who, in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *handler) update(c fiber.Ctx) error {
	var in UpdateInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who, id, err := h.callerAndID(c)
	if err != nil {
		return err
	}
	if err := h.svc.Update(c.Context(), who, id, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) delete(c fiber.Ctx) error {
	who, id, err := h.callerAndID(c)
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
	ids := make([]int64, 0, len(in.IDs))
	for _, id := range in.IDs {
		if id <= 0 {
			return request.Invalid("ids")
		}
		ids = append(ids, int64(id))
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

func (h *handler) resetPassword(c fiber.Ctx) error {
	var in PasswordInput
	// An empty body means "generate one".
	if len(c.Body()) > 0 {
		if err := request.JSON(c, &in); err != nil {
			return err
		}
	}
	who, id, err := h.callerAndID(c)
	if err != nil {
		return err
	}
	plain, err := h.svc.ResetPassword(c.Context(), who, id, in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, plain)
}

func (h *handler) setEnabled(c fiber.Ctx) error {
	var in EnabledInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if in.Enabled == nil {
		return request.Invalid("enabled")
	}
	who, id, err := h.callerAndID(c)
	if err != nil {
		return err
	}
	if err := h.svc.SetEnabled(c.Context(), who, id, *in.Enabled); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
