package user

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// mount binds /sys/user to s.
func mount(api *route.Group, s *Service, maxPageSize int) {
	who := bind.Caller[datascope.Caller](s.scopes.RequestCaller)
	g := api.Group("/sys/user")
	g.Get("/page", route.Permission, bind.PageAs(who, maxPageSize, pageFilter, s.Page)).Doc("User page", nil, request.PagedList[Item]{}).
		Paged("Account", "Name", "OrgId:int64", "RoleId:int64", "Enabled:bool")
	g.Get("/{id}", route.Permission, bind.ReadIDAs(who, s.Get)).Doc("User detail", nil, Detail{})
	g.Post("", route.Permission, noStore(bind.Create(who, s.Create))).NeedsReauth().Doc("Add a user", AddInput{}, CreateOutput{})
	g.Put("/{id}", route.Permission, bind.Change(who, s.Update)).NeedsReauth().Doc("Update a user", UpdateInput{}, true)
	g.Delete("/{id}", route.Permission, bind.Remove(who, s.Delete)).NeedsReauth().Doc("Delete a user", nil, true)
	g.Post("/batch-delete", route.Permission, bind.Apply(who, s.BatchDelete)).NeedsReauth().Doc("Delete users", IDsInput{}, true)
	// An empty password body means "generate one".
	g.Put("/{id}/password", route.Permission, noStore(bind.ChangeOptional(who, s.ResetPassword))).NeedsReauth().Doc("Reset a user's password", PasswordInput{}, "")
	g.Put("/{id}/enabled", route.Permission, bind.Change(who, s.SetEnabled)).NeedsReauth().Doc("Enable or disable a user", EnabledInput{}, true)
}

// pageFilter reads the page filters from the query string.
func pageFilter(c fiber.Ctx) (Filter, error) {
	f := Filter{Account: request.Query(c, "Account"), Name: request.Query(c, "Name")}
	var err error
	if f.OrgID, err = request.QueryInt64(c, "OrgId"); err != nil {
		return f, err
	}
	if f.RoleID, err = request.QueryInt64(c, "RoleId"); err != nil {
		return f, err
	}
	if f.Enabled, err = request.QueryBool(c, "Enabled"); err != nil {
		return f, err
	}
	return f, nil
}

// noStore marks a successful answer of h (one carrying a password)
// Cache-Control: no-store.
func noStore(h fiber.Handler) fiber.Handler {
	return func(c fiber.Ctx) error {
		if err := h(c); err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		return nil
	}
}
