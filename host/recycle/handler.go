package recycle

import (
	"context"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// mount binds /sys/recycle to s.
func mount(api *route.Group, s *Service, maxPageSize int) {
	g := api.Group("/sys/recycle")
	g.Get("/{type}/page", route.Permission, s.pageHandler(maxPageSize)).
		Doc("Recycle bin page", nil, request.PagedList[Item]{}).Paged()
	g.Post("/{type}/{id}/restore", route.Permission, s.actionHandler(s.Restore)).NeedsReauth().
		Doc("Restore from the recycle bin", nil, true)
	g.Delete("/{type}/{id}", route.Permission, s.actionHandler(s.Purge)).NeedsReauth().
		Doc("Purge from the recycle bin", nil, true)
}

// pageHandler binds GET {type}/page: the type (42022), the caller, the
// paging parameters.
func (s *Service) pageHandler(maxPageSize int) fiber.Handler {
	return func(c fiber.Ctx) error {
		typ := c.Params("type")
		if _, err := s.kind(typ); err != nil {
			return err
		}
		who, err := s.scopes.RequestCaller(c)
		if err != nil {
			return err
		}
		p, err := request.Paging(c, maxPageSize)
		if err != nil {
			return err
		}
		items, total, err := s.Page(c.Context(), who, typ, p)
		if err != nil {
			return err
		}
		return envelope.OK(c, request.NewPagedList(p, total, items))
	}
}

// actionHandler binds restore and purge: the type (42022), the caller, the
// {id}; the data is true.
func (s *Service) actionHandler(fn func(ctx context.Context, who datascope.Caller, typ string, id int64) error) fiber.Handler {
	return func(c fiber.Ctx) error {
		typ := c.Params("type")
		if _, err := s.kind(typ); err != nil {
			return err
		}
		who, err := s.scopes.RequestCaller(c)
		if err != nil {
			return err
		}
		id, err := request.ParamInt64(c, "id")
		if err != nil {
			return err
		}
		if err := fn(c.Context(), who, typ, id); err != nil {
			return err
		}
		return envelope.OK(c, true)
	}
}
