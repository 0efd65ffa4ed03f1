package menu_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/route"
)

type treeNode struct {
	ID         int64       `json:"id"`
	ParentID   int64       `json:"parentId"`
	Type       int         `json:"type"`
	Title      string      `json:"title"`
	Permission string      `json:"permission"`
	Sort       int         `json:"sort"`
	Enabled    bool        `json:"enabled"`
	ModuleID   *int64      `json:"moduleId"`
	Path       *string     `json:"path"`
	Component  *string     `json:"component"`
	Icon       *string     `json:"icon"`
	Visible    bool        `json:"visible"`
	Children   []*treeNode `json:"children"`
}

func find(nodes []*treeNode, id int64) *treeNode {
	for _, n := range nodes {
		if n.ID == id {
			return n
		}
		if f := find(n.Children, id); f != nil {
			return f
		}
	}
	return nil
}

// checkOrder fails unless every level is sorted by sort, then id.
func checkOrder(t *testing.T, nodes []*treeNode) {
	t.Helper()
	for i := 1; i < len(nodes); i++ {
		a, b := nodes[i-1], nodes[i]
		if a.Sort > b.Sort || (a.Sort == b.Sort && a.ID >= b.ID) {
			t.Fatalf("siblings out of order: %d (sort %d) before %d (sort %d)", a.ID, a.Sort, b.ID, b.Sort)
		}
	}
	for _, n := range nodes {
		checkOrder(t, n.Children)
	}
}

func tree(t *testing.T, k *kerneltest.Kernel, token string) []*treeNode {
	t.Helper()
	var out []*treeNode
	k.Do("GET", "/api/v1/sys/menu/tree", token, nil).Expect(t, "menu tree", 200, 0).Decode(t, &out)
	return out
}

func TestMenuTree(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()

	r := k.Do("GET", "/api/v1/sys/menu/tree", admin, nil).Expect(t, "tree", 200, 0)
	var raw []map[string]any
	r.Decode(t, &raw)
	for _, key := range []string{"id", "parentId", "type", "title", "permission", "sort", "enabled", "moduleId", "path", "component", "icon", "visible", "children"} {
		if _, ok := raw[0][key]; !ok {
			t.Errorf("tree node lacks %q: %v", key, raw[0])
		}
	}
	var nodes []*treeNode
	r.Decode(t, &nodes)
	checkOrder(t, nodes)

	// Buttons are in the administration tree, under their page.
	page := find(nodes, 330)
	if page == nil || page.ParentID != 300 || page.Type != 2 || page.ModuleID != nil {
		t.Fatalf("page 330 = %+v", page)
	}
	if len(page.Children) != 4 || page.Children[0].ID != 331 || page.Children[0].Permission != "GET:/api/v1/sys/menu/tree;GET:/api/v1/sys/menu/routes" {
		t.Fatalf("330 children = %+v", page.Children)
	}
	if cat := find(nodes, 200); cat == nil || cat.ModuleID == nil || *cat.ModuleID != 1 || cat.ParentID != 0 {
		t.Fatalf("catalog 200 = %+v", cat)
	}

	// Disabled nodes stay in the tree.
	body := map[string]any{"parentId": 330, "type": 3, "title": "菜单-删除", "permission": "DELETE:/api/v1/sys/menu/{id}", "sort": 4, "enabled": false}
	k.Do("PUT", "/api/v1/sys/menu/334", admin, body).Expect(t, "disable 334", 200, 0)
	if n := find(tree(t, k, admin), 334); n == nil || n.Enabled {
		t.Fatalf("disabled 334 = %+v", n)
	}

	// Permission-gated: a user without the code is refused, one with it not.
	k.User("nobody", "Nobody#Pass1")
	nobody := k.Login("nobody", "Nobody#Pass1").AccessToken
	k.Do("GET", "/api/v1/sys/menu/tree", nobody, nil).Expect(t, "tree without the code", 403, 41001)
	k.Do("GET", "/api/v1/sys/menu/tree", "", nil).Expect(t, "tree without a token", 401, 40006)
	k.User("viewer", "Viewer#Pass1", "GET:/api/v1/sys/menu/tree")
	viewer := k.Login("viewer", "Viewer#Pass1").AccessToken
	k.Do("GET", "/api/v1/sys/menu/tree", viewer, nil).Expect(t, "tree with the code", 200, 0)
}

