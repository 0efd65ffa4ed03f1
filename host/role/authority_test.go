package role_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/adminkernel/kernel/ent/sysrole"
)

// grantFixture: a role editor (codes: the role endpoints; scope: own org
// and below in org 3, i.e. orgs 3, 4, 5), their own role, buttons with a
// held, an unheld and an unheld disabled code, a delegatable role x, a
// delegatable role y already carrying an unheld code, and users in org 4
// (big: holds a code more than the editor; small: a subset) and org 6.
type grantFixture struct {
	*env
	tok                       string
	editor, own               int64
	held, unheld, disabled    int64
	x, y, big, small, outside int64
}

func grantSetup(t *testing.T) *grantFixture {
	e := setup(t)
	ctx := context.Background()
	c := e.k.Ent()
	f := &grantFixture{env: e}
	f.editor = e.k.User("editor", userPw, allCodes...)
	c.SysUser.UpdateOneID(f.editor).SetOrgID(3).ExecX(ctx)
	f.own = c.SysRole.Query().Where(sysrole.Code("test_editor")).OnlyIDX(ctx)
	e.expect("editor's scope", e.do("PUT", base+"/datascope", e.admin, map[string]any{"roleId": f.own, "scopeType": 3}), 0)
	f.tok = e.k.Login("editor", userPw).AccessToken

	button := func(code string, enabled bool) int64 {
		return c.SysMenu.Create().SetType(3).SetTitle(code).SetPermission(code).SetEnabled(enabled).SaveX(ctx).ID
	}
	f.held = button(allCodes[0], true) // GET:/api/v1/sys/role/page
	f.unheld = button("DELETE:/api/v1/sys/user/{id}", true)
	f.disabled = button("PUT:/api/v1/sys/user/{id}/password", false)

	f.x = e.add(map[string]any{"name": "X", "code": "x", "isDelegatable": true})
	f.y = e.add(map[string]any{"name": "Y", "code": "y", "isDelegatable": true})
	e.expect("y gets an unheld code", e.do("PUT", base+"/menu", e.admin, map[string]any{"roleId": f.y, "menuIds": []int64{f.unheld}}), 0)

	f.big = e.k.User("big", userPw, append(slices.Clone(allCodes), "GET:/api/v1/sys/user/page")...)
	f.small = e.k.User("small", userPw, allCodes[0])
	f.outside = e.k.User("outside", userPw)
	for id, org := range map[int64]int64{f.big: 4, f.small: 4, f.outside: 6} {
		c.SysUser.UpdateOneID(id).SetOrgID(org).ExecX(ctx)
	}
	return f
}

type grantStep struct {
	name, method, path string
	body               any
	code               int
}

func (f *grantFixture) run(steps []grantStep) {
	f.t.Helper()
	for _, s := range steps {
		f.expect(s.name, f.do(s.method, s.path, f.tok, s.body), s.code)
	}
}

// TestAuthorityOwnRole: a caller cannot change a role they hold (42029),
// whatever the write.
func TestAuthorityOwnRole(t *testing.T) {
	f := grantSetup(t)
	f.run([]grantStep{
		{"own role: update", "PUT", fmt.Sprintf("%s/%d", base, f.own), map[string]any{"name": "Mine", "code": "test_editor"}, 42029},
		{"own role: menus", "PUT", base + "/menu", map[string]any{"roleId": f.own, "menuIds": []int64{f.held}}, 42029},
		{"own role: data scope", "PUT", base + "/datascope", map[string]any{"roleId": f.own, "scopeType": 1}, 42029},
		{"own role: holders", "PUT", base + "/users", map[string]any{"roleId": f.own, "userIds": []int64{f.editor, f.small}}, 42029},
		{"own role: delete", "DELETE", fmt.Sprintf("%s/%d", base, f.own), nil, 42029},
		{"own role: batch delete", "POST", base + "/batch-delete", map[string]any{"ids": []int64{f.x, f.own}}, 42029},
	})
	if got := f.get(f.x); got.ID != f.x {
		t.Fatal("a refused batch deleted x")
	}
	f.expect("super-admin edits the editor's role", f.do("PUT", fmt.Sprintf("%s/%d", base, f.own), f.admin, map[string]any{"name": "Mine", "code": "test_editor"}), 0)
}

// TestAuthorityMenuGrants: menus carrying a code the caller does not hold
// (enabled or not) cannot be granted to a role (41006); held ones can.
func TestAuthorityMenuGrants(t *testing.T) {
	f := grantSetup(t)
	f.run([]grantStep{
		{"menus: an unheld code", "PUT", base + "/menu", map[string]any{"roleId": f.x, "menuIds": []int64{f.unheld}}, 41006},
		{"menus: held and unheld", "PUT", base + "/menu", map[string]any{"roleId": f.x, "menuIds": []int64{f.held, f.unheld}}, 41006},
		{"menus: an unheld code on a disabled menu", "PUT", base + "/menu", map[string]any{"roleId": f.x, "menuIds": []int64{f.disabled}}, 41006},
		{"menus: held codes", "PUT", base + "/menu", map[string]any{"roleId": f.x, "menuIds": []int64{f.held}}, 0},
	})
	if got := f.ids("x's menus", fmt.Sprintf("%s/%d/menus", base, f.x), f.admin); !slices.Equal(got, []int64{f.held}) {
		t.Fatalf("x's menus = %v", got)
	}
	f.expect("super-admin grants the unheld code", f.do("PUT", base+"/menu", f.admin, map[string]any{"roleId": f.x, "menuIds": []int64{f.unheld}}), 0)
}

