package org_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/kerneltest"
)

type sysOrg struct {
	ID           int64   `json:"id"`
	ParentID     int64   `json:"parentId"`
	Name         string  `json:"name"`
	Code         string  `json:"code"`
	Category     *string `json:"category"`
	Sort         int     `json:"sort"`
	Enabled      bool    `json:"enabled"`
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
}

func listOrgs(t *testing.T, k *kerneltest.Kernel, token string) []sysOrg {
	t.Helper()
	var out []sysOrg
	k.Do("GET", "/api/v1/sys/org/list", token, nil).Expect(t, "org list", 200, 0).Decode(t, &out)
	return out
}

func byID(list []sysOrg, id int64) *sysOrg {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

type call struct {
	name, method, path string
	body               any
	status, code       int
}

func run(t *testing.T, k *kerneltest.Kernel, token string, calls []call) {
	t.Helper()
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			k.Do(tc.method, tc.path, token, tc.body).Expect(t, tc.name, tc.status, tc.code)
		})
	}
}

func TestOrgCRUD(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	ctx := context.Background()

	list := listOrgs(t, k, admin)
	if len(list) != 7 {
		t.Fatalf("seeded orgs = %d, want 7", len(list))
	}
	if !sort.SliceIsSorted(list, func(i, j int) bool {
		return list[i].Sort < list[j].Sort || (list[i].Sort == list[j].Sort && list[i].ID < list[j].ID)
	}) {
		t.Fatalf("list not sorted by sort, id: %+v", list)
	}
	var one sysOrg
	k.Do("GET", "/api/v1/sys/org/3", admin, nil).Expect(t, "get", 200, 0).Decode(t, &one)
	if one.Name != "技术部" || one.Code != "smart_tech" || one.ParentID != 1 || *one.Category != "2" || !one.Enabled || one.CreateTime == "" {
		t.Fatalf("org 3 = %+v", one)
	}

	// Add: an empty code is generated; cached data scopes are dropped.
	scopeKey := datascope.KeyPrefix + "42"
	if err := k.Cache().Set(ctx, scopeKey, []byte("{}"), time.Minute); err != nil {
		t.Fatal(err)
	}
	var top, child int64
	k.Do("POST", "/api/v1/sys/org/add", admin, map[string]any{"parentId": 0, "name": " 新公司 ", "sort": 5}).Expect(t, "add top", 200, 0).Decode(t, &top)
	if _, ok, _ := k.Cache().Get(ctx, scopeKey); ok {
		t.Fatal("an org change left a cached data scope")
	}
	k.Do("POST", "/api/v1/sys/org/add", admin, map[string]any{"parentId": fmt.Sprint(top), "name": "分部", "code": "branch", "category": "2", "enabled": false}).
		Expect(t, "add child", 200, 0).Decode(t, &child)
	list = listOrgs(t, k, admin)
	if o := byID(list, top); o == nil || o.Name != "新公司" || len(o.Code) != 10 || o.ParentID != 0 || !o.Enabled || o.Category != nil || o.CreateUserID == nil || *o.CreateUserID != 1 {
		t.Fatalf("top = %+v", o)
	}
	if o := byID(list, child); o == nil || o.ParentID != top || o.Code != "branch" || o.Enabled {
		t.Fatalf("child = %+v", o)
	}
	grandchild := k.Ent().SysOrg.Create().SetParentID(child).SetName("小组").SetCode("team").SaveX(ctx).ID
	userOrg := k.Ent().SysOrg.Create().SetParentID(top).SetName("有人").SetCode("staffed").SaveX(ctx).ID
	k.Ent().SysUser.Create().SetAccount("member").SetName("member").SetOrgID(userOrg).ExecX(ctx)

	run(t, k, admin, []call{
		{"get: missing", "GET", "/api/v1/sys/org/987654321", nil, 200, 42003},
		{"get: bad id", "GET", "/api/v1/sys/org/x", nil, 400, 48002},
		{"add: code taken", "POST", "/api/v1/sys/org/add", map[string]any{"name": "x", "code": "smart"}, 200, 42009},
		{"add: parent missing", "POST", "/api/v1/sys/org/add", map[string]any{"parentId": 987654321, "name": "x"}, 200, 42008},
		{"add: blank name", "POST", "/api/v1/sys/org/add", map[string]any{"name": " "}, 400, 48002},
		{"add: name too long", "POST", "/api/v1/sys/org/add", map[string]any{"name": string(make([]rune, 129))}, 400, 48002},
		{"update: missing", "PUT", "/api/v1/sys/org/987654321", map[string]any{"name": "x"}, 200, 42003},
		{"update: own parent", "PUT", fmt.Sprint("/api/v1/sys/org/", top), map[string]any{"parentId": top, "name": "新公司"}, 200, 42008},
		{"update: descendant as parent", "PUT", fmt.Sprint("/api/v1/sys/org/", top), map[string]any{"parentId": grandchild, "name": "新公司"}, 200, 42008},
		{"update: parent missing", "PUT", fmt.Sprint("/api/v1/sys/org/", child), map[string]any{"parentId": 987654321, "name": "x"}, 200, 42008},
		{"update: code taken", "PUT", fmt.Sprint("/api/v1/sys/org/", child), map[string]any{"parentId": top, "name": "分部", "code": "smart_hr"}, 200, 42009},
		{"update: move under 技术部", "PUT", fmt.Sprint("/api/v1/sys/org/", child), map[string]any{"parentId": 3, "name": "分部2", "code": "branch2", "category": "3", "sort": 7}, 200, 0},
		{"delete: children", "DELETE", fmt.Sprint("/api/v1/sys/org/", child), nil, 200, 42004},
		{"delete: users", "DELETE", fmt.Sprint("/api/v1/sys/org/", userOrg), nil, 200, 42027},
		{"delete: missing", "DELETE", "/api/v1/sys/org/987654321", nil, 200, 42003},
		{"delete: leaf", "DELETE", fmt.Sprint("/api/v1/sys/org/", grandchild), nil, 200, 0},
		{"delete: now childless", "DELETE", fmt.Sprint("/api/v1/sys/org/", child), nil, 200, 0},
		{"delete: twice", "DELETE", fmt.Sprint("/api/v1/sys/org/", child), nil, 200, 42003},
		{"get: deleted", "GET", fmt.Sprint("/api/v1/sys/org/", child), nil, 200, 42003},
		{"add: code of a deleted org is free", "POST", "/api/v1/sys/org/add", map[string]any{"name": "x", "code": "branch2"}, 200, 0},
	})

	row := k.Ent().SysOrg.Query().Where(sysorg.ID(child)).OnlyX(ctx)
	if !row.IsDelete || row.DeleteKey != child || row.Name != "分部2" || row.ParentID != 3 || *row.Category != "3" || row.UpdateUserID == nil {
		t.Fatalf("updated then deleted row = %+v", row)
	}
	if byID(listOrgs(t, k, admin), child) != nil {
		t.Fatal("deleted org still listed")
	}
	// An empty code on update keeps the current one.
	k.Do("PUT", fmt.Sprint("/api/v1/sys/org/", top), admin, map[string]any{"name": "新公司", "code": ""}).Expect(t, "update without code", 200, 0)
	if o := byID(listOrgs(t, k, admin), top); o == nil || len(o.Code) != 10 || o.UpdateTime == nil {
		t.Fatalf("top after update = %+v", o)
	}
}

