// Package dashboard serves the workbench summary (GET /dashboard/summary,
// wire contract §4.10): counts of roles, users, permission-carrying menu
// nodes and online sessions, and the logins and active users of the last
// seven days. Every figure is one indexed query (sys_login_log.create_time,
// sys_session's live-session index).
//
// Each figure is only for a caller holding the read code of its area
// (Codes); the others are null. The users and online-session counts are
// within the caller's data scope, as the user and session lists are.
package dashboard

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/sysloginlog"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/session"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Dashboard"

// Days is the length of the trends.
const Days = 7

// Summary is the contract's workbench summary. A figure whose area's read
// code the caller lacks is null (Codes); trendDays is always there.
type Summary struct {
	Roles            *int     `json:"roles"`
	Users            *int     `json:"users"`
	Perms            *int     `json:"perms"`
	OnlineSessions   *int     `json:"onlineSessions"`
	TrendDays        []string `json:"trendDays"`
	TrendLogins      []int    `json:"trendLogins"`
	TrendActiveUsers []int    `json:"trendActiveUsers"`
}

// The read codes the figures need: roles the role list, users the user
// list, perms the menu tree, online sessions the online list, the login
// trends the login log.
const (
	CodeRoles    = "GET:/api/v1/sys/role/page"
	CodeUsers    = "GET:/api/v1/sys/user/page"
	CodePerms    = "GET:/api/v1/sys/menu/tree"
	CodeSessions = "GET:/api/v1/sys/session/online"
	CodeLogins   = "GET:/api/v1/sys/log/login/page"
)

// Viewer is who asks for the summary: the super-admin sees every figure;
// anyone else those whose code Holds, users and sessions within Scope.
type Viewer struct {
	SuperAdmin bool
	Scope      datascope.Scope
	Holds      func(code string) bool
}

func (v Viewer) may(code string) bool { return v.SuperAdmin || (v.Holds != nil && v.Holds(code)) }

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

// Module returns the dashboard as a kernel module (any signed-in user; the
// figures follow the caller's codes and data scope).
func Module() module.Module {
	return module.Module{Name: Name, Routes: func(d *module.Deps, api *route.Group) error {
		s := NewService(d.Client, d.Sessions)
		scopes := d.Scopes()
		api.Group("/dashboard").Get("/summary", route.Session, func(c fiber.Ctx) error {
			who, err := scopes.RequestCaller(c)
			if err != nil {
				return err
			}
			ctx := c.Context()
			var codes []string
			if !who.SuperAdmin {
				if codes, err = d.Perms.Codes(ctx, who.UserID); err != nil {
					return err
				}
			}
			out, err := s.Summary(ctx, Viewer{SuperAdmin: who.SuperAdmin, Scope: who.Scope, Holds: func(code string) bool {
				return holds(codes, code)
			}})
			if err != nil {
				return err
			}
			return envelope.OK(c, out)
		}).Doc("Workbench summary", nil, Summary{})
		return nil
	}}
}

func holds(codes []string, code string) bool {
	code = authz.NormalizeCode(code)
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

func count(n int, err error) (*int, error) {
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// Summary counts, for v, live roles and users (in v's scope), menu nodes
// carrying a permission code, online sessions (of users in v's scope),
// and per day of the last seven (server time, today included, "MM-dd")
// the successful logins and the distinct users who logged in. A figure v
// may not see stays nil.
func (s *Service) Summary(ctx context.Context, v Viewer) (*Summary, error) {
	var out Summary
	var err error
	if v.may(CodeRoles) {
		if out.Roles, err = count(s.client.SysRole.Query().Where(sysrole.IsDelete(false)).Count(ctx)); err != nil {
			return nil, err
		}
	}
	var scope []predicate.SysUser
	if !v.SuperAdmin {
		scope = v.Scope.Users()
	}
	if v.may(CodeUsers) {
		if out.Users, err = count(s.client.SysUser.Query().Where(sysuser.IsDelete(false)).Where(scope...).Count(ctx)); err != nil {
			return nil, err
		}
	}
	if v.may(CodePerms) {
		if out.Perms, err = count(s.client.SysMenu.Query().
			Where(sysmenu.IsDelete(false), sysmenu.PermissionNEQ("")).Count(ctx)); err != nil {
			return nil, err
		}
	}
	if v.may(CodeSessions) {
		_, n, err := s.sessions.Online(ctx, session.OnlineFilter{Limit: 1, Users: scope})
		if err != nil {
			return nil, err
		}
		out.OnlineSessions = &n
	}
	now := s.now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	out.TrendDays = make([]string, Days)
	for i := range Days {
		out.TrendDays[i] = today.AddDate(0, 0, i-(Days-1)).Format("01-02")
	}
	if !v.may(CodeLogins) {
		return &out, nil
	}
	out.TrendLogins = make([]int, Days)
	out.TrendActiveUsers = make([]int, Days)
	for i := range Days {
		from := today.AddDate(0, 0, i-(Days-1))
		to := from.AddDate(0, 0, 1)
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
