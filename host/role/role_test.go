package role_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const (
	base   = "/api/v1/sys/role"
	userPw = "User#Passw0rd1"
)

// Permission codes of the role endpoints.
var allCodes = []string{
	"GET:/api/v1/sys/role/page", "GET:/api/v1/sys/role/{id}", "POST:/api/v1/sys/role/add", "PUT:/api/v1/sys/role/{id}",
	"DELETE:/api/v1/sys/role/{id}", "POST:/api/v1/sys/role/batch-delete", "GET:/api/v1/sys/role/{id}/menus",
	"PUT:/api/v1/sys/role/menu", "GET:/api/v1/sys/role/{id}/datascope", "PUT:/api/v1/sys/role/datascope",
	"GET:/api/v1/sys/role/{id}/users", "PUT:/api/v1/sys/role/users",
}

type env struct {
	t     *testing.T
	k     *kerneltest.Kernel
	admin string
}

func setup(t *testing.T) *env {
	t.Helper()
	k := kerneltest.Start(t, nil)
	return &env{t: t, k: k, admin: k.Admin()}
}

func (e *env) do(method, path, tok string, body any) kerneltest.Reply {
	e.t.Helper()
	return e.k.Do(method, path, tok, body)
}

func (e *env) expect(what string, r kerneltest.Reply, code int) kerneltest.Reply {
	e.t.Helper()
	return r.ExpectCode(e.t, what, errcode.Code(code))
}

func (e *env) add(body map[string]any) int64 {
	e.t.Helper()
	r := e.expect(fmt.Sprintf("add %v", body["code"]), e.do("POST", base+"/add", e.admin, body), 0)
	var id int64
	r.Decode(e.t, &id)
	return id
}

type role struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	Code          string  `json:"code"`
	Sort          int     `json:"sort"`
	Enabled       bool    `json:"enabled"`
	Remark        *string `json:"remark"`
	IsDelegatable bool    `json:"isDelegatable"`
	IsDelete      bool    `json:"isDelete"`
	CreateTime    string  `json:"createTime"`
	CreateUserID  *int64  `json:"createUserId"`
	UpdateTime    *string `json:"updateTime"`
	UpdateUserID  *int64  `json:"updateUserId"`
}

func (e *env) get(id int64) role {
	e.t.Helper()
	r := e.expect("get role", e.do("GET", fmt.Sprintf("%s/%d", base, id), e.admin, nil), 0)
	var out role
	r.Decode(e.t, &out)
	return out
}

func (e *env) ids(what, path, tok string) []int64 {
	e.t.Helper()
	r := e.expect(what, e.do("GET", path, tok, nil), 0)
	var out []int64
	r.Decode(e.t, &out)
	return out
}