func TestOrgCopy(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()

	var first int64
	k.Do("POST", "/api/v1/sys/org/3/copy", admin, nil).Expect(t, "copy without a body", 200, 0).Decode(t, &first)
	list := listOrgs(t, k, admin)
	root := byID(list, first)
	if root == nil || root.ParentID != 1 || root.Name != "技术部-副本" || root.Code != "smart_tech-copy" || *root.Category != "2" {
		t.Fatalf("copied root = %+v", root)
	}
	var kids []string
	for _, o := range list {
		if o.ParentID == first {
			kids = append(kids, o.Name+"/"+o.Code)
		}
	}
	if !slices.Equal(kids, []string{"前端组/smart_fe-copy", "后端组/smart_be-copy"}) {
		t.Fatalf("copied children = %v", kids)
	}
	if len(list) != 10 {
		t.Fatalf("orgs after the copy = %d, want 10", len(list))
	}

	// Copying again: the given name, and codes that stay unique.
	var second int64
	k.Do("POST", "/api/v1/sys/org/3/copy", admin, map[string]any{"name": "研发中心"}).Expect(t, "copy with a name", 200, 0).Decode(t, &second)
	list = listOrgs(t, k, admin)
	if root := byID(list, second); root == nil || root.Name != "研发中心" || root.Code != "smart_tech-copy2" || root.ParentID != 1 {
		t.Fatalf("second copy = %+v", root)
	}
	// Copying a copy (a whole subtree) and a top-level org.
	var third int64
	k.Do("POST", fmt.Sprint("/api/v1/sys/org/", first, "/copy"), admin, map[string]any{"name": nil}).Expect(t, "copy of the copy", 200, 0).Decode(t, &third)
	if root := byID(listOrgs(t, k, admin), third); root == nil || root.Name != "技术部-副本-副本" || root.Code != "smart_tech-copy-copy" {
		t.Fatalf("copy of the copy = %+v", root)
	}
	var whole int64
	k.Do("POST", "/api/v1/sys/org/1/copy", admin, map[string]any{}).Expect(t, "copy the top", 200, 0).Decode(t, &whole)
	list = listOrgs(t, k, admin)
	count := func(parent int64) int {
		n := 0
		for _, o := range list {
			if o.ParentID == parent {
				n++
			}
		}
		return n
	}
	if root := byID(list, whole); root == nil || root.ParentID != 0 || count(whole) != count(1) {
		t.Fatalf("copy of the top org = %+v with %d children, want %d", root, count(whole), count(1))
	}
	seen := map[string]bool{}
	for _, o := range list {
		if seen[o.Code] {
			t.Fatalf("code %s used twice", o.Code)
		}
		seen[o.Code] = true
	}

	run(t, k, admin, []call{
		{"copy: missing", "POST", "/api/v1/sys/org/987654321/copy", nil, 200, 42003},
		{"copy: bad body", "POST", "/api/v1/sys/org/3/copy", "{", 400, 48002},
	})
}