type routeItem struct {
	Code   string `json:"code"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

func TestMenuRoutes(t *testing.T) {
	k := kerneltest.Start(t, nil)
	var items []routeItem
	k.Do("GET", "/api/v1/sys/menu/routes", k.Admin(), nil).Expect(t, "routes", 200, 0).Decode(t, &items)

	want := routeItem{Code: "DELETE:/api/v1/sys/session/{sessionid}", Method: "DELETE", Path: "/api/v1/sys/session/{sessionId}"}
	found := false
	seen := map[string]bool{}
	for i, it := range items {
		found = found || it == want
		if seen[it.Code] {
			t.Errorf("code %s listed twice", it.Code)
		}
		seen[it.Code] = true
		if it.Code != route.PermissionCode(it.Method, it.Path) {
			t.Errorf("%+v: code is not the route's permission code", it)
		}
		if i > 0 {
			prev := items[i-1]
			if prev.Path > it.Path || (prev.Path == it.Path && prev.Method >= it.Method) {
				t.Errorf("not sorted by path then method: %+v before %+v", prev, it)
			}
		}
	}
	if !found {
		t.Fatalf("routes lack %+v: %+v", want, items)
	}
	// Exactly the permission-gated routes, nothing at session level.
	gated := map[string]bool{}
	for _, r := range k.Routes() {
		if r.Access == route.Permission {
			gated[r.PermissionCode()] = true
		}
	}
	if len(gated) != len(seen) {
		t.Fatalf("%d routes listed, %d permission-gated routes registered", len(seen), len(gated))
	}
	for code := range gated {
		if !seen[code] {
			t.Errorf("permission route %s not listed", code)
		}
	}
	if seen["GET:/api/v1/personal/modules"] {
		t.Error("a session-level route is listed")
	}
}

func TestMenuRoutesSkipDisabledModules(t *testing.T) {
	k := kerneltest.Start(t, []string{"Api__DisabledModules__0=org"})
	admin := k.Admin()
	var items []routeItem
	k.Do("GET", "/api/v1/sys/menu/routes", admin, nil).Expect(t, "routes", 200, 0).Decode(t, &items)
	for _, it := range items {
		if it.Path == "/api/v1/sys/org/list" {
			t.Fatalf("a route of a disabled module is listed: %+v", it)
		}
	}
	k.Do("GET", "/api/v1/sys/org/list", admin, nil).Expect(t, "disabled module route", 404, 48003)
}

func TestMenuCRUD(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	add := func(what string, body map[string]any) int64 {
		t.Helper()
		var id int64
		k.Do("POST", "/api/v1/sys/menu/add", admin, body).Expect(t, what, 200, 0).Decode(t, &id)
		return id
	}
	catalog := add("add catalog", map[string]any{"parentId": 0, "type": 1, "title": "CRM", "moduleId": 2, "sort": 9, "icon": "lucide:contact"})
	page := add("add page", map[string]any{"parentId": catalog, "type": 2, "title": "客户", "path": "/crm/customer", "component": "crm/customer/index", "moduleId": 1, "visible": false})
	button := add("add button", map[string]any{"parentId": page, "type": 3, "title": "客户-查询",
		"permission": " get:/API/v1/Sys/Org/list ;GET:/api/v1/sys/org/list;; GET:/api/v1/sys/org/{ID} "})
	quoted := add("add with quoted numbers", map[string]any{"parentId": fmt.Sprint(page), "type": "3", "title": "q", "sort": "5"})

	nodes := tree(t, k, admin)
	c, p, b := find(nodes, catalog), find(nodes, page), find(nodes, button)
	if c == nil || c.ModuleID == nil || *c.ModuleID != 2 || c.Sort != 9 || !c.Enabled || !c.Visible {
		t.Fatalf("catalog = %+v", c)
	}
	if p == nil || p.ParentID != catalog || p.ModuleID != nil || p.Visible || *p.Path != "/crm/customer" {
		t.Fatalf("page = %+v (moduleId is honoured only at the top)", p)
	}
	if b == nil || b.Permission != "GET:/api/v1/sys/org/list;GET:/api/v1/sys/org/{id}" || b.Path != nil {
		t.Fatalf("button = %+v (permission normalised)", b)
	}
	if q := find(nodes, quoted); q == nil || q.Sort != 5 || q.ParentID != page {
		t.Fatalf("quoted = %+v", q)
	}

	errs := []struct {
		name, method, path string
		body               any
		status, code       int
	}{
		{"add: parent missing", "POST", "/api/v1/sys/menu/add", map[string]any{"parentId": 987654321, "type": 2, "title": "x"}, 200, 42017},
		{"add: parent is a button", "POST", "/api/v1/sys/menu/add", map[string]any{"parentId": button, "type": 3, "title": "x"}, 200, 42017},
		{"add: unknown module", "POST", "/api/v1/sys/menu/add", map[string]any{"parentId": 0, "type": 1, "title": "x", "moduleId": 987654321}, 200, 42011},
		{"add: type out of range", "POST", "/api/v1/sys/menu/add", map[string]any{"type": 4, "title": "x"}, 400, 48002},
		{"add: blank title", "POST", "/api/v1/sys/menu/add", map[string]any{"type": 1, "title": "  "}, 400, 48002},
		{"add: no body", "POST", "/api/v1/sys/menu/add", nil, 400, 48002},
		{"update: missing", "PUT", "/api/v1/sys/menu/987654321", map[string]any{"type": 1, "title": "x"}, 200, 42015},
		{"update: own parent", "PUT", fmt.Sprint("/api/v1/sys/menu/", catalog), map[string]any{"parentId": catalog, "type": 1, "title": "CRM"}, 200, 42017},
		{"update: descendant as parent", "PUT", fmt.Sprint("/api/v1/sys/menu/", catalog), map[string]any{"parentId": page, "type": 1, "title": "CRM"}, 200, 42017},
		{"update: parent missing", "PUT", fmt.Sprint("/api/v1/sys/menu/", page), map[string]any{"parentId": 987654321, "type": 2, "title": "x"}, 200, 42017},
		{"delete: has children", "DELETE", fmt.Sprint("/api/v1/sys/menu/", catalog), nil, 200, 42016},
		{"delete: missing", "DELETE", "/api/v1/sys/menu/987654321", nil, 200, 42015},
		{"delete: bad id", "DELETE", "/api/v1/sys/menu/abc", nil, 400, 48002},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			k.Do(tc.method, tc.path, admin, tc.body).Expect(t, tc.name, tc.status, tc.code)
		})
	}

	// Moving the page to the top makes its module count.
	k.Do("PUT", fmt.Sprint("/api/v1/sys/menu/", page), admin, map[string]any{"parentId": 0, "type": 2, "title": "客户", "moduleId": 2, "path": ""}).
		Expect(t, "move page to the top", 200, 0)
	nodes = tree(t, k, admin)
	if p := find(nodes, page); p == nil || p.ParentID != 0 || p.ModuleID == nil || *p.ModuleID != 2 || p.Path != nil || !p.Visible {
		t.Fatalf("moved page = %+v", p)
	}
	if c := find(nodes, catalog); len(c.Children) != 0 {
		t.Fatalf("catalog still has children: %+v", c.Children)
	}

	// Soft delete: gone from the tree, deleting again is 42015.
	for _, id := range []int64{button, quoted, page, catalog} {
		k.Do("DELETE", fmt.Sprint("/api/v1/sys/menu/", id), admin, nil).Expect(t, fmt.Sprint("delete ", id), 200, 0)
	}
	nodes = tree(t, k, admin)
	for _, id := range []int64{button, quoted, page, catalog} {
		if find(nodes, id) != nil {
			t.Fatalf("deleted menu %d still in the tree", id)
		}
	}
	k.Do("DELETE", fmt.Sprint("/api/v1/sys/menu/", catalog), admin, nil).Expect(t, "delete twice", 200, 42015)
	row := k.Ent().SysMenu.GetX(t.Context(), catalog)
	if !row.IsDelete || row.DeleteKey != catalog || row.UpdateUserID == nil || *row.UpdateUserID != 1 {
		t.Fatalf("soft-deleted row = %+v", row)
	}
}

type sysModule struct {
	ID           int64   `json:"id"`
	Code         string  `json:"code"`
	Title        string  `json:"title"`
	Icon         *string `json:"icon"`
	DefaultRoute *string `json:"defaultRoute"`
	APIPrefix    *string `json:"apiPrefix"`
	Sort         int     `json:"sort"`
	Enabled      bool    `json:"enabled"`
	Remark       *string `json:"remark"`
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
}

func TestModules(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()

	var list []sysModule
	k.Do("GET", "/api/v1/sys/module/list", admin, nil).Expect(t, "list", 200, 0).Decode(t, &list)
	if len(list) != 2 || list[0].Code != "system" || list[1].Code != "business" || *list[0].APIPrefix != "sys" {
		t.Fatalf("modules = %+v", list)
	}
	var one sysModule
	k.Do("GET", "/api/v1/sys/module/2", admin, nil).Expect(t, "get", 200, 0).Decode(t, &one)
	if one.Code != "business" || one.Title != "业务中心" || one.CreateTime == "" || len(one.CreateTime) != len("2006-01-02T15:04:05") {
		t.Fatalf("module 2 = %+v", one)
	}

	var crm int64
	k.Do("POST", "/api/v1/sys/module/add", admin, map[string]any{"code": "crm", "title": "客户", "icon": "lucide:users", "defaultRoute": "/crm", "sort": 3}).
		Expect(t, "add", 200, 0).Decode(t, &crm)
	k.Do("GET", fmt.Sprint("/api/v1/sys/module/", crm), admin, nil).Expect(t, "get new", 200, 0).Decode(t, &one)
	if !one.Enabled || *one.DefaultRoute != "/crm" || one.APIPrefix != nil || one.CreateUserID == nil || *one.CreateUserID != 1 {
		t.Fatalf("new module = %+v", one)
	}
	menuOnCRM := func() int64 {
		var id int64
		k.Do("POST", "/api/v1/sys/menu/add", admin, map[string]any{"type": 1, "title": "CRM", "moduleId": crm}).Expect(t, "attach a menu", 200, 0).Decode(t, &id)
		return id
	}()

	cases := []struct {
		name, method, path string
		body               any
		status, code       int
	}{
		{"get: missing", "GET", "/api/v1/sys/module/987654321", nil, 200, 42011},
		{"add: code taken", "POST", "/api/v1/sys/module/add", map[string]any{"code": "crm", "title": "x"}, 200, 42012},
		{"add: built-in code", "POST", "/api/v1/sys/module/add", map[string]any{"code": " system ", "title": "x"}, 200, 42012},
		{"add: blank code", "POST", "/api/v1/sys/module/add", map[string]any{"code": "", "title": "x"}, 400, 48002},
		{"update: missing", "PUT", "/api/v1/sys/module/987654321", map[string]any{"code": "zzz", "title": "x"}, 200, 42011},
		{"update: code taken", "PUT", fmt.Sprint("/api/v1/sys/module/", crm), map[string]any{"code": "business", "title": "x"}, 200, 42012},
		{"update: disable the built-in module", "PUT", "/api/v1/sys/module/1", map[string]any{"code": "system", "title": "系统", "enabled": false}, 200, 42013},
		{"update: keep own code", "PUT", fmt.Sprint("/api/v1/sys/module/", crm), map[string]any{"code": "crm", "title": "客户关系", "sort": 4}, 200, 0},
		{"update: built-in title", "PUT", "/api/v1/sys/module/1", map[string]any{"code": "system", "title": "系统管理", "icon": "lucide:settings", "apiPrefix": "sys", "sort": 1}, 200, 0},
		{"delete: built-in", "DELETE", "/api/v1/sys/module/1", nil, 200, 42013},
		{"delete: menus attached", "DELETE", fmt.Sprint("/api/v1/sys/module/", crm), nil, 200, 42023},
		{"delete: missing", "DELETE", "/api/v1/sys/module/987654321", nil, 200, 42011},
		{"detach the menu", "DELETE", fmt.Sprint("/api/v1/sys/menu/", menuOnCRM), nil, 200, 0},
		{"delete", "DELETE", fmt.Sprint("/api/v1/sys/module/", crm), nil, 200, 0},
		{"delete: twice", "DELETE", fmt.Sprint("/api/v1/sys/module/", crm), nil, 200, 42011},
		{"get: deleted", "GET", fmt.Sprint("/api/v1/sys/module/", crm), nil, 200, 42011},
		{"add: code of a deleted module is free", "POST", "/api/v1/sys/module/add", map[string]any{"code": "crm", "title": "x", "sort": 9}, 200, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k.Do(tc.method, tc.path, admin, tc.body).Expect(t, tc.name, tc.status, tc.code)
		})
	}
	k.Do("GET", "/api/v1/sys/module/list", admin, nil).Expect(t, "list", 200, 0).Decode(t, &list)
	if len(list) != 3 || list[0].Title != "系统管理" {
		t.Fatalf("modules after the changes = %+v", list)
	}
	sorted := sort.SliceIsSorted(list, func(i, j int) bool {
		return list[i].Sort < list[j].Sort || (list[i].Sort == list[j].Sort && list[i].ID < list[j].ID)
	})
	if !sorted {
		t.Fatalf("list not sorted by sort, id: %+v", list)
	}
}

func TestModuleEndpointsNeedTheirCodes(t *testing.T) {
	k := kerneltest.Start(t, nil)
	k.User("reader", "Reader#Pass1", "GET:/api/v1/sys/module/list", "GET:/api/v1/sys/module/{id}")
	tok := k.Login("reader", "Reader#Pass1").AccessToken
	k.Do("GET", "/api/v1/sys/module/list", tok, nil).Expect(t, "list", 200, 0)
	k.Do("GET", "/api/v1/sys/module/1", tok, nil).Expect(t, "get", 200, 0)
	k.Do("POST", "/api/v1/sys/module/add", tok, map[string]any{"code": "x", "title": "x"}).Expect(t, "add", 403, 41001)
	k.Do("POST", "/api/v1/sys/menu/add", tok, map[string]any{"type": 1, "title": "x"}).Expect(t, "menu add", 403, 41001)
}
