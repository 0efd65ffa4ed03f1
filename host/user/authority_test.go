package user_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/session"
)

const (
	cKick     = "DELETE:/api/v1/sys/session/{sessionid}"
	cRolePage = "GET:/api/v1/sys/role/page"
)

// authorityEnv is a user administrator "ua" in org 3 with scope 3 (own org
// and below: orgs 3, 4, 5) holding the user codes and force logout, and
// targets in org 4 (inside ua's data scope):
//
//   - big: holds one code more than ua;
//   - wide: holds a subset of ua's codes but data scope "all";
//   - custom: a subset, but custom scope {2, 6} (outside ua's orgs);
//   - small: a subset and scope "own org" (org 4): within ua's authority.
type authorityEnv struct {
	*env
	uaID                         int64
	ua                           string
	big, wide, custom, small     int64
	adminCodes                   []string
	delegBig, delegWide, delegOK int64
}

func authoritySetup(t *testing.T) *authorityEnv {
	e := &authorityEnv{env: setup(t)}
	e.adminCodes = append(slices.Clone(allCodes), cKick)
	e.uaID, e.ua = e.scoped("ua", 3, 3, nil, e.adminCodes...)
	e.big, _ = e.scoped("big", 4, 0, nil, append(slices.Clone(e.adminCodes), cRolePage)...)
	e.wide, _ = e.scoped("wide", 4, 1, nil, cPage)
	e.custom, _ = e.scoped("custom", 4, 5, []int64{2, 6}, cPage)
	e.small, _ = e.scoped("small", 4, 2, nil, cPage, cGet)

	// Delegatable roles: one carrying a code ua lacks, one carrying scope
	// "all", one within ua's authority (a code ua holds, scope own org).
	ctx := context.Background()
	c := e.k.Ent()
	mk := func(code string, menuCode string, scope int) int64 {
		r := c.SysRole.Create().SetName(code).SetCode(code).SetIsDelegatable(true).SaveX(ctx)
		if menuCode != "" {
			m := c.SysMenu.Create().SetType(3).SetTitle(code).SetPermission(menuCode).SaveX(ctx)
			c.SysRoleMenu.Create().SetRoleID(r.ID).SetMenuID(m.ID).ExecX(ctx)
		}
		if scope != 0 {
			c.SysRoleDataScope.Create().SetRoleID(r.ID).SetScopeType(scope).ExecX(ctx)
		}
		return r.ID
	}
	e.delegBig = mk("deleg_big", cRolePage, 0)
	e.delegWide = mk("deleg_wide", "", 1)
	e.delegOK = mk("deleg_ok", cGet, 2)
	return e
}

// sid returns the id of one of the user's active sessions (logging in when
// there is none).
func (e *authorityEnv) sid(account string, id int64) string {
	e.t.Helper()
	e.k.Login(account, userPw)
	return e.k.Ent().SysSession.Query().
		Where(syssession.UserID(id), syssession.RevokedAtIsNil()).FirstX(context.Background()).SessionID
}