type sysPosition struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Code    string `json:"code"`
	Sort    int    `json:"sort"`
	Enabled bool   `json:"enabled"`
}

type positionPage struct {
	Current int           `json:"current"`
	Size    int           `json:"size"`
	Total   int           `json:"total"`
	Pages   int           `json:"pages"`
	Items   []sysPosition `json:"items"`
}

func codes(p positionPage) []string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Code)
	}
	return out
}

func TestPositions(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	ctx := context.Background()
	page := func(query string) positionPage {
		t.Helper()
		var p positionPage
		k.Do("GET", "/api/v1/sys/position/page"+query, admin, nil).Expect(t, "page "+query, 200, 0).Decode(t, &p)
		return p
	}

	all := page("")
	if all.Total != 6 || all.Current != 1 || all.Size != 20 || all.Pages != 1 ||
		!slices.Equal(codes(all), []string{"gm", "vp", "dm", "lead", "supervisor", "specialist"}) {
		t.Fatalf("default page = %+v", all)
	}
	if p := page("?Name=经理"); p.Total != 3 || !slices.Equal(codes(p), []string{"gm", "vp", "dm"}) {
		t.Fatalf("Name=经理 = %+v", p)
	}
	if p := page("?current=2&size=4"); p.Total != 6 || p.Pages != 2 || !slices.Equal(codes(p), []string{"supervisor", "specialist"}) {
		t.Fatalf("page 2 of 4 = %+v", p)
	}
	if p := page("?SortField=Code&SortOrder=desc&Size=2"); !slices.Equal(codes(p), []string{"vp", "supervisor"}) {
		t.Fatalf("sorted by code desc = %+v", p)
	}
	if p := page("?SortField=nope&Size=1"); !slices.Equal(codes(p), []string{"gm"}) {
		t.Fatalf("unknown sort field = %+v", p)
	}

	var id int64
	k.Do("POST", "/api/v1/sys/position/add", admin, map[string]any{"name": "顾问", "code": "advisor", "sort": "7"}).Expect(t, "add", 200, 0).Decode(t, &id)
	var one sysPosition
	k.Do("GET", fmt.Sprint("/api/v1/sys/position/", id), admin, nil).Expect(t, "get", 200, 0).Decode(t, &one)
	if one.Name != "顾问" || one.Code != "advisor" || one.Sort != 7 || !one.Enabled {
		t.Fatalf("new position = %+v", one)
	}
	k.Ent().SysUser.Create().SetAccount("holder").SetName("holder").SetPositionID(4).ExecX(ctx)

	run(t, k, admin, []call{
		{"page: size above the maximum", "GET", "/api/v1/sys/position/page?Size=1000", nil, 200, 48001},
		{"get: missing", "GET", "/api/v1/sys/position/987654321", nil, 200, 42005},
		{"add: code taken", "POST", "/api/v1/sys/position/add", map[string]any{"name": "x", "code": "gm"}, 200, 42010},
		{"add: blank code", "POST", "/api/v1/sys/position/add", map[string]any{"name": "x", "code": ""}, 400, 48002},
		{"update: missing", "PUT", "/api/v1/sys/position/987654321", map[string]any{"name": "x", "code": "x"}, 200, 42005},
		{"update: code taken", "PUT", fmt.Sprint("/api/v1/sys/position/", id), map[string]any{"name": "顾问", "code": "vp"}, 200, 42010},
		{"update", "PUT", fmt.Sprint("/api/v1/sys/position/", id), map[string]any{"name": "高级顾问", "code": "advisor", "sort": 8, "enabled": false}, 200, 0},
		{"delete: held by a user", "DELETE", "/api/v1/sys/position/4", nil, 200, 42028},
		{"delete: missing", "DELETE", "/api/v1/sys/position/987654321", nil, 200, 42005},
		{"delete", "DELETE", fmt.Sprint("/api/v1/sys/position/", id), nil, 200, 0},
		{"get: deleted", "GET", fmt.Sprint("/api/v1/sys/position/", id), nil, 200, 42005},
		{"add: code of a deleted position is free", "POST", "/api/v1/sys/position/add", map[string]any{"name": "顾问", "code": "advisor"}, 200, 0},
	})
	row := k.Ent().SysPosition.GetX(ctx, id)
	if !row.IsDelete || row.DeleteKey != id || row.Name != "高级顾问" || row.Enabled {
		t.Fatalf("updated then deleted row = %+v", row)
	}
}

