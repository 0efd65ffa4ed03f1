package org

import (
	"strings"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// mountOrgs binds /sys/org to s.
func mountOrgs(api *route.Group, s *orgService) {
	o := api.Group("/sys/org")
	o.Get("/list", route.Permission, bind.Read(s.List)).Doc("Organisations", nil, []SysOrg{})
	o.Get("/{id}", route.Permission, bind.ReadID(s.Get)).Doc("Organisation", nil, SysOrg{})
	o.Post("/add", route.Permission, bind.Create(bind.UserID, s.Add)).Doc("Add an organisation", OrgInput{}, int64(0))
	o.Put("/{id}", route.Permission, bind.Change(bind.UserID, s.Update)).Doc("Update an organisation", OrgInput{}, true)
	o.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, s.Delete)).Doc("Delete an organisation", nil, true)
	o.Post("/{id}/copy", route.Permission, copyHandler(s)).Doc("Copy an organisation subtree", CopyInput{}, int64(0))
}

// copyHandler binds POST /sys/org/{id}/copy, whose body is optional.
func copyHandler(s *orgService) fiber.Handler {
	return func(c fiber.Ctx) error {
		userID, err := bind.UserID(c)
		if err != nil {
			return err
		}
		id, err := request.ParamInt64(c, "id")
		if err != nil {
			return err
		}
		var in CopyInput
		if len(strings.TrimSpace(string(c.Body()))) > 0 {
			if err := request.JSON(c, &in); err != nil {
				return err
			}
		}
		root, err := s.Copy(c.Context(), userID, id, in)
		if err != nil {
			return err
		}
		return envelope.OK(c, root)
	}
}

// mountPositions binds /sys/position to s.
func mountPositions(api *route.Group, s *positionService, maxPageSize int) {
	p := api.Group("/sys/position")
	p.Get("/page", route.Permission, bind.Page(maxPageSize, bind.Query("Name"), s.Page)).Doc("Positions", nil, request.PagedList[SysPosition]{}).Paged("Name")
	p.Get("/{id}", route.Permission, bind.ReadID(s.Get)).Doc("Position", nil, SysPosition{})
	p.Post("/add", route.Permission, bind.Create(bind.UserID, s.Add)).Doc("Add a position", PositionInput{}, int64(0))
	p.Put("/{id}", route.Permission, bind.Change(bind.UserID, s.Update)).Doc("Update a position", PositionInput{}, true)
	p.Delete("/{id}", route.Permission, bind.Remove(bind.UserID, s.Delete)).Doc("Delete a position", nil, true)
}