func TestRoleCRUD(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	id := e.add(map[string]any{"name": "审计员", "code": "auditor", "sort": "7", "enabled": true, "remark": "reads logs", "isDelegatable": true})
	got := e.get(id)
	if got.Name != "审计员" || got.Code != "auditor" || got.Sort != 7 || !got.Enabled || *got.Remark != "reads logs" ||
		!got.IsDelegatable || got.IsDelete || got.CreateTime == "" || got.CreateUserID == nil || *got.CreateUserID != 1 {
		t.Fatalf("role = %+v", got)
	}
	// Defaults: enabled, not delegatable, no remark.
	other := e.add(map[string]any{"name": "Other", "code": "other"})
	if g := e.get(other); !g.Enabled || g.IsDelegatable || g.Remark != nil || g.Sort != 0 {
		t.Fatalf("defaults = %+v", g)
	}

	tests := []struct {
		name, method, path string
		body               any
		code               int
	}{
		{"add malformed", "POST", base + "/add", "{", 48002},
		{"add blank name", "POST", base + "/add", map[string]any{"name": " ", "code": "x"}, 48002},
		{"add blank code", "POST", base + "/add", map[string]any{"name": "X"}, 48002},
		{"add code with space", "POST", base + "/add", map[string]any{"name": "X", "code": "a b"}, 48002},
		{"add bad sort", "POST", base + "/add", map[string]any{"name": "X", "code": "x", "sort": "first"}, 48002},
		{"add code taken", "POST", base + "/add", map[string]any{"name": "X", "code": "auditor"}, 42018},
		{"add seeded code taken", "POST", base + "/add", map[string]any{"name": "X", "code": "scope_all"}, 42018},
		{"get missing", "GET", base + "/999", nil, 42002},
		{"get bad id", "GET", base + "/x", nil, 48002},
		{"update missing", "PUT", base + "/999", map[string]any{"name": "X", "code": "x"}, 42002},
		{"update code taken", "PUT", fmt.Sprintf("%s/%d", base, other), map[string]any{"name": "X", "code": "auditor"}, 42018},
		{"update blank name", "PUT", fmt.Sprintf("%s/%d", base, other), map[string]any{"name": "", "code": "other"}, 48002},
		{"update", "PUT", fmt.Sprintf("%s/%d", base, other), map[string]any{"name": "Other 2", "code": "other2", "sort": 3, "enabled": false}, 0},
		{"update keeping its own code", "PUT", fmt.Sprintf("%s/%d", base, id), map[string]any{"name": "审计员", "code": "auditor", "isDelegatable": true}, 0},
		{"delete missing", "DELETE", base + "/999", nil, 42002},
	}
	for _, tt := range tests {
		e.expect(tt.name, e.do(tt.method, tt.path, e.admin, tt.body), tt.code)
	}
	if g := e.get(other); g.Name != "Other 2" || g.Code != "other2" || g.Sort != 3 || g.Enabled || g.UpdateTime == nil || *g.UpdateUserID != 1 {
		t.Fatalf("after update = %+v", g)
	}
	if g := e.get(id); g.Remark != nil {
		t.Fatalf("full replace kept the remark: %+v", g)
	}

	// Page: Name fuzzy, sorted by sort then id unless SortField says otherwise.
	var p struct {
		Total int    `json:"total"`
		Items []role `json:"items"`
	}
	e.expect("page", e.do("GET", base+"/page?"+url.Values{"Name": {"other"}}.Encode(), e.admin, nil), 0).Decode(t, &p)
	if p.Total != 1 || p.Items[0].ID != other {
		t.Fatalf("page by name = %+v", p)
	}
	e.expect("page all", e.do("GET", base+"/page?size=100", e.admin, nil), 0).Decode(t, &p)
	// auditor lost its sort (0) in the full replace above.
	if p.Total != 8 || p.Items[0].Code != "auditor" || p.Items[1].Code != "sys_admin" {
		t.Fatalf("page = %+v", p)
	}
	e.expect("page sorted", e.do("GET", base+"/page?SortField=code&SortOrder=desc&Size=1", e.admin, nil), 0).Decode(t, &p)
	if p.Items[0].Code != "sys_admin" {
		t.Fatalf("sorted by code desc: %+v", p.Items)
	}
	e.expect("page too big", e.do("GET", base+"/page?Size=1000", e.admin, nil), 48001)

	// Delete removes the role's links and frees its code.
	u := e.k.User("holder", userPw)
	e.expect("grant menus", e.do("PUT", base+"/menu", e.admin, map[string]any{"roleId": id, "menuIds": []int{301, 231}}), 0)
	e.expect("set scope", e.do("PUT", base+"/datascope", e.admin, map[string]any{"roleId": id, "scopeType": 5, "customOrgIds": []int{2}}), 0)
	e.expect("set users", e.do("PUT", base+"/users", e.admin, map[string]any{"roleId": id, "userIds": []int64{u}}), 0)
	e.expect("delete", e.do("DELETE", fmt.Sprintf("%s/%d", base, id), e.admin, nil), 0)
	e.expect("get deleted", e.do("GET", fmt.Sprintf("%s/%d", base, id), e.admin, nil), 42002)
	e.expect("delete again", e.do("DELETE", fmt.Sprintf("%s/%d", base, id), e.admin, nil), 42002)
	row := e.k.Ent().SysRole.GetX(ctx, id)
	if !row.IsDelete || row.DeleteKey != id {
		t.Fatalf("soft delete: %+v", row)
	}
	if n := e.k.Ent().SysRoleMenu.Query().Where(sysrolemenu.RoleID(id)).CountX(ctx); n != 0 {
		t.Errorf("%d menu links left", n)
	}
	if n := e.k.Ent().SysUserRole.Query().Where(sysuserrole.RoleID(id)).CountX(ctx); n != 0 {
		t.Errorf("%d user links left", n)
	}
	if n := e.k.Ent().SysRoleDataScope.Query().Where(sysroledatascope.RoleID(id), sysroledatascope.IsDelete(false)).CountX(ctx); n != 0 {
		t.Errorf("%d live data scopes left", n)
	}
	again := e.add(map[string]any{"name": "审计员", "code": "auditor"})
	if again == id {
		t.Fatal("id reused")
	}
	// The new role starts with no scope even though the old one had one.
	if r := e.expect("scope of the new role", e.do("GET", fmt.Sprintf("%s/%d/datascope", base, again), e.admin, nil), 0); string(r.Data) != "null" {
		t.Fatalf("datascope = %s", r.Data)
	}
}