func TestOrgEndpointsNeedTheirCodes(t *testing.T) {
	k := kerneltest.Start(t, nil)
	k.User("viewer", "Viewer#Pass1", "GET:/api/v1/sys/org/list", "GET:/api/v1/sys/position/page")
	tok := k.Login("viewer", "Viewer#Pass1").AccessToken
	run(t, k, tok, []call{
		{"org list", "GET", "/api/v1/sys/org/list", nil, 200, 0},
		{"position page", "GET", "/api/v1/sys/position/page", nil, 200, 0},
		{"org get", "GET", "/api/v1/sys/org/1", nil, 403, 41001},
		{"org add", "POST", "/api/v1/sys/org/add", map[string]any{"name": "x"}, 403, 41001},
		{"org copy", "POST", "/api/v1/sys/org/1/copy", nil, 403, 41001},
		{"position delete", "DELETE", "/api/v1/sys/position/1", nil, 403, 41001},
	})
	k.Do("GET", "/api/v1/sys/org/list", "", nil).Expect(t, "no token", 401, 40006)
}

// TestOrgOnEveryDialect creates, lists and deletes organisations on each
// real database server.
func TestOrgOnEveryDialect(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			cfg := dbtest.Config(t, dialect)
			k := kerneltest.Start(t, []string{
				"Service__Database__DbType=" + cfg.Service.Database.DbType,
				"Service__Database__ConnectionString=" + cfg.Service.Database.ConnectionString.Reveal(),
			})
			if got := k.Config().Service.Database.DbType; got != cfg.Service.Database.DbType {
				t.Fatalf("kernel runs on %s, want %s", got, cfg.Service.Database.DbType)
			}
			admin := k.Admin()
			var id, copied int64
			k.Do("POST", "/api/v1/sys/org/add", admin, map[string]any{"parentId": 3, "name": "测试组", "code": "qa", "sort": 3}).Expect(t, "add", 200, 0).Decode(t, &id)
			k.Do("POST", "/api/v1/sys/org/add", admin, map[string]any{"name": "x", "code": "qa"}).Expect(t, "add taken code", 200, 42009)
			k.Do("POST", fmt.Sprint("/api/v1/sys/org/", id, "/copy"), admin, nil).Expect(t, "copy", 200, 0).Decode(t, &copied)
			list := listOrgs(t, k, admin)
			if o := byID(list, id); o == nil || o.Name != "测试组" || o.ParentID != 3 {
				t.Fatalf("added org = %+v", o)
			}
			if o := byID(list, copied); o == nil || o.Code != "qa-copy" || o.Name != "测试组-副本" {
				t.Fatalf("copied org = %+v", o)
			}
			k.Do("DELETE", "/api/v1/sys/org/3", admin, nil).Expect(t, "delete with children", 200, 42004)
			k.Do("DELETE", fmt.Sprint("/api/v1/sys/org/", id), admin, nil).Expect(t, "delete", 200, 0)
			k.Do("POST", "/api/v1/sys/org/add", admin, map[string]any{"name": "again", "code": "qa"}).Expect(t, "re-add the deleted code", 200, 0)
			if byID(listOrgs(t, k, admin), id) != nil {
				t.Fatal("deleted org still listed")
			}
		})
	}
}
