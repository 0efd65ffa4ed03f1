package menu_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const menuUserPw = "User#Passw0rd1"

// TestMenuPermissionMustNameRoutes: a menu's permission string is empty
// (catalogs, pages) or codes of permission-gated routes joined with ';';
// anything else is 42031 naming the first bad code, on add and update.
func TestMenuPermissionMustNameRoutes(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	var page int64
	k.Do("POST", "/api/v1/sys/menu/add", admin, map[string]any{"parentId": 0, "type": 2, "title": "P", "permission": ""}).
		Expect(t, "page without a permission", 200, 0).Decode(t, &page)
	var button int64
	k.Do("POST", "/api/v1/sys/menu/add", admin, map[string]any{"parentId": page, "type": 3, "title": "B", "permission": "GET:/api/v1/sys/org/list"}).
		Expect(t, "button with a route code", 200, 0).Decode(t, &button)

	tests := []struct {
		name, permission, bad string
	}{
		{"no such route", "GET:/api/v1/sys/nothing", "GET:/api/v1/sys/nothing"},
		{"wrong method", "POST:/api/v1/sys/org/list", "POST:/api/v1/sys/org/list"},
		{"not a code", "anything-goes", "ANYTHING-GOES"},
		{"one bad among good", "GET:/api/v1/sys/org/list;DELETE:/api/v1/sys/everything", "DELETE:/api/v1/sys/everything"},
		{"a session-level route", "GET:/api/v1/personal/profile", "GET:/api/v1/personal/profile"},
		{"an anonymous route", "POST:/api/v1/auth/login", "POST:/api/v1/auth/login"},
	}
	for _, tt := range tests {
		for _, op := range []struct{ method, path string }{
			{"POST", "/api/v1/sys/menu/add"},
			{"PUT", fmt.Sprint("/api/v1/sys/menu/", button)},
		} {
			r := k.Do(op.method, op.path, admin, map[string]any{"parentId": page, "type": 3, "title": "B", "permission": tt.permission}).
				Expect(t, op.method+" "+tt.name, 200, 42031)
			var env struct {
				Args map[string]any `json:"args"`
			}
			if err := json.Unmarshal([]byte(r.Raw), &env); err != nil || env.Args["permission"] != tt.bad {
				t.Errorf("%s %s: args %v, want permission %q", op.method, tt.name, env.Args, tt.bad)
			}
		}
	}
	nodes := tree(t, k, admin)
	if b := find(nodes, button); b == nil || b.Permission != "GET:/api/v1/sys/org/list" {
		t.Fatalf("a refused update changed the button: %+v", b)
	}
	if p := find(nodes, page); p == nil || len(p.Children) != 1 {
		t.Fatalf("a refused add wrote a menu: %+v", p)
	}
}

// TestMenuPermissionAuthority: a menu editor may write into a menu only
// codes they hold (41006), and cannot then grant an unheld code through a
// role: not to a role they hold (42029), not to another (41006).
func TestMenuPermissionAuthority(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	const (
		cAdd      = "POST:/api/v1/sys/menu/add"
		cUpdate   = "PUT:/api/v1/sys/menu/{id}"
		cRoleMenu = "PUT:/api/v1/sys/role/menu"
		unheld    = "PUT:/api/v1/sys/user/{id}/password"
	)
	k.User("menued", menuUserPw, cAdd, cUpdate, cRoleMenu)
	tok := k.Login("menued", menuUserPw).AccessToken
	ownRole := k.Ent().SysRole.Query().Where(sysrole.Code("test_menued")).OnlyIDX(t.Context())
	var other int64
	k.Do("POST", "/api/v1/sys/role/add", admin, map[string]any{"name": "Other", "code": "other"}).Expect(t, "other role", 200, 0).Decode(t, &other)

	k.Do("POST", "/api/v1/sys/menu/add", tok, map[string]any{"parentId": 0, "type": 3, "title": "steal", "permission": unheld}).
		Expect(t, "editor adds a button with an unheld code", 200, 41006)
	k.Do("POST", "/api/v1/sys/menu/add", tok, map[string]any{"parentId": 0, "type": 3, "title": "mix", "permission": cAdd + ";" + unheld}).
		Expect(t, "editor adds held and unheld codes", 200, 41006)
	var mine int64
	k.Do("POST", "/api/v1/sys/menu/add", tok, map[string]any{"parentId": 0, "type": 3, "title": "mine", "permission": cAdd}).
		Expect(t, "editor adds a button with a held code", 200, 0).Decode(t, &mine)
	k.Do("PUT", fmt.Sprint("/api/v1/sys/menu/", mine), tok, map[string]any{"parentId": 0, "type": 3, "title": "mine", "permission": unheld}).
		Expect(t, "editor rewrites the button to an unheld code", 200, 41006)
	k.Do("PUT", fmt.Sprint("/api/v1/sys/menu/", mine), tok, map[string]any{"parentId": 0, "type": 3, "title": "mine", "permission": ""}).
		Expect(t, "editor empties the button", 200, 0)

	// The super-admin writes the unheld code; the editor cannot hand it out.
	var theirs int64
	k.Do("POST", "/api/v1/sys/menu/add", admin, map[string]any{"parentId": 0, "type": 3, "title": "theirs", "permission": unheld}).
		Expect(t, "super-admin adds the button", 200, 0).Decode(t, &theirs)
	k.Do("PUT", "/api/v1/sys/role/menu", tok, map[string]any{"roleId": ownRole, "menuIds": []int64{theirs}}).
		Expect(t, "editor grants it to their own role", 200, 42029)
	k.Do("PUT", "/api/v1/sys/role/menu", tok, map[string]any{"roleId": other, "menuIds": []int64{theirs}}).
		Expect(t, "editor grants it to another role", 200, 41006)
	k.Do("PUT", "/api/v1/sys/user/1/password", tok, map[string]any{}).Expect(t, "editor still lacks the code", 403, 41001)
}
