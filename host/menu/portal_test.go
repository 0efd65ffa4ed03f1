package menu_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/menu"
)

type portalModule struct {
	ID           int64   `json:"id"`
	Code         string  `json:"code"`
	Title        string  `json:"title"`
	Icon         *string `json:"icon"`
	DefaultRoute *string `json:"defaultRoute"`
	Sort         int     `json:"sort"`
}

type myModules struct {
	Modules         []portalModule `json:"modules"`
	DefaultModuleID *int64         `json:"defaultModuleId"`
}

type menuNode struct {
	ID        int64       `json:"id"`
	ParentID  int64       `json:"parentId"`
	Type      int         `json:"type"`
	Title     string      `json:"title"`
	Path      *string     `json:"path"`
	Component *string     `json:"component"`
	Icon      *string     `json:"icon"`
	Sort      int         `json:"sort"`
	Visible   bool        `json:"visible"`
	Children  []*menuNode `json:"children"`
}

func modulesOf(t *testing.T, k *kerneltest.Kernel, token string) myModules {
	t.Helper()
	var out myModules
	k.Do("GET", "/api/v1/personal/modules", token, nil).Expect(t, "personal modules", 200, 0).Decode(t, &out)
	if out.Modules == nil {
		t.Fatal("modules is null, want an array")
	}
	return out
}

func moduleCodes(m myModules) []string {
	var out []string
	for _, x := range m.Modules {
		out = append(out, x.Code)
	}
	return out
}

func menuOf(t *testing.T, k *kerneltest.Kernel, token string, moduleID int64) []*menuNode {
	t.Helper()
	var out []*menuNode
	k.Do("GET", fmt.Sprint("/api/v1/personal/menu?moduleId=", moduleID), token, nil).Expect(t, "personal menu", 200, 0).Decode(t, &out)
	if out == nil {
		t.Fatal("menu is null, want an array")
	}
	return out
}

