//go:build !unit

package meta_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/host/kerneltest"
)

type node struct {
	ID        int64   `json:"id"`
	Component *string `json:"component"`
	Children  []*node `json:"children"`
}

// TestErrorCatalogPage: the console's error-catalog page is seeded (menu
// 390 under 300, no buttons), a user granted it alone sees it in the
// sidebar and reads the catalog it shows.
func TestErrorCatalogPage(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	m := k.Ent().SysMenu.Query().Where(sysmenu.ID(390)).OnlyX(ctx)
	if m.ParentID != 300 || m.Type != 2 || m.Path == nil || *m.Path != "/system/errorcode" || m.Component == nil || *m.Component != "system/errorcode/index" ||
		m.Permission != "" || m.Icon == nil || *m.Icon == "" || m.Sort != 9 || m.Title != "错误码" {
		t.Fatalf("menu 390 = %+v", m)
	}
	if n := k.Ent().SysMenu.Query().Where(sysmenu.ParentID(390)).CountX(ctx); n != 0 {
		t.Fatalf("menu 390 has %d buttons, want none (the catalog needs no code)", n)
	}

	uid := k.User("reader", "Reader#Pass1")
	c := k.Ent()
	role := c.SysRole.Create().SetName("catalog").SetCode("catalog").SaveX(ctx)
	c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(390).ExecX(ctx)
	c.SysUserRole.Create().SetUserID(uid).SetRoleID(role.ID).ExecX(ctx)
	tok := k.Login("reader", "Reader#Pass1").AccessToken
	var menu []*node
	k.Do("GET", "/api/v1/personal/menu?moduleId=1", tok, nil).Expect(t, "sidebar", 200, 0).Decode(t, &menu)
	if len(menu) != 1 || len(menu[0].Children) != 1 || menu[0].Children[0].ID != 390 || *menu[0].Children[0].Component != "system/errorcode/index" {
		t.Fatalf("sidebar of a user granted 390 = %+v", menu)
	}
	var codes []struct {
		Code   int    `json:"code"`
		MsgKey string `json:"msgKey"`
	}
	k.Do("GET", "/api/v1/meta/error-codes", tok, nil).Expect(t, "catalog", 200, 0).Decode(t, &codes)
	if len(codes) < 50 || codes[0].MsgKey == "" {
		t.Fatalf("catalog = %d entries", len(codes))
	}
}