func TestBatchDelete(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	a := e.add(map[string]any{"name": "A", "code": "a"})
	b := e.add(map[string]any{"name": "B", "code": "b"})
	c := e.add(map[string]any{"name": "C", "code": "c"})
	tests := []struct {
		name string
		body any
		code int
	}{
		{"malformed", "[", 48002},
		{"bad id", map[string]any{"ids": []any{a, 0}}, 48002},
		{"empty", map[string]any{"ids": []int{}}, 0},
		{"two and an unknown", map[string]any{"ids": []any{a, fmt.Sprint(b), 999}}, 0},
	}
	for _, tt := range tests {
		e.expect(tt.name, e.do("POST", base+"/batch-delete", e.admin, tt.body), tt.code)
	}
	live := e.k.Ent().SysRole.Query().Where(sysrole.IDIn(a, b, c), sysrole.IsDelete(false)).IDsX(ctx)
	if !slices.Equal(live, []int64{c}) {
		t.Fatalf("live after batch = %v", live)
	}
}

// TestGrantsTakeEffect: menu grants, role state and holders change what a
// user may do on the very next request, without a restart.
func TestGrantsTakeEffect(t *testing.T) {
	e := setup(t)
	id := e.add(map[string]any{"name": "Pinger", "code": "pinger"})
	uid := e.k.User("pinger", userPw)
	tok := e.k.Login("pinger", userPw).AccessToken
	ping := func(what string, code int) {
		t.Helper()
		e.expect(what, e.do("GET", "/api/v1/ping", tok, nil), code)
	}
	path := fmt.Sprintf("%s/%d", base, id)
	steps := []struct {
		name, method, path string
		body               any
		ping               int
	}{
		{"holder without grants", "PUT", base + "/users", map[string]any{"roleId": id, "userIds": []int64{uid}}, 41001},
		{"grant the ping button", "PUT", base + "/menu", map[string]any{"roleId": id, "menuIds": []int{301}}, 0},
		{"revoke every menu", "PUT", base + "/menu", map[string]any{"roleId": id, "menuIds": []int{}}, 41001},
		{"grant again, quoted", "PUT", base + "/menu", map[string]any{"roleId": fmt.Sprint(id), "menuIds": []string{"301"}}, 0},
		{"disable the role", "PUT", path, map[string]any{"name": "Pinger", "code": "pinger", "enabled": false}, 41001},
		{"enable the role", "PUT", path, map[string]any{"name": "Pinger", "code": "pinger", "enabled": true}, 0},
		{"remove the holder", "PUT", base + "/users", map[string]any{"roleId": id, "userIds": []int64{}}, 41001},
		{"add the holder", "PUT", base + "/users", map[string]any{"roleId": id, "userIds": []int64{uid}}, 0},
		{"delete the role", "DELETE", path, nil, 41001},
	}
	ping("before anything", 41001)
	for _, s := range steps {
		e.expect(s.name, e.do(s.method, s.path, e.admin, s.body), 0)
		ping("ping after: "+s.name, s.ping)
	}
	// Batch delete invalidates too.
	id2 := e.add(map[string]any{"name": "Pinger 2", "code": "pinger2"})
	e.expect("grant", e.do("PUT", base+"/menu", e.admin, map[string]any{"roleId": id2, "menuIds": []int{301}}), 0)
	e.expect("hold", e.do("PUT", base+"/users", e.admin, map[string]any{"roleId": id2, "userIds": []int64{uid}}), 0)
	ping("after grant 2", 0)
	e.expect("batch delete", e.do("POST", base+"/batch-delete", e.admin, map[string]any{"ids": []int64{id2}}), 0)
	ping("after batch delete", 41001)
}