// TestAuthorityScopeGrants: a role's data scope cannot be set wider than
// the caller's own (41006). Own org and own org and below are resolved for
// each holder of the role.
func TestAuthorityScopeGrants(t *testing.T) {
	f := grantSetup(t)
	f.run([]grantStep{
		{"scope: all", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 1}, 41006},
		{"scope: custom outside", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 5, "customOrgIds": []int64{4, 6}}, 41006},
		{"scope: custom inside", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 5, "customOrgIds": []int64{4, 5}}, 0},
		{"scope: own org and below, no holder", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 3}, 0},
		{"scope: self", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 4}, 0},
	})
	// A holder in org 6 (placed by the super-admin) makes the org-relative
	// scopes cover org 6: wider than the editor's.
	f.expect("admin adds holders in org 4 and 6", f.do("PUT", base+"/users", f.admin, map[string]any{"roleId": f.x, "userIds": []int64{f.small, f.outside}}), 0)
	f.run([]grantStep{
		{"scope: own org with a holder in org 6", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 2}, 41006},
		{"scope: own org and below with a holder in org 6", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 3}, 41006},
	})
	f.expect("admin drops the org 6 holder", f.do("PUT", base+"/users", f.admin, map[string]any{"roleId": f.x, "userIds": []int64{f.small}}), 0)
	f.run([]grantStep{{"scope: own org with a holder in org 4", "PUT", base + "/datascope", map[string]any{"roleId": f.x, "scopeType": 2}, 0}})
	f.expect("super-admin sets scope all", f.do("PUT", base+"/datascope", f.admin, map[string]any{"roleId": f.x, "scopeType": 1}), 0)
}

// TestAuthorityHolders: making someone a holder acts on them: a user who
// holds more than the caller cannot be added or removed (41006); one
// holding a subset can.
func TestAuthorityHolders(t *testing.T) {
	f := grantSetup(t)
	f.expect("admin makes big a holder", f.do("PUT", base+"/users", f.admin, map[string]any{"roleId": f.x, "userIds": []int64{f.big}}), 0)
	f.run([]grantStep{
		{"holders: removing a user holding more", "PUT", base + "/users", map[string]any{"roleId": f.x, "userIds": []int64{}}, 41006},
		{"holders: adding one holding a subset", "PUT", base + "/users", map[string]any{"roleId": f.x, "userIds": []int64{f.big, f.small}}, 0},
	})
	f.expect("admin clears", f.do("PUT", base+"/users", f.admin, map[string]any{"roleId": f.x, "userIds": []int64{}}), 0)
	f.run([]grantStep{
		{"holders: adding a user holding more", "PUT", base + "/users", map[string]any{"roleId": f.x, "userIds": []int64{f.small, f.big}}, 41006},
	})
	if got := f.ids("x's holders", fmt.Sprintf("%s/%d/users", base, f.x), f.admin); len(got) != 0 {
		t.Fatalf("x's holders = %v", got)
	}
}

// TestAuthorityExceedingRole: a role that already carries a code the
// caller does not hold cannot be changed by them at all (41006).
func TestAuthorityExceedingRole(t *testing.T) {
	f := grantSetup(t)
	f.run([]grantStep{
		{"exceeding role: update", "PUT", fmt.Sprintf("%s/%d", base, f.y), map[string]any{"name": "Y", "code": "y", "enabled": false}, 41006},
		{"exceeding role: menus", "PUT", base + "/menu", map[string]any{"roleId": f.y, "menuIds": []int64{}}, 41006},
		{"exceeding role: holders", "PUT", base + "/users", map[string]any{"roleId": f.y, "userIds": []int64{f.small}}, 41006},
		{"exceeding role: data scope", "PUT", base + "/datascope", map[string]any{"roleId": f.y, "scopeType": 4}, 41006},
		{"exceeding role: delete", "DELETE", fmt.Sprintf("%s/%d", base, f.y), nil, 41006},
		{"exceeding role: batch delete", "POST", base + "/batch-delete", map[string]any{"ids": []int64{f.y}}, 41006},
	})
	if got := f.get(f.y); !got.Enabled {
		t.Fatal("a refused update disabled y")
	}
	if got := f.ids("y's menus", fmt.Sprintf("%s/%d/menus", base, f.y), f.admin); !slices.Equal(got, []int64{f.unheld}) {
		t.Fatalf("y's menus = %v", got)
	}
}