// shape renders a sidebar tree as "id(child child) id" for comparisons.
func shape(nodes []*menuNode) string {
	var parts []string
	for _, n := range nodes {
		s := fmt.Sprint(n.ID)
		if len(n.Children) > 0 {
			s += "(" + shape(n.Children) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func permissionsOf(t *testing.T, k *kerneltest.Kernel, token string) []string {
	t.Helper()
	var out []string
	k.Do("GET", "/api/v1/personal/permissions", token, nil).Expect(t, "personal permissions", 200, 0).Decode(t, &out)
	if out == nil {
		t.Fatal("permissions is null, want an array")
	}
	return out
}

func TestPortalSuperAdmin(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()

	mods := modulesOf(t, k, admin)
	if got := moduleCodes(mods); !slices.Equal(got, []string{"system", "business"}) || mods.DefaultModuleID != nil {
		t.Fatalf("super-admin modules = %+v", mods)
	}
	if perms := permissionsOf(t, k, admin); len(perms) != 0 {
		t.Fatalf("super-admin permissions = %v, want []", perms)
	}

	// The whole module tree without buttons, sorted by sort then id.
	sys := menuOf(t, k, admin, 1)
	got := shape(sys)
	for _, want := range []string{"100 200(210 220", "330 340", "500("} {
		if !strings.Contains(got, want) {
			t.Errorf("system sidebar %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "331") || strings.Contains(got, "301") {
		t.Errorf("system sidebar %q holds buttons", got)
	}
	if sys[0].ID != 100 || sys[0].Path == nil || *sys[0].Path != "/workbench" || !sys[0].Visible {
		t.Errorf("first root = %+v", sys[0])
	}
	if biz := shape(menuOf(t, k, admin, 2)); biz != "110" {
		t.Errorf("business sidebar = %q, want 110", biz)
	}
	if none := menuOf(t, k, admin, 987654321); len(none) != 0 {
		t.Errorf("sidebar of an unknown module = %+v", none)
	}
	k.Do("GET", "/api/v1/personal/menu", admin, nil).Expect(t, "menu without moduleId", 200, 0)
	k.Do("GET", "/api/v1/personal/menu?moduleId=x", admin, nil).Expect(t, "menu with a bad moduleId", 400, 48002)

	// Hidden pages stay in the tree (the UI registers their routes) but
	// say so; disabled ones leave with their subtree.
	put := func(id int64, body map[string]any) {
		t.Helper()
		k.Do("PUT", fmt.Sprint("/api/v1/sys/menu/", id), admin, body).Expect(t, fmt.Sprint("update ", id), 200, 0)
	}
	put(340, map[string]any{"parentId": 300, "type": 2, "title": "模块管理", "path": "/system/module", "component": "system/module/index", "sort": 4, "visible": false})
	put(200, map[string]any{"parentId": 0, "type": 1, "title": "组织管理", "icon": "ph:buildings-duotone", "sort": 2, "moduleId": 1, "enabled": false})
	sys = menuOf(t, k, admin, 1)
	got = shape(sys)
	if strings.Contains(got, "200") || strings.Contains(got, "210") {
		t.Errorf("disabled catalog still in the sidebar: %q", got)
	}
	var hidden *menuNode
	for _, n := range sys {
		for _, c := range n.Children {
			if c.ID == 340 {
				hidden = c
			}
		}
	}
	if hidden == nil || hidden.Visible {
		t.Errorf("hidden page 340 = %+v", hidden)
	}

	// A disabled module leaves the portal; the super-admin may choose any
	// enabled one as default.
	k.Do("PUT", "/api/v1/sys/module/2", admin, map[string]any{"code": "business", "title": "业务中心", "enabled": false}).Expect(t, "disable business", 200, 0)
	if got := moduleCodes(modulesOf(t, k, admin)); !slices.Equal(got, []string{"system"}) {
		t.Fatalf("modules after disabling business = %v", got)
	}
	k.Do("PUT", "/api/v1/personal/default-module", admin, map[string]any{"moduleId": 2}).Expect(t, "default to a disabled module", 200, 42014)
	k.Do("PUT", "/api/v1/personal/default-module", admin, map[string]any{"moduleId": "1"}).Expect(t, "default module (quoted)", 200, 0)
	if m := modulesOf(t, k, admin); m.DefaultModuleID == nil || *m.DefaultModuleID != 1 {
		t.Fatalf("defaultModuleId = %v", m.DefaultModuleID)
	}
}

func TestPortalRegularUser(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	admin := k.Admin()
	c := k.Ent()

	// alice's role is granted the menu-query button (331) only.
	uid := k.User("alice", "Alice#Pass1")
	role := c.SysRole.Create().SetName("portal").SetCode("portal").SaveX(ctx)
	c.SysUserRole.Create().SetUserID(uid).SetRoleID(role.ID).ExecX(ctx)
	c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(331).ExecX(ctx)
	alice := k.Login("alice", "Alice#Pass1").AccessToken

	if got := moduleCodes(modulesOf(t, k, alice)); !slices.Equal(got, []string{"system"}) {
		t.Fatalf("alice modules = %v", got)
	}
	if got := shape(menuOf(t, k, alice, 1)); got != "300(330)" {
		t.Fatalf("alice sidebar = %q, want 300(330): ancestors of the granted button, no buttons", got)
	}
	if got := menuOf(t, k, alice, 2); len(got) != 0 {
		t.Fatalf("alice business sidebar = %+v", got)
	}
	want := []string{"GET:/api/v1/sys/menu/routes", "GET:/api/v1/sys/menu/tree"}
	if got := permissionsOf(t, k, alice); !slices.Equal(got, want) {
		t.Fatalf("alice permissions = %v, want %v", got, want)
	}
	k.Do("GET", "/api/v1/sys/menu/tree", alice, nil).Expect(t, "granted tree", 200, 0)
	k.Do("GET", "/api/v1/sys/module/list", alice, nil).Expect(t, "ungranted module list", 403, 41001)

	// Default module: only an accessible one.
	k.Do("PUT", "/api/v1/personal/default-module", alice, map[string]any{"moduleId": 2}).Expect(t, "inaccessible default", 200, 42014)
	k.Do("PUT", "/api/v1/personal/default-module", alice, map[string]any{}).Expect(t, "no module", 200, 42014)
	k.Do("PUT", "/api/v1/personal/default-module", alice, map[string]any{"moduleId": 1}).Expect(t, "default", 200, 0)
	if m := modulesOf(t, k, alice); m.DefaultModuleID == nil || *m.DefaultModuleID != 1 {
		t.Fatalf("alice defaultModuleId = %v", m.DefaultModuleID)
	}
	if u := c.SysUser.Query().Where(sysuser.ID(uid)).OnlyX(ctx); u.DefaultModuleID == nil || *u.DefaultModuleID != 1 {
		t.Fatalf("stored default_module_id = %v", u.DefaultModuleID)
	}

	// A grant made elsewhere (role area): it invalidates the user's
	// permissions and bumps the portal generation; the next request shows
	// the new button and its module without a restart.
	c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(341).ExecX(ctx)
	c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(110).ExecX(ctx)
	if err := k.Permissions().Invalidate(ctx, uid); err != nil {
		t.Fatal(err)
	}
	if _, err := menu.BumpGeneration(ctx, k.Cache()); err != nil {
		t.Fatal(err)
	}
	if got := moduleCodes(modulesOf(t, k, alice)); !slices.Equal(got, []string{"system", "business"}) {
		t.Fatalf("alice modules after the grant = %v", got)
	}
	if got := shape(menuOf(t, k, alice, 1)); got != "300(330 340)" {
		t.Fatalf("alice sidebar after the grant = %q", got)
	}
	if got := permissionsOf(t, k, alice); !slices.Contains(got, "GET:/api/v1/sys/module/{id}") {
		t.Fatalf("alice permissions after the grant = %v", got)
	}
	k.Do("GET", "/api/v1/sys/module/list", alice, nil).Expect(t, "newly granted module list", 200, 0)

	// Menu changes through the API take effect on the next request, with
	// no invalidation by the test: disabling the button ...
	body := map[string]any{"parentId": 340, "type": 3, "title": "模块-查询", "permission": "GET:/api/v1/sys/module/list;GET:/api/v1/sys/module/{id}", "sort": 1, "enabled": false}
	k.Do("PUT", "/api/v1/sys/menu/341", admin, body).Expect(t, "disable 341", 200, 0)
	if got := permissionsOf(t, k, alice); slices.Contains(got, "GET:/api/v1/sys/module/list") {
		t.Fatalf("disabled button still grants: %v", got)
	}
	k.Do("GET", "/api/v1/sys/module/list", alice, nil).Expect(t, "module list after disabling", 403, 41001)
	if got := shape(menuOf(t, k, alice, 1)); got != "300(330)" {
		t.Fatalf("sidebar after disabling 341 = %q", got)
	}
	// ... enabling it again with another code ...
	body["enabled"], body["permission"] = true, "GET:/api/v1/sys/module/list"
	k.Do("PUT", "/api/v1/sys/menu/341", admin, body).Expect(t, "enable 341", 200, 0)
	if got := permissionsOf(t, k, alice); !slices.Contains(got, "GET:/api/v1/sys/module/list") || slices.Contains(got, "GET:/api/v1/sys/module/{id}") {
		t.Fatalf("permissions after re-enabling = %v", got)
	}
	// ... and deleting the granted buttons.
	for _, id := range []int64{341, 331} {
		k.Do("DELETE", fmt.Sprint("/api/v1/sys/menu/", id), admin, nil).Expect(t, fmt.Sprint("delete ", id), 200, 0)
	}
	if got := permissionsOf(t, k, alice); len(got) != 0 {
		t.Fatalf("permissions after deleting the buttons = %v", got)
	}
	if got := moduleCodes(modulesOf(t, k, alice)); !slices.Equal(got, []string{"business"}) {
		t.Fatalf("modules after deleting the buttons = %v", got)
	}
	if m := modulesOf(t, k, alice); m.DefaultModuleID != nil {
		t.Fatalf("defaultModuleId of a module no longer accessible = %v", *m.DefaultModuleID)
	}
	if got := menuOf(t, k, alice, 1); len(got) != 0 {
		t.Fatalf("system sidebar after deleting the buttons = %q", shape(got))
	}
	k.Do("GET", "/api/v1/sys/menu/tree", alice, nil).Expect(t, "tree after deleting the button", 403, 41001)

	// A disabled role grants nothing in the portal either.
	c.SysRole.UpdateOneID(role.ID).SetEnabled(false).ExecX(ctx)
	if _, err := menu.BumpGeneration(ctx, k.Cache()); err != nil {
		t.Fatal(err)
	}
	if got := modulesOf(t, k, alice); len(got.Modules) != 0 {
		t.Fatalf("modules of a disabled role = %v", moduleCodes(got))
	}
}

// TestPortalCacheGeneration checks that the portal is served from the cache
// until the generation moves, and that menu and module changes move it.
func TestPortalCacheGeneration(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	admin := k.Admin()
	gen := func() int64 {
		n, _, err := k.Cache().Count(ctx, menu.GenerationKey)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	before := modulesOf(t, k, admin)
	// An out-of-band edit is not seen while the generation stands ...
	k.Ent().SysModule.Update().Where(sysmodule.ID(2)).SetTitle("改名").ExecX(ctx)
	if m := modulesOf(t, k, admin); m.Modules[1].Title != before.Modules[1].Title {
		t.Fatalf("portal not cached: %+v", m)
	}
	// ... and is once it moves (the cache-clearing action).
	g0 := gen()
	n, err := menu.BumpGeneration(ctx, k.Cache())
	if err != nil || n != g0+1 {
		t.Fatalf("BumpGeneration = %d, %v; want %d", n, err, g0+1)
	}
	if m := modulesOf(t, k, admin); m.Modules[1].Title != "改名" {
		t.Fatalf("portal after the bump = %+v", m)
	}

	steps := []struct {
		name, method, path string
		body               any
	}{
		{"menu add", "POST", "/api/v1/sys/menu/add", map[string]any{"type": 1, "title": "x", "moduleId": 2}},
		{"menu update", "PUT", "/api/v1/sys/menu/110", map[string]any{"type": 2, "title": "工作台", "path": "/business/workbench", "component": "dashboard/biz", "moduleId": 2}},
		{"module add", "POST", "/api/v1/sys/module/add", map[string]any{"code": "gen", "title": "gen", "sort": 3}},
		{"module update", "PUT", "/api/v1/sys/module/2", map[string]any{"code": "business", "title": "业务中心", "sort": 2}},
	}
	for _, s := range steps {
		g := gen()
		k.Do(s.method, s.path, admin, s.body).Expect(t, s.name, 200, 0)
		if gen() != g+1 {
			t.Errorf("%s: generation %d → %d, want +1", s.name, g, gen())
		}
	}
	if m := modulesOf(t, k, admin); m.Modules[1].Title != "业务中心" || len(m.Modules) != 3 {
		t.Fatalf("portal after the module changes = %+v", m)
	}
	// Failed changes leave the generation alone.
	g := gen()
	k.Do("DELETE", "/api/v1/sys/module/1", admin, nil).Expect(t, "protected", 200, 42013)
	if gen() != g {
		t.Errorf("a refused change moved the generation")
	}
}