// TestAuthorityActingOnUsers: a user administrator may not update, disable,
// delete, reset the password of, assign roles to or force out a user who
// holds a code they do not hold or a data scope wider than theirs (41006),
// even when the user is in their data scope; nothing is written. A user
// holding a subset is managed as before.
func TestAuthorityActingOnUsers(t *testing.T) {
	e := authoritySetup(t)
	type action struct {
		name, method, path string
		body               any
	}
	actions := func(id int64, account string) []action {
		p := fmt.Sprintf("%s/%d", base, id)
		return []action{
			{"update", "PUT", p, map[string]any{"name": "Renamed", "orgId": 4, "roleIds": e.get(e.admin, id).RoleIDs}},
			{"disable", "PUT", p + "/enabled", map[string]any{"enabled": false}},
			{"reset password", "PUT", p + "/password", map[string]any{"newPassword": "Taken#Over0001"}},
			{"force logout", "DELETE", "/api/v1/sys/session/" + e.sid(account, id), nil},
			{"delete", "DELETE", p, nil},
			{"batch delete", "POST", base + "/batch-delete", map[string]any{"ids": []int64{e.small, id}}},
		}
	}
	targets := []struct {
		name    string
		id      int64
		account string
	}{
		{"holds a code more", e.big, "big"},
		{"scope all", e.wide, "wide"},
		{"custom scope outside", e.custom, "custom"},
	}
	// (The kernel helpers fail the test they were started with, so the
	// cases run in sequence rather than as subtests.)
	for _, tg := range targets {
		tok := e.k.Login(tg.account, userPw).AccessToken
		for _, a := range actions(tg.id, tg.account) {
			e.expect(tg.name+": "+a.name, e.do(a.method, a.path, e.ua, a.body), 41006)
		}
		// Nothing happened: same name, enabled, old password, sessions alive.
		got := e.get(e.admin, tg.id)
		if got.Name != tg.account || !got.Enabled {
			t.Fatalf("%s: target changed: %+v", tg.name, got)
		}
		e.k.Login(tg.account, userPw)
		e.expect(tg.name+": target's session", e.do("GET", "/api/v1/personal/profile", tok, nil), 0)
	}

	{ // assigning roles beyond the caller
		p := fmt.Sprintf("%s/%d", base, e.small)
		roles := e.get(e.admin, e.small).RoleIDs
		e.expect("role with a code ua lacks", e.do("PUT", p, e.ua, map[string]any{"name": "small", "orgId": 4, "roleIds": append(slices.Clone(roles), e.delegBig)}), 41006)
		e.expect("role with scope all", e.do("PUT", p, e.ua, map[string]any{"name": "small", "orgId": 4, "roleIds": append(slices.Clone(roles), e.delegWide)}), 41006)
		e.expect("create with a code ua lacks", e.do("POST", base, e.ua, map[string]any{"account": "n1", "name": "N", "orgId": 4, "roleIds": []int64{e.delegBig}}), 41006)
		e.expect("create with scope all", e.do("POST", base, e.ua, map[string]any{"account": "n1", "name": "N", "orgId": 4, "roleIds": []int64{e.delegWide}}), 41006)
		if got := e.get(e.admin, e.small).RoleIDs; !slices.Equal(got, roles) {
			t.Fatalf("roles changed to %v", got)
		}
		if n := e.k.Ent().SysUser.Query().Where(sysuser.Account("n1")).CountX(context.Background()); n != 0 {
			t.Fatal("a refused create wrote a row")
		}
	}

	{ // a user holding a subset
		p := fmt.Sprintf("%s/%d", base, e.small)
		roles := append(e.get(e.admin, e.small).RoleIDs, e.delegOK)
		e.expect("assign a role within", e.do("PUT", p, e.ua, map[string]any{"name": "Small", "orgId": 5, "roleIds": roles}), 0)
		e.create(e.ua, map[string]any{"account": "n2", "name": "N", "orgId": 4, "roleIds": []int64{e.delegOK}})
		e.expect("force logout", e.do("DELETE", "/api/v1/sys/session/"+e.sid("small", e.small), e.ua, nil), 0)
		e.expect("disable", e.do("PUT", p+"/enabled", e.ua, map[string]any{"enabled": false}), 0)
		e.expect("enable", e.do("PUT", p+"/enabled", e.ua, map[string]any{"enabled": true}), 0)
		e.expect("reset password", e.do("PUT", p+"/password", e.ua, map[string]any{"newPassword": "Reset#Passw0rd1"}), 0)
		e.k.Login("small", "Reset#Passw0rd1")
		e.expect("delete", e.do("DELETE", p, e.ua, nil), 0)
	}

	// The super-admin bypasses.
	e.expect("super-admin resets big", e.do("PUT", fmt.Sprintf("%s/%d/password", base, e.big), e.admin, map[string]any{}), 0)
	e.expect("super-admin forces out wide", e.do("DELETE", "/api/v1/sys/session/"+e.sid("wide", e.wide), e.admin, nil), 0)
}

// TestForceLogoutOutOfScope: force logout acts on the session's user: one
// outside the caller's data scope is refused (41005), the super-admin's
// sessions by anybody else (42007).
func TestForceLogoutOutOfScope(t *testing.T) {
	e := authoritySetup(t)
	outID, _ := e.scoped("outsider", 6, 0, nil, cPage)
	e.expect("outside the scope", e.do("DELETE", "/api/v1/sys/session/"+e.sid("outsider", outID), e.ua, nil), 41005)
	_, all := e.scoped("ua-all", 3, 1, nil, e.adminCodes...)
	e.expect("the super-admin", e.do("DELETE", "/api/v1/sys/session/"+e.k.Ent().SysSession.Query().
		Where(syssession.UserID(1)).FirstX(context.Background()).SessionID, all, nil), 42007)
	e.expect("own session", e.do("DELETE", "/api/v1/sys/session/"+e.sid("ua", e.uaID), e.ua, nil), 0)
}

