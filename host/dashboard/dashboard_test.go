package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/dashboard"
	"github.com/adminkernel/kernel/host/kerneltest"
)

type summary struct {
	Roles            int      `json:"roles"`
	Users            int      `json:"users"`
	Perms            int      `json:"perms"`
	OnlineSessions   int      `json:"onlineSessions"`
	TrendDays        []string `json:"trendDays"`
	TrendLogins      []int    `json:"trendLogins"`
	TrendActiveUsers []int    `json:"trendActiveUsers"`
}

// partial is the summary as a caller without every code sees it.
type partial struct {
	Roles            *int     `json:"roles"`
	Users            *int     `json:"users"`
	Perms            *int     `json:"perms"`
	OnlineSessions   *int     `json:"onlineSessions"`
	TrendDays        []string `json:"trendDays"`
	TrendLogins      []int    `json:"trendLogins"`
	TrendActiveUsers []int    `json:"trendActiveUsers"`
}

func get(t *testing.T, k *kerneltest.Kernel, tok string) summary {
	t.Helper()
	r := k.Do("GET", "/api/v1/dashboard/summary", tok, nil).Expect(t, "summary", 200, 0)
	var s summary
	r.Decode(t, &s)
	return s
}

// TestSummary: the figures are what the test created: counts of live
// roles, users and permission-carrying menu nodes, online sessions, and
// the logins and distinct users of each of the last seven days.
func TestSummary(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	c := k.Ent()
	admin := k.Admin()
	s0 := get(t, k, admin)
	if want := c.SysRole.Query().Where(sysrole.IsDelete(false)).CountX(ctx); s0.Roles != want || want == 0 {
		t.Fatalf("roles = %d, want %d", s0.Roles, want)
	}
	if want := c.SysUser.Query().Where(sysuser.IsDelete(false)).CountX(ctx); s0.Users != want {
		t.Fatalf("users = %d, want %d", s0.Users, want)
	}
	if want := c.SysMenu.Query().Where(sysmenu.IsDelete(false), sysmenu.PermissionNEQ("")).CountX(ctx); s0.Perms != want || want == 0 {
		t.Fatalf("perms = %d, want %d", s0.Perms, want)
	}

	// k.User adds a user, a role and a button carrying the code; two
	// logins add two sessions and two logins of one user today; a failed
	// login counts for nothing.
	uid := k.User("dash", "Dash#Passw0rd1", "GET:/api/v1/ping")
	k.Login("dash", "Dash#Passw0rd1")
	tok := k.Login("dash", "Dash#Passw0rd1").AccessToken
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "dash", "password": "wrong"})
	// Two days ago: three logins of one user and one of another, one
	// failure; eight days ago is outside the window.
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	one := int64(1)
	for i, at := range []time.Time{today.AddDate(0, 0, -2).Add(9 * time.Hour), today.AddDate(0, 0, -2).Add(10 * time.Hour), today.AddDate(0, 0, -2).Add(23 * time.Hour)} {
		c.SysLoginLog.Create().SetAccount("dash").SetSuccess(true).SetResultCode(0).SetUserID(uid).SetLoginMethod("password").SetCreateTime(at.Add(time.Duration(i) * time.Second)).ExecX(ctx)
	}
	c.SysLoginLog.Create().SetAccount("superAdmin").SetSuccess(true).SetResultCode(0).SetUserID(one).SetLoginMethod("password").SetCreateTime(today.AddDate(0, 0, -2).Add(time.Hour)).ExecX(ctx)
	c.SysLoginLog.Create().SetAccount("dash").SetSuccess(false).SetResultCode(40001).SetLoginMethod("password").SetCreateTime(today.AddDate(0, 0, -2).Add(time.Hour)).ExecX(ctx)
	c.SysLoginLog.Create().SetAccount("dash").SetSuccess(true).SetResultCode(0).SetUserID(uid).SetLoginMethod("password").SetCreateTime(today.AddDate(0, 0, -8)).ExecX(ctx)

	// A signed-in user without the areas' read codes sees no figure.
	var p partial
	k.Do("GET", "/api/v1/dashboard/summary", tok, nil).Expect(t, "summary without codes", 200, 0).Decode(t, &p)
	if p.Roles != nil || p.Users != nil || p.Perms != nil || p.OnlineSessions != nil || p.TrendLogins != nil ||
		p.TrendActiveUsers != nil || len(p.TrendDays) != 7 {
		t.Fatalf("summary without codes = %+v, want only the days", p)
	}
	s1 := get(t, k, admin)
	if s1.Roles != s0.Roles+1 || s1.Users != s0.Users+1 || s1.Perms != s0.Perms+1 || s1.OnlineSessions != s0.OnlineSessions+2 {
		t.Fatalf("after: %+v, before: %+v", s1, s0)
	}
	if len(s1.TrendDays) != 7 || s1.TrendDays[6] != now.Format("01-02") || s1.TrendDays[0] != today.AddDate(0, 0, -6).Format("01-02") {
		t.Fatalf("trendDays = %v", s1.TrendDays)
	}
	// Today: the admin's login (before s0) and dash's two.
	wantLogins := []int{0, 0, 0, 0, 4, 0, s0.TrendLogins[6] + 2}
	wantActive := []int{0, 0, 0, 0, 2, 0, s0.TrendActiveUsers[6] + 1}
	for i := range 7 {
		if s1.TrendLogins[i] != wantLogins[i] || s1.TrendActiveUsers[i] != wantActive[i] {
			t.Fatalf("trend logins %v active %v, want %v %v", s1.TrendLogins, s1.TrendActiveUsers, wantLogins, wantActive)
		}
	}
	if s0.TrendLogins[6] != 1 || s0.TrendActiveUsers[6] != 1 {
		t.Fatalf("today before = %d logins %d users, want the admin's one", s0.TrendLogins[6], s0.TrendActiveUsers[6])
	}
	k.Do("GET", "/api/v1/dashboard/summary", "", nil).Expect(t, "anonymous", 401, 40006)
}

