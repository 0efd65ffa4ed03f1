package role

import (
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// mount binds /sys/role to s.
func mount(api *route.Group, s *Service, maxPageSize int) {
	who := bind.Caller[datascope.Caller](s.scopes.RequestCaller)
	g := api.Group("/sys/role")
	g.Get("/page", route.Permission, bind.Page(maxPageSize, bind.Query("Name"), s.Page)).Doc("Role page", nil, request.PagedList[Role]{}).Paged("Name")
	g.Get("/{id}", route.Permission, bind.ReadID(s.Get)).Doc("Role detail", nil, Role{})
	g.Post("/add", route.Permission, bind.Create(who, s.Add)).NeedsReauth().Doc("Add a role", Input{}, int64(0))
	g.Put("/{id}", route.Permission, bind.Change(who, s.Update)).NeedsReauth().Doc("Update a role", Input{}, true)
	g.Delete("/{id}", route.Permission, bind.Remove(who, s.Delete)).NeedsReauth().Doc("Delete a role", nil, true)
	g.Post("/batch-delete", route.Permission, bind.Apply(who, s.BatchDelete)).NeedsReauth().Doc("Delete roles", IDsInput{}, true)
	g.Get("/{id}/menus", route.Permission, bind.ReadID(s.Menus)).Doc("Menus granted to a role", nil, []int64{})
	g.Put("/menu", route.Permission, bind.Apply(who, s.SetMenus)).NeedsReauth().Doc("Grant menus to a role", MenusInput{}, true)
	g.Get("/{id}/datascope", route.Permission, bind.ReadID(s.DataScope)).Doc("Data scope of a role", nil, DataScope{})
	g.Put("/datascope", route.Permission, bind.Apply(who, s.SetDataScope)).NeedsReauth().Doc("Set the data scope of a role", DataScopeInput{}, true)
	g.Get("/{id}/users", route.Permission, bind.ReadIDAs(who, s.Users)).Doc("Users holding a role", nil, []int64{})
	g.Put("/users", route.Permission, bind.Apply(who, s.SetUsers)).NeedsReauth().Doc("Set the users holding a role", UsersInput{}, true)
}