// TestResetOwnPassword: the admin reset endpoint refuses the caller's own
// account (42029), for the super-admin too; the personal password change
// (with the old password) is the way.
func TestResetOwnPassword(t *testing.T) {
	e := authoritySetup(t)
	e.expect("own account", e.do("PUT", fmt.Sprintf("%s/%d/password", base, e.uaID), e.ua, map[string]any{"newPassword": "Own#Passw0rd12"}), 42029)
	e.expect("super-admin's own account", e.do("PUT", base+"/1/password", e.admin, map[string]any{}), 42029)
	e.k.Login("ua", userPw)
}

// TestDirectorScope: a director outside the caller's data scope is refused
// (41005) on create and update, and a scoped reader sees the director's id
// but not the name of one outside their scope.
func TestDirectorScope(t *testing.T) {
	e := authoritySetup(t)
	outID, _ := e.create(e.admin, map[string]any{"account": "boss-out", "name": "Boss Out", "orgId": 6})
	inID, _ := e.create(e.admin, map[string]any{"account": "boss-in", "name": "Boss In", "orgId": 5})
	p := fmt.Sprintf("%s/%d", base, e.small)
	roles := e.get(e.admin, e.small).RoleIDs
	e.expect("create with a director out of scope", e.do("POST", base, e.ua, map[string]any{"account": "d1", "name": "D", "orgId": 4, "directorId": outID}), 41005)
	e.expect("update with a director out of scope", e.do("PUT", p, e.ua, map[string]any{"name": "small", "orgId": 4, "roleIds": roles, "directorId": outID}), 41005)
	e.expect("director in scope", e.do("PUT", p, e.ua, map[string]any{"name": "small", "orgId": 4, "roleIds": roles, "directorId": inID}), 0)
	if got := e.get(e.ua, e.small); got.DirectorName == nil || *got.DirectorName != "Boss In" {
		t.Fatalf("director in scope: %+v", got)
	}

	// The super-admin sets the outside director; the scoped reader sees the
	// id only, and may keep it when saving the user.
	e.expect("super-admin sets it", e.do("PUT", p, e.admin, map[string]any{"name": "small", "orgId": 4, "roleIds": roles, "directorId": outID}), 0)
	if got := e.get(e.admin, e.small); got.DirectorName == nil || *got.DirectorName != "Boss Out" {
		t.Fatalf("super-admin reads %+v", got)
	}
	got := e.get(e.ua, e.small)
	if got.DirectorID == nil || *got.DirectorID != outID || got.DirectorName != nil {
		t.Fatalf("scoped reader gets director %v %v", got.DirectorID, got.DirectorName)
	}
	for _, it := range e.page(e.ua, nil).Items {
		if it.DirectorName != nil && *it.DirectorName == "Boss Out" {
			t.Fatal("page leaks the name of a director out of scope")
		}
	}
	e.expect("keep the current director", e.do("PUT", p, e.ua, map[string]any{"name": "Small", "orgId": 4, "roleIds": roles, "directorId": outID}), 0)
}

// TestOnlineSessionsInScope: the online-session list shows a scoped
// administrator only the sessions of users inside their data scope (orgs
// 3-5 for a viewer with "own org and below" in org 3); the super-admin sees
// every session.
func TestOnlineSessionsInScope(t *testing.T) {
	e := setup(t)
	const cOnline = "GET:/api/v1/sys/session/online"
	viewerID, viewer := e.scoped("viewer", 3, 3, nil, cOnline)
	inID, _ := e.scoped("inside", 4, 0, nil, cPage)
	outID, _ := e.scoped("outside", 6, 0, nil, cPage)
	list := func(tok string) map[int64]bool {
		t.Helper()
		var p struct {
			Total int            `json:"total"`
			Items []session.Info `json:"items"`
		}
		e.expect("online list", e.do("GET", "/api/v1/sys/session/online?size=100", tok, nil), 0).Decode(t, &p)
		if p.Total != len(p.Items) {
			t.Fatalf("total %d but %d items", p.Total, len(p.Items))
		}
		seen := map[int64]bool{}
		for _, it := range p.Items {
			seen[it.UserID] = true
		}
		return seen
	}
	scoped := list(viewer)
	if !scoped[viewerID] || !scoped[inID] || scoped[outID] || scoped[1] {
		t.Fatalf("scoped viewer sees the sessions of %v; want viewer %d and inside %d, not outside %d nor the super-admin", scoped, viewerID, inID, outID)
	}
	if all := list(e.admin); !all[outID] || !all[inID] || !all[1] {
		t.Fatalf("super-admin sees %v, want every user", all)
	}
}