// TestSummaryFollowsCodesAndScope: each figure needs its area's read code;
// the users and online-session counts of a scoped caller are within the
// caller's data scope.
func TestSummaryFollowsCodesAndScope(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	c := k.Ent()
	admin := k.Admin()
	org := c.SysOrg.Create().SetName("dash org").SetCode("dash-org").SetParentID(1).SaveX(ctx).ID
	const pw = "Dash#Passw0rd1"
	uid := k.User("scoped", pw, dashboard.CodeUsers, dashboard.CodeSessions)
	c.SysUser.UpdateOneID(uid).SetOrgID(org).ExecX(ctx)
	c.SysUser.Create().SetAccount("colleague").SetName("colleague").SetOrgID(org).ExecX(ctx)
	role := c.SysUserRole.Query().Where(sysuserrole.UserID(uid)).OnlyX(ctx).RoleID
	k.Do("PUT", "/api/v1/sys/role/datascope", admin, map[string]any{"roleId": role, "scopeType": 3}).Expect(t, "own org scope", 200, 0)
	tok := k.Login("scoped", pw).AccessToken

	var p partial
	k.Do("GET", "/api/v1/dashboard/summary", tok, nil).Expect(t, "scoped summary", 200, 0).Decode(t, &p)
	if p.Users == nil || *p.Users != 2 {
		t.Fatalf("users of an own-org caller = %v, want 2 (the org's)", p.Users)
	}
	if p.OnlineSessions == nil || *p.OnlineSessions != 1 {
		t.Fatalf("online sessions of an own-org caller = %v, want 1 (the caller's; not the admin's)", p.OnlineSessions)
	}
	if p.Roles != nil || p.Perms != nil || p.TrendLogins != nil {
		t.Fatalf("figures without their codes: %+v", p)
	}
	if all := c.SysUser.Query().Where(sysuser.IsDelete(false)).CountX(ctx); all <= 2 {
		t.Fatalf("the test needs users outside the org (have %d)", all)
	}
}
