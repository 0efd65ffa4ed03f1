package monitor

import (
	"context"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Monitor"

// menus are the seeded page and button (wire contract §5.2) under the
// 系统运维 catalog (300).
var menus = []seed.Menu{
	{ID: 370, ParentID: 300, Type: seed.MenuPage, Title: "服务器监控", Path: "/system/monitor", Component: "system/monitor/index", Icon: "ph:pulse-duotone", Sort: 7},
	{ID: 371, ParentID: 370, Type: seed.MenuButton, Title: "服务器监控-查询", Permission: "GET:/api/v1/sys/monitor/server", Sort: 1},
}

// Module returns the server monitor as a kernel module.
func Module() module.Module {
	return module.Module{Name: Name, Menus: menus, Routes: routes}
}

func routes(d *module.Deps, api *route.Group) error {
	s := service{hashStats: d.HashStats}
	api.Get("/sys/monitor/server", route.Permission, bind.Read(s.Server)).Doc("Server snapshot", nil, ServerInfo{})
	return nil
}

// service takes server snapshots.
type service struct {
	hashStats func() password.Stats
}

// Server returns the snapshot, with the password hashing pool's counters;
// the 500 ms sampling wait ends early (with the context's error) when the
// request's context is cancelled.
func (s service) Server(ctx context.Context) (ServerInfo, error) {
	info, err := Snapshot(ctx)
	if err != nil {
		return ServerInfo{}, err
	}
	if s.hashStats != nil {
		st := s.hashStats()
		info.PasswordHashing = &st
	}
	return info, nil
}
