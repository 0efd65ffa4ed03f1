// Package dashboard serves the workbench summary (GET /dashboard/summary,
// wire contract §4.10): counts of roles, users, permission-carrying menu
// nodes and online sessions, and the logins and active users of the last
// seven days. Every figure is one indexed query (sys_login_log.create_time,
// sys_session's live-session index).
package dashboard

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysloginlog"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/session"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Dashboard"

// Days is the length of the trends.
const Days = 7

// Summary is the contract's workbench summary.
type Summary struct {
	Roles            int      `json:"roles"`
	Users            int      `json:"users"`
	Perms            int      `json:"perms"`
	OnlineSessions   int      `json:"onlineSessions"`
	TrendDays        []string `json:"trendDays"`
	TrendLogins      []int    `json:"trendLogins"`
	TrendActiveUsers []int    `json:"trendActiveUsers"`
}

// Service computes the summary.
type Service struct {
	client   *ent.Client
	sessions *session.Service
	now      func() time.Time
}

// NewService returns the service.
func NewService(client *ent.Client, sessions *session.Service) *Service {
	return &Service{client: client, sessions: sessions, now: time.Now}
}

// Module returns the dashboard as a kernel module (any signed-in user).
func Module() module.Module {
	return module.Module{Name: Name, Routes: func(d *module.Deps, api *route.Group) error {
		s := NewService(d.Client, d.Sessions)
		api.Group("/dashboard").Get("/summary", route.Session, bind.Read(s.Summary)).Doc("Workbench summary", nil, Summary{})
		return nil
	}}
}

// Summary counts live roles and users, menu nodes carrying a permission
// code, online sessions, and per day of the last seven (server time,
// today included, "MM-dd") the successful logins and the distinct users
// who logged in.
func (s *Service) Summary(ctx context.Context) (*Summary, error) {
	var out Summary
	var err error
	if out.Roles, err = s.client.SysRole.Query().Where(sysrole.IsDelete(false)).Count(ctx); err != nil {
		return nil, err
	}
	if out.Users, err = s.client.SysUser.Query().Where(sysuser.IsDelete(false)).Count(ctx); err != nil {
		return nil, err
	}
	if out.Perms, err = s.client.SysMenu.Query().
		Where(sysmenu.IsDelete(false), sysmenu.PermissionNEQ("")).Count(ctx); err != nil {
		return nil, err
	}
	if _, out.OnlineSessions, err = s.sessions.Online(ctx, session.OnlineFilter{Limit: 1}); err != nil {
		return nil, err
	}
	now := s.now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	out.TrendDays = make([]string, Days)
	out.TrendLogins = make([]int, Days)
	out.TrendActiveUsers = make([]int, Days)
	for i := range Days {
		from := today.AddDate(0, 0, i-(Days-1))
		to := from.AddDate(0, 0, 1)
		out.TrendDays[i] = from.Format("01-02")
		q := s.client.SysLoginLog.Query().Where(sysloginlog.Success(true), sysloginlog.CreateTimeGTE(from), sysloginlog.CreateTimeLT(to))
		if out.TrendLogins[i], err = q.Clone().Count(ctx); err != nil {
			return nil, err
		}
		if out.TrendActiveUsers[i], err = q.Where(sysloginlog.UserIDNotNil()).Unique(true).Select(sysloginlog.FieldUserID).Count(ctx); err != nil {
			return nil, err
		}
	}
	return &out, nil
}
