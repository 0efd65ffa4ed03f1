package host_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/route"
)

// TestSeededMenusMatchRoutes checks both directions: every permission-gated
// route appears in a seeded menu button, and every seeded code names a real
// permission-gated route.
func TestSeededMenusMatchRoutes(t *testing.T) {
	k, _ := start(t, load(t, t.TempDir(), config.Development))
	gated := map[string]string{}
	for _, r := range k.Routes() {
		if r.Access == route.Permission {
			gated[r.PermissionCode()] = r.Method + " " + r.Path
		}
	}
	if len(gated) == 0 {
		t.Fatal("no permission-gated routes registered")
	}
	menus := k.Ent().SysMenu.Query().Where(sysmenu.PermissionNEQ("")).AllX(context.Background())
	seeded := map[string]int64{}
	for _, m := range menus {
		if m.Type != 3 {
			t.Errorf("menu %d (%s) carries permissions but is not a button", m.ID, m.Title)
		}
		for _, code := range authz.SplitCodes(m.Permission) {
			seeded[code] = m.ID
		}
	}
	for code, r := range gated {
		if _, ok := seeded[code]; !ok {
			t.Errorf("route %s (%s) is in no seeded menu button", r, code)
		}
	}
	for code, id := range seeded {
		if _, ok := gated[code]; !ok {
			t.Errorf("menu %d grants %s, which names no permission-gated route", id, code)
		}
	}
}
