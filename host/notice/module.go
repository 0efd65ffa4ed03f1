// Package notice is a kernel feature area: Notices (/api/v1/sys/notice,
// wire contract §4.11), module name Notice.
//
// Read state without one row per receiver: a publication writes the notice
// and one row per listed role or user (none for All); a user's read state
// is a read-all watermark (one row per user, sys_notice_watermark: every
// notice with an id up to it is read) plus one sys_notice_read row per
// notice read one by one above the watermark. Read-all moves the
// watermark and drops the user's read rows below it. Who receives a notice
// addressed to roles is resolved when it is read, from the user's current
// live, enabled roles. See docs/developers/realtime.md.
package notice

import (
	"context"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Notice"

// menus are the seeded entries of this area (wire contract §5.2 rows
// 350-354).
var menus = []seed.Menu{
	{ID: 350, ParentID: 300, Type: seed.MenuPage, Title: "消息通知", Path: "/system/notice", Component: "system/notice/index", Icon: "ph:bell-ringing-duotone", Sort: 5},
	{ID: 351, ParentID: 350, Type: seed.MenuButton, Title: "通知-查询", Permission: "GET:/api/v1/sys/notice/page", Sort: 1},
	{ID: 352, ParentID: 350, Type: seed.MenuButton, Title: "通知-发布", Permission: "POST:/api/v1/sys/notice", Sort: 2},
	{ID: 354, ParentID: 350, Type: seed.MenuButton, Title: "通知-删除", Permission: "DELETE:/api/v1/sys/notice/{id}", Sort: 4},
}

// Module returns the area as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes, Forgets: forgets}
}

func routes(d *module.Deps, api *route.Group) error {
	var holds Holds
	if d.Perms != nil {
		holds = d.Perms.Has
	}
	svc := NewService(d.Client, d.Events, d.Routes, holds)
	who := bind.Caller[datascope.Caller](d.Scopes().RequestCaller)
	maxPageSize := d.Config.API.MaxPageSize

	g := api.Group("/sys/notice")
	g.Post("", route.Permission, bind.Create(who, svc.Publish)).Doc("Publish notice", Input{}, int64(0))
	g.Get("/page", route.Permission, bind.PageAs(who, maxPageSize, readFilter, svc.Page)).Doc("Notice page", nil, request.PagedList[Notice]{}).
		Paged("Title", "Type:int64", "OnlyUnread:bool")
	g.Delete("/{id}", route.Permission, bind.Remove(who, svc.Delete)).Doc("Delete notice", nil, true)
	g.Get("/mine", route.Session, bind.PageAs(bind.UserID, maxPageSize, readFilter, svc.Mine)).Doc("My notices", nil, request.PagedList[MineItem]{}).
		Paged("Title", "Type:int64", "OnlyUnread:bool")
	g.Get("/unread-count", route.Session, bind.ReadAs(bind.UserID, svc.UnreadCount)).Doc("My unread notice count", nil, 0)
	g.Put("/{id}/read", route.Session, bind.ReadIDAs(bind.UserID, func(ctx context.Context, userID, id int64) (bool, error) {
		return true, svc.Read(ctx, userID, id)
	})).Doc("Mark a notice read", nil, true)
	g.Put("/read-all", route.Session, bind.ReadAs(bind.UserID, func(ctx context.Context, userID int64) (bool, error) {
		return true, svc.ReadAll(ctx, userID)
	})).Doc("Mark every notice read", nil, true)
	return nil
}

// readFilter reads Title, Type and OnlyUnread (the latter for mine only).
func readFilter(c fiber.Ctx) (Filter, error) {
	f := Filter{Title: request.Query(c, "Title")}
	t, err := request.QueryInt64(c, "Type")
	if err != nil {
		return f, err
	}
	f.Type = t
	only, err := request.QueryBool(c, "OnlyUnread")
	if err != nil {
		return f, err
	}
	f.OnlyUnread = only != nil && *only
	return f, nil
}