func TestMenus(t *testing.T) {
	e := setup(t)
	id := e.add(map[string]any{"name": "M", "code": "m"})
	path := fmt.Sprintf("%s/%d/menus", base, id)
	if got := e.ids("menus of a new role", path, e.admin); len(got) != 0 {
		t.Fatalf("menus = %v", got)
	}
	tests := []struct {
		name string
		body any
		code int
		want []int64
	}{
		{"set", map[string]any{"roleId": id, "menuIds": []int{301, 231, 231, 232}}, 0, []int64{231, 232, 301}},
		{"unknown menu: unchanged", map[string]any{"roleId": id, "menuIds": []int{231, 99999}}, 42015, []int64{231, 232, 301}},
		{"missing role", map[string]any{"roleId": 999, "menuIds": []int{231}}, 42002, []int64{231, 232, 301}},
		{"no role id", map[string]any{"menuIds": []int{231}}, 48002, []int64{231, 232, 301}},
		{"bad menu id", map[string]any{"roleId": id, "menuIds": []int{-1}}, 48002, []int64{231, 232, 301}},
		{"malformed", "{", 48002, []int64{231, 232, 301}},
		{"replace", map[string]any{"roleId": id, "menuIds": []int{230}}, 0, []int64{230}},
		{"null clears", map[string]any{"roleId": id, "menuIds": nil}, 0, []int64{}},
	}
	for _, tt := range tests {
		e.expect(tt.name, e.do("PUT", base+"/menu", e.admin, tt.body), tt.code)
		if got := e.ids("menus after "+tt.name, path, e.admin); !slices.Equal(got, tt.want) {
			t.Fatalf("%s: menus %v, want %v", tt.name, got, tt.want)
		}
	}
	e.expect("menus of a missing role", e.do("GET", base+"/999/menus", e.admin, nil), 42002)
}

func TestDataScope(t *testing.T) {
	e := setup(t)
	id := e.add(map[string]any{"name": "S", "code": "s"})
	path := fmt.Sprintf("%s/%d/datascope", base, id)
	if r := e.expect("no scope yet", e.do("GET", path, e.admin, nil), 0); string(r.Data) != "null" {
		t.Fatalf("datascope = %s", r.Data)
	}
	type scope struct {
		ID           int64   `json:"id"`
		RoleID       int64   `json:"roleId"`
		ScopeType    int     `json:"scopeType"`
		CustomOrgIDs *string `json:"customOrgIds"`
		IsDelete     bool    `json:"isDelete"`
		CreateTime   string  `json:"createTime"`
	}
	var first int64
	for typ := 1; typ <= 5; typ++ {
		body := map[string]any{"roleId": id, "scopeType": typ}
		if typ == 5 {
			body["customOrgIds"] = []any{6, "2", 6}
		} else {
			body["customOrgIds"] = []int{3} // ignored for types other than custom
		}
		e.expect(fmt.Sprintf("set type %d", typ), e.do("PUT", base+"/datascope", e.admin, body), 0)
		var got scope
		e.expect("get", e.do("GET", path, e.admin, nil), 0).Decode(t, &got)
		if got.RoleID != id || got.ScopeType != typ || got.IsDelete || got.CreateTime == "" {
			t.Fatalf("type %d: %+v", typ, got)
		}
		if typ == 5 && (got.CustomOrgIDs == nil || *got.CustomOrgIDs != "2,6") {
			t.Fatalf("custom orgs = %v", got.CustomOrgIDs)
		}
		if typ != 5 && got.CustomOrgIDs != nil {
			t.Fatalf("type %d keeps custom orgs %q", typ, *got.CustomOrgIDs)
		}
		if first == 0 {
			first = got.ID
		} else if got.ID != first {
			t.Fatalf("a new scope row per change (%d, %d)", first, got.ID)
		}
	}
	// Raw JSON check: customOrgIds is a string.
	r := e.expect("raw", e.do("GET", path, e.admin, nil), 0)
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(r.Data, &raw)
	if string(raw["customOrgIds"]) != `"2,6"` {
		t.Fatalf("customOrgIds = %s", raw["customOrgIds"])
	}
	tests := []struct {
		name string
		body any
		code int
	}{
		{"type 0", map[string]any{"roleId": id, "scopeType": 0}, 48002},
		{"type 6", map[string]any{"roleId": id, "scopeType": 6}, 48002},
		{"type missing", map[string]any{"roleId": id}, 48002},
		{"type text", map[string]any{"roleId": id, "scopeType": "all"}, 48002},
		{"custom without orgs", map[string]any{"roleId": id, "scopeType": 5}, 48002},
		{"custom with empty orgs", map[string]any{"roleId": id, "scopeType": 5, "customOrgIds": []int{}}, 48002},
		{"custom with a bad org id", map[string]any{"roleId": id, "scopeType": 5, "customOrgIds": []int{0}}, 48002},
		{"custom with an unknown org", map[string]any{"roleId": id, "scopeType": 5, "customOrgIds": []int{2, 999}}, 42003},
		{"missing role", map[string]any{"roleId": 999, "scopeType": 1}, 42002},
		{"malformed", "{", 48002},
	}
	for _, tt := range tests {
		e.expect(tt.name, e.do("PUT", base+"/datascope", e.admin, tt.body), tt.code)
	}
	var got scope
	e.expect("unchanged", e.do("GET", path, e.admin, nil), 0).Decode(t, &got)
	if got.ScopeType != 5 || *got.CustomOrgIDs != "2,6" {
		t.Fatalf("a refused change altered the scope: %+v", got)
	}
	e.expect("scope of a missing role", e.do("GET", base+"/999/datascope", e.admin, nil), 42002)
	// Seeded scope: role 6 custom "2,6".
	e.expect("seeded", e.do("GET", base+"/6/datascope", e.admin, nil), 0).Decode(t, &got)
	if got.ScopeType != 5 || *got.CustomOrgIDs != "2,6" {
		t.Fatalf("seeded scope of role 6 = %+v", got)
	}
}

func TestUsers(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	id := e.add(map[string]any{"name": "U", "code": "u"})
	path := fmt.Sprintf("%s/%d/users", base, id)
	a, b, c := e.k.User("ua", userPw), e.k.User("ub", userPw), e.k.User("uc", userPw)
	tests := []struct {
		name string
		body any
		code int
		want []int64
	}{
		{"set", map[string]any{"roleId": id, "userIds": []int64{a, b, a}}, 0, sorted(a, b)},
		{"replace", map[string]any{"roleId": id, "userIds": []any{fmt.Sprint(b), c}}, 0, sorted(b, c)},
		{"unknown user: unchanged", map[string]any{"roleId": id, "userIds": []int64{a, 999}}, 42001, sorted(b, c)},
		{"missing role", map[string]any{"roleId": 999, "userIds": []int64{a}}, 42002, sorted(b, c)},
		{"bad user id", map[string]any{"roleId": id, "userIds": []int{0}}, 48002, sorted(b, c)},
		{"clear", map[string]any{"roleId": id, "userIds": []int64{}}, 0, []int64{}},
	}
	for _, tt := range tests {
		e.expect(tt.name, e.do("PUT", base+"/users", e.admin, tt.body), tt.code)
		if got := e.ids("users after "+tt.name, path, e.admin); !slices.Equal(got, tt.want) {
			t.Fatalf("%s: users %v, want %v", tt.name, got, tt.want)
		}
	}
	e.expect("users of a missing role", e.do("GET", base+"/999/users", e.admin, nil), 42002)

	// A scoped administrator (own org 3) sees and replaces holders within
	// their scope only, and may add holders only to a delegatable role.
	e.k.Ent().SysUser.UpdateOneID(a).SetOrgID(3).ExecX(ctx)
	e.k.Ent().SysUser.UpdateOneID(b).SetOrgID(3).ExecX(ctx)
	// c stays in org 1, outside the scope.
	mgr := e.k.User("mgr", userPw, allCodes...)
	e.k.Ent().SysUser.UpdateOneID(mgr).SetOrgID(3).ExecX(ctx)
	mgrRole := e.k.Ent().SysRole.Query().Where(sysrole.Code("test_mgr")).OnlyIDX(ctx)
	e.expect("scope of mgr", e.do("PUT", base+"/datascope", e.admin, map[string]any{"roleId": mgrRole, "scopeType": 2}), 0)
	tok := e.k.Login("mgr", userPw).AccessToken

	e.expect("admin sets a and c", e.do("PUT", base+"/users", e.admin, map[string]any{"roleId": id, "userIds": []int64{a, c}}), 0)
	if got := e.ids("mgr reads holders", path, tok); !slices.Equal(got, []int64{a}) {
		t.Fatalf("mgr sees holders %v, want only %d", got, a)
	}
	e.expect("mgr names a user outside the scope", e.do("PUT", base+"/users", tok, map[string]any{"roleId": id, "userIds": []int64{a, c}}), 41005)
	e.expect("mgr adds b to a non-delegatable role", e.do("PUT", base+"/users", tok, map[string]any{"roleId": id, "userIds": []int64{a, b}}), 41004)
	e.expect("mgr removes a", e.do("PUT", base+"/users", tok, map[string]any{"roleId": id, "userIds": []int64{}}), 0)
	if got := e.ids("holders after mgr's change", path, e.admin); !slices.Equal(got, []int64{c}) {
		t.Fatalf("holders %v, want the out-of-scope %d kept", got, c)
	}
	e.expect("make delegatable", e.do("PUT", fmt.Sprintf("%s/%d", base, id), e.admin, map[string]any{"name": "U", "code": "u", "isDelegatable": true}), 0)
	e.expect("mgr adds b", e.do("PUT", base+"/users", tok, map[string]any{"roleId": id, "userIds": []int64{b}}), 0)
	if got := e.ids("holders after mgr's add", path, e.admin); !slices.Equal(got, sorted(b, c)) {
		t.Fatalf("holders %v", got)
	}
}

func sorted(ids ...int64) []int64 {
	slices.Sort(ids)
	return ids
}
