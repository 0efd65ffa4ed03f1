//go:build !unit

package recycle_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/ent/sysuserrecoverycode"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const (
	api      = "/api/v1"
	cPage    = "GET:/api/v1/sys/recycle/{type}/page"
	cRestore = "POST:/api/v1/sys/recycle/{type}/{id}/restore"
	cPurge   = "DELETE:/api/v1/sys/recycle/{type}/{id}"
	userPw   = "User#Passw0rd1"
)

type env struct {
	t     *testing.T
	k     *kerneltest.Kernel
	c     *ent.Client
	ctx   context.Context
	admin string
}

func setup(t *testing.T) *env {
	t.Helper()
	k := kerneltest.Start(t, nil)
	return &env{t: t, k: k, c: k.Ent(), ctx: context.Background(), admin: k.Admin()}
}

func (e *env) expect(what string, r kerneltest.Reply, code errcode.Code) kerneltest.Reply {
	e.t.Helper()
	return r.ExpectCode(e.t, what, code)
}

type item struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	Code          *string `json:"code"`
	DeletedAt     *string `json:"deletedAt"`
	DeletedBy     *int64  `json:"deletedBy"`
	DeletedByName *string `json:"deletedByName"`
}

type page struct {
	Total int    `json:"total"`
	Items []item `json:"items"`
}

func (e *env) page(tok, typ string) page {
	e.t.Helper()
	r := e.expect("page "+typ, e.k.Do("GET", api+"/sys/recycle/"+typ+"/page?Current=1&Size=100", tok, nil), 0)
	var p page
	r.Decode(e.t, &p)
	return p
}

func (e *env) listed(tok, typ string, id int64) *item {
	e.t.Helper()
	for _, it := range e.page(tok, typ).Items {
		if it.ID == id {
			return &it
		}
	}
	return nil
}

func (e *env) restore(tok, typ string, id int64) kerneltest.Reply {
	e.t.Helper()
	return e.k.Do("POST", fmt.Sprintf("%s/sys/recycle/%s/%d/restore", api, typ, id), tok, nil)
}

func (e *env) purge(tok, typ string, id int64) kerneltest.Reply {
	e.t.Helper()
	return e.k.Do("DELETE", fmt.Sprintf("%s/sys/recycle/%s/%d", api, typ, id), tok, nil)
}

// typeCase is one recycle-bin type: how to make a live row, where the
// owning area deletes it, how to make a live row taking its unique key
// (nil: the type has none), and whether the row is live.
type typeCase struct {
	typ    string
	make   func(e *env, n int) int64
	delete string // path of the owning area's DELETE, %d = id
	clone  func(e *env, id int64) int64
	live   func(e *env, id int64) (exists, live bool)
}

func cases() []typeCase {
	return []typeCase{
		{"user", func(e *env, n int) int64 {
			return e.c.SysUser.Create().SetAccount(fmt.Sprintf("ru%d", n)).SetName("recycled user").SetOrgID(1).SaveX(e.ctx).ID
		}, "/sys/user/%d", func(e *env, id int64) int64 {
			u := e.c.SysUser.GetX(e.ctx, id)
			return e.c.SysUser.Create().SetAccount(u.Account).SetName("taker").SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysUser.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"role", func(e *env, n int) int64 {
			return e.c.SysRole.Create().SetName("recycled role").SetCode(fmt.Sprintf("rr%d", n)).SaveX(e.ctx).ID
		}, "/sys/role/%d", func(e *env, id int64) int64 {
			return e.c.SysRole.Create().SetName("taker").SetCode(e.c.SysRole.GetX(e.ctx, id).Code).SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysRole.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"job", func(e *env, n int) int64 {
			return newJob(e, fmt.Sprintf("rj%d", n))
		}, "/sys/job/%d", func(e *env, id int64) int64 {
			return newJob(e, e.c.SysJob.GetX(e.ctx, id).Code)
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysJob.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"org", func(e *env, n int) int64 {
			return e.c.SysOrg.Create().SetName("recycled org").SetCode(fmt.Sprintf("ro%d", n)).SetParentID(1).SaveX(e.ctx).ID
		}, "/sys/org/%d", func(e *env, id int64) int64 {
			return e.c.SysOrg.Create().SetName("taker").SetCode(e.c.SysOrg.GetX(e.ctx, id).Code).SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysOrg.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"position", func(e *env, n int) int64 {
			return e.c.SysPosition.Create().SetName("recycled position").SetCode(fmt.Sprintf("rp%d", n)).SaveX(e.ctx).ID
		}, "/sys/position/%d", nil, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysPosition.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"module", func(e *env, n int) int64 {
			return e.c.SysModule.Create().SetTitle("recycled module").SetCode(fmt.Sprintf("rm%d", n)).SaveX(e.ctx).ID
		}, "/sys/module/%d", func(e *env, id int64) int64 {
			return e.c.SysModule.Create().SetTitle("taker").SetCode(e.c.SysModule.GetX(e.ctx, id).Code).SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysModule.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"config", func(e *env, n int) int64 {
			return e.c.SysConfig.Create().SetName("recycled config").SetConfigKey(fmt.Sprintf("app.recycled%d", n)).SetConfigValue("v").SaveX(e.ctx).ID
		}, "/sys/config/%d", func(e *env, id int64) int64 {
			return e.c.SysConfig.Create().SetName("taker").SetConfigKey(e.c.SysConfig.GetX(e.ctx, id).ConfigKey).SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysConfig.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"dict", func(e *env, n int) int64 {
			return e.c.SysDictType.Create().SetName("recycled dict").SetCode(fmt.Sprintf("rd%d", n)).SaveX(e.ctx).ID
		}, "/sys/dict/type/%d", func(e *env, id int64) int64 {
			return e.c.SysDictType.Create().SetName("taker").SetCode(e.c.SysDictType.GetX(e.ctx, id).Code).SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysDictType.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"dictItem", func(e *env, n int) int64 {
			return e.c.SysDictItem.Create().SetDictTypeCode("gender").SetLabel("recycled item").SetValue(fmt.Sprintf("ri%d", n)).SaveX(e.ctx).ID
		}, "/sys/dict/item/%d", func(e *env, id int64) int64 {
			it := e.c.SysDictItem.GetX(e.ctx, id)
			return e.c.SysDictItem.Create().SetDictTypeCode(it.DictTypeCode).SetLabel("taker").SetValue(it.Value).SaveX(e.ctx).ID
		}, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysDictItem.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"menu", func(e *env, n int) int64 {
			return e.c.SysMenu.Create().SetType(2).SetTitle(fmt.Sprintf("recycled menu %d", n)).SetParentID(300).SetPath(fmt.Sprintf("/recycled/%d", n)).SaveX(e.ctx).ID
		}, "/sys/menu/%d", nil, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysMenu.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
		{"file", func(e *env, n int) int64 {
			return e.c.SysFile.Create().SetOriginalName(fmt.Sprintf("recycled%d.txt", n)).SetStoragePath(fmt.Sprintf("2026/recycled-%d.txt", n)).
				SetExtension(".txt").SetSizeBytes(1).SetCreateUserID(1).SaveX(e.ctx).ID
		}, "/sys/file/%d", nil, func(e *env, id int64) (bool, bool) {
			r, err := e.c.SysFile.Get(e.ctx, id)
			return err == nil, err == nil && !r.IsDelete && r.DeleteKey == 0
		}},
	}
}

func newJob(e *env, code string) int64 {
	return e.c.SysJob.Create().SetCode(code).SetName("recycled job").SetHandlerKind(1).SetHandlerName("test.none").
		SetTriggerKind(2).SetIntervalSeconds(3600).SetStatus(2).SaveX(e.ctx).ID
}

// TestEveryType deletes a row of each type through its own area, finds it
// in the bin, meets the unique conflict (42021) where the type has a unique
// key, restores it, deletes it again and purges it.
func TestEveryType(t *testing.T) {
	e := setup(t)
	adminID := e.c.SysUser.Query().Where(sysuser.Account("superAdmin")).OnlyIDX(e.ctx)
	for n, tc := range cases() {
		t.Run(tc.typ, func(t *testing.T) {
			e.t = t
			id := tc.make(e, n)
			del := func() {
				e.expect("delete through the owning area", e.k.Do("DELETE", api+fmt.Sprintf(tc.delete, id), e.admin, nil), 0)
			}
			del()
			it := e.listed(e.admin, tc.typ, id)
			if it == nil {
				t.Fatalf("deleted %s %d is not in the bin", tc.typ, id)
			}
			if it.DeletedAt == nil || it.DeletedBy == nil || *it.DeletedBy != adminID || it.Name == "" {
				t.Fatalf("bin item = %+v, want deletedAt, deletedBy %d and a name", it, adminID)
			}
			if tc.clone != nil {
				taker := tc.clone(e, id)
				e.expect("restore while the key is taken", e.restore(e.admin, tc.typ, id), errcode.RecycleUniqueConflict)
				if _, live := tc.live(e, id); live {
					t.Fatal("a refused restore brought the row back")
				}
				e.expect("delete the taker", e.k.Do("DELETE", api+fmt.Sprintf(tc.delete, taker), e.admin, nil), 0)
			}
			e.expect("restore", e.restore(e.admin, tc.typ, id), 0)
			if _, live := tc.live(e, id); !live {
				t.Fatal("restored row is not live")
			}
			if e.listed(e.admin, tc.typ, id) != nil {
				t.Fatal("restored row is still in the bin")
			}
			e.expect("restore a live row", e.restore(e.admin, tc.typ, id), errcode.RecycleNotFound)
			e.expect("purge a live row", e.purge(e.admin, tc.typ, id), errcode.RecycleNotFound)
			del()
			e.expect("purge", e.purge(e.admin, tc.typ, id), 0)
			if exists, _ := tc.live(e, id); exists {
				t.Fatal("purged row still exists")
			}
			e.expect("restore a purged row", e.restore(e.admin, tc.typ, id), errcode.RecycleNotFound)
			e.expect("purge twice", e.purge(e.admin, tc.typ, id), errcode.RecycleNotFound)
		})
	}
	e.t = t
	// Restores and purges are in the operation log under their title keys.
	for _, title := range []string{"op.POST:/api/v1/sys/recycle/{type}/{id}/restore", "op.DELETE:/api/v1/sys/recycle/{type}/{id}"} {
		if n := e.c.SysOpLog.Query().Where(sysoplog.Title(title)).CountX(e.ctx); n < len(cases()) {
			t.Errorf("operation log has %d rows titled %q, want at least %d", n, title, len(cases()))
		}
	}
}

func TestBadRequests(t *testing.T) {
	e := setup(t)
	e.expect("page of an unknown type", e.k.Do("GET", api+"/sys/recycle/notice/page", e.admin, nil), errcode.RecycleInvalidType)
	e.expect("restore of an unknown type", e.restore(e.admin, "sessions", 5), errcode.RecycleInvalidType)
	e.expect("purge of an unknown type", e.purge(e.admin, "x", 5), errcode.RecycleInvalidType)
	e.expect("restore of an unknown id", e.restore(e.admin, "user", 987654321), errcode.RecycleNotFound)
	e.expect("purge of an unknown id", e.purge(e.admin, "role", 987654321), errcode.RecycleNotFound)
	e.expect("bad id", e.k.Do("POST", api+"/sys/recycle/user/abc/restore", e.admin, nil), errcode.RequestInvalid)
	e.expect("page size beyond the limit", e.k.Do("GET", api+"/sys/recycle/user/page?Size=100000", e.admin, nil), errcode.PageSizeExceeded)
	// The type matches case-insensitively.
	e.expect("page of USER", e.k.Do("GET", api+"/sys/recycle/USER/page", e.admin, nil), 0)
}

// TestParentDeleted: a child whose parent is deleted answers 42032 until
// the parent is restored; a purge of a parent with child rows is refused.
func TestParentDeleted(t *testing.T) {
	e := setup(t)
	// Orgs.
	parent := e.c.SysOrg.Create().SetName("p").SetCode("pd-parent").SetParentID(1).SaveX(e.ctx).ID
	child := e.c.SysOrg.Create().SetName("c").SetCode("pd-child").SetParentID(parent).SaveX(e.ctx).ID
	e.expect("delete child org", e.k.Do("DELETE", fmt.Sprintf("%s/sys/org/%d", api, child), e.admin, nil), 0)
	e.expect("delete parent org", e.k.Do("DELETE", fmt.Sprintf("%s/sys/org/%d", api, parent), e.admin, nil), 0)
	r := e.expect("restore child org", e.restore(e.admin, "org", child), errcode.RecycleParentDeleted)
	if r.Args["parent"] != "org" {
		t.Errorf("args = %v, want parent org", r.Args)
	}
	e.expect("purge parent org with a child row", e.purge(e.admin, "org", parent), errcode.OrgHasChildren)
	e.expect("restore parent org", e.restore(e.admin, "org", parent), 0)
	e.expect("restore child org", e.restore(e.admin, "org", child), 0)

	// Menus: a button under a deleted page, a top-level menu of a deleted module.
	pg := e.c.SysMenu.Create().SetType(2).SetTitle("pd page").SetParentID(300).SetPath("/pd").SaveX(e.ctx).ID
	btn := e.c.SysMenu.Create().SetType(3).SetTitle("pd button").SetParentID(pg).SaveX(e.ctx).ID
	e.expect("delete button", e.k.Do("DELETE", fmt.Sprintf("%s/sys/menu/%d", api, btn), e.admin, nil), 0)
	e.expect("delete page", e.k.Do("DELETE", fmt.Sprintf("%s/sys/menu/%d", api, pg), e.admin, nil), 0)
	e.expect("restore button", e.restore(e.admin, "menu", btn), errcode.RecycleParentDeleted)
	e.expect("purge page with a child row", e.purge(e.admin, "menu", pg), errcode.MenuHasChildren)
	e.expect("purge button", e.purge(e.admin, "menu", btn), 0)
	e.expect("purge page", e.purge(e.admin, "menu", pg), 0)

	mod := e.c.SysModule.Create().SetCode("pd-mod").SetTitle("pd mod").SaveX(e.ctx).ID
	top := e.c.SysMenu.Create().SetType(1).SetTitle("pd top").SetModuleID(mod).SaveX(e.ctx).ID
	e.expect("delete top menu", e.k.Do("DELETE", fmt.Sprintf("%s/sys/menu/%d", api, top), e.admin, nil), 0)
	e.expect("delete module", e.k.Do("DELETE", fmt.Sprintf("%s/sys/module/%d", api, mod), e.admin, nil), 0)
	e.expect("restore top menu of a deleted module", e.restore(e.admin, "menu", top), errcode.RecycleParentDeleted)
	e.expect("purge module a menu row names", e.purge(e.admin, "module", mod), errcode.ModuleHasMenus)
	e.expect("restore module", e.restore(e.admin, "module", mod), 0)
	e.expect("restore top menu", e.restore(e.admin, "menu", top), 0)

	// Dictionary: an item of a deleted type; restoring the type brings back
	// the items deleted with it, and the cached items are dropped.
	e.c.SysDictType.Create().SetCode("pd_dict").SetName("pd").ExecX(e.ctx)
	dt := e.c.SysDictType.Query().AllX(e.ctx)
	var typeID int64
	for _, d := range dt {
		if d.Code == "pd_dict" {
			typeID = d.ID
		}
	}
	it := e.c.SysDictItem.Create().SetDictTypeCode("pd_dict").SetLabel("one").SetValue("1").SaveX(e.ctx).ID
	items := func() []map[string]any {
		r := e.expect("dict items", e.k.Do("GET", api+"/sys/dict/items/pd_dict", e.admin, nil), 0)
		var out []map[string]any
		r.Decode(t, &out)
		return out
	}
	if n := len(items()); n != 1 {
		t.Fatalf("items before = %d, want 1", n)
	}
	e.expect("delete type", e.k.Do("DELETE", fmt.Sprintf("%s/sys/dict/type/%d", api, typeID), e.admin, nil), 0)
	if n := len(items()); n != 0 {
		t.Fatalf("items of the deleted type = %d, want 0", n)
	}
	e.expect("restore item of a deleted type", e.restore(e.admin, "dictItem", it), errcode.RecycleParentDeleted)
	e.expect("restore type", e.restore(e.admin, "dict", typeID), 0)
	if n := len(items()); n != 1 {
		t.Fatalf("items after the type's restore = %d, want 1 (restored with it, cache dropped)", n)
	}
	// Seeded types and items are never purged.
	e.expect("purge a seeded dict type", e.purge(e.admin, "dict", 1), errcode.SeedDataProtected)

	// A user in a deleted org.
	org := e.c.SysOrg.Create().SetName("u").SetCode("pd-uorg").SetParentID(1).SaveX(e.ctx).ID
	u := e.c.SysUser.Create().SetAccount("pduser").SetName("pd").SetOrgID(org).SaveX(e.ctx).ID
	e.expect("delete user", e.k.Do("DELETE", fmt.Sprintf("%s/sys/user/%d", api, u), e.admin, nil), 0)
	e.expect("delete org", e.k.Do("DELETE", fmt.Sprintf("%s/sys/org/%d", api, org), e.admin, nil), 0)
	e.expect("restore user of a deleted org", e.restore(e.admin, "user", u), errcode.RecycleParentDeleted)
}

// TestPermissionsAndReauth: each operation needs its code; the restore
// and the purge are +R (refused without a re-authentication window while
// TOTP is on).
func TestPermissionsAndReauth(t *testing.T) {
	e := setup(t)
	e.k.User("binreader", userPw, cPage)
	reader := e.k.Login("binreader", userPw).AccessToken
	id := e.c.SysPosition.Create().SetName("perm").SetCode("perm").SaveX(e.ctx).ID
	e.expect("delete", e.k.Do("DELETE", fmt.Sprintf("%s/sys/position/%d", api, id), e.admin, nil), 0)
	if e.listed(reader, "position", id) == nil {
		t.Fatal("the reader does not see the deleted position")
	}
	e.expect("restore without the code", e.restore(reader, "position", id), errcode.NoPermission)
	e.expect("purge without the code", e.purge(reader, "position", id), errcode.NoPermission)
	e.expect("page without a token", e.k.Do("GET", api+"/sys/recycle/user/page", "", nil), errcode.TokenInvalid)

	if err := e.k.Settings().Set(e.ctx, "sys.security.totp.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	r := e.purge(e.admin, "position", id)
	if r.Status != http.StatusForbidden || r.Code != int(errcode.ReauthRequired) {
		t.Fatalf("purge without re-authentication = HTTP %d code %d, want 403 40024", r.Status, r.Code)
	}
	r = e.restore(e.admin, "position", id)
	if r.Status != http.StatusForbidden || r.Code != int(errcode.ReauthRequired) {
		t.Fatalf("restore without re-authentication = HTTP %d code %d, want 403 40024", r.Status, r.Code)
	}
	e.expect("re-authenticate", e.k.Do("POST", api+"/auth/reauth", e.admin, map[string]any{"method": "password", "password": kerneltest.AdminPassword}), 0)
	e.expect("restore after re-authentication", e.restore(e.admin, "position", id), 0)
	e.expect("delete again", e.k.Do("DELETE", fmt.Sprintf("%s/sys/position/%d", api, id), e.admin, nil), 0)
	e.expect("purge after re-authentication", e.purge(e.admin, "position", id), 0)
}

// scoped creates an administrator in org with the recycle codes and a data
// scope on its role and returns its token.
func (e *env) scoped(account string, org int64, scopeType int, extra ...string) string {
	e.t.Helper()
	codes := []string{cPage, cRestore, cPurge}
	for _, typ := range []string{"user", "org", "role", "menu"} { // the areas the scope tests act on
		restore, purge := areaCodes(typ)
		codes = append(codes, restore[0], purge)
	}
	id := e.k.User(account, userPw, append(codes, extra...)...)
	e.c.SysUser.UpdateOneID(id).SetOrgID(org).ExecX(e.ctx)
	role := e.c.SysUserRole.Query().Where(sysuserrole.UserID(id)).OnlyX(e.ctx).RoleID
	e.expect("data scope of "+account, e.k.Do("PUT", api+"/sys/role/datascope", e.admin,
		map[string]any{"roleId": role, "scopeType": scopeType}), 0)
	return e.k.Login(account, userPw).AccessToken
}

// TestDataScopeAndAuthority: users and orgs outside a restricted caller's
// scope are neither listed nor restored; a super-admin row is only the
// super-admin's to restore and nobody's to purge; a role carrying a wider
// data scope than the caller's is refused (41006).
func TestDataScopeAndAuthority(t *testing.T) {
	e := setup(t)
	orgA := e.c.SysOrg.Create().SetName("A").SetCode("ds-a").SetParentID(1).SaveX(e.ctx).ID
	orgB := e.c.SysOrg.Create().SetName("B").SetCode("ds-b").SetParentID(1).SaveX(e.ctx).ID
	mine := e.c.SysUser.Create().SetAccount("ds-mine").SetName("mine").SetOrgID(orgA).SaveX(e.ctx).ID
	theirs := e.c.SysUser.Create().SetAccount("ds-theirs").SetName("theirs").SetOrgID(orgB).SaveX(e.ctx).ID
	childA := e.c.SysOrg.Create().SetName("A1").SetCode("ds-a1").SetParentID(orgA).SaveX(e.ctx).ID
	childB := e.c.SysOrg.Create().SetName("B1").SetCode("ds-b1").SetParentID(orgB).SaveX(e.ctx).ID
	for _, p := range []string{
		fmt.Sprintf("/sys/user/%d", mine), fmt.Sprintf("/sys/user/%d", theirs),
		fmt.Sprintf("/sys/org/%d", childA), fmt.Sprintf("/sys/org/%d", childB),
	} {
		e.expect("delete "+p, e.k.Do("DELETE", api+p, e.admin, nil), 0)
	}
	tok := e.scoped("dsadmin", orgA, 3) // own org and below

	if e.listed(tok, "user", mine) == nil || e.listed(tok, "user", theirs) != nil {
		t.Fatal("the user page does not follow the data scope")
	}
	e.expect("restore a user out of scope", e.restore(tok, "user", theirs), errcode.UserOutOfDataScope)
	e.expect("purge a user out of scope", e.purge(tok, "user", theirs), errcode.UserOutOfDataScope)
	e.expect("restore a user in scope", e.restore(tok, "user", mine), 0)

	if e.listed(tok, "org", childA) == nil || e.listed(tok, "org", childB) != nil {
		t.Fatal("the org page does not follow the data scope (a deleted org below the caller's org is in it)")
	}
	e.expect("restore an org out of scope", e.restore(tok, "org", childB), errcode.RecycleNotFound)
	e.expect("restore an org in scope", e.restore(tok, "org", childA), 0)

	// A deleted super-admin: the restricted caller with an unrestricted
	// scope still cannot restore it; the super-admin can, nobody purges it.
	all := e.scoped("dsall", orgA, 1)
	sa := e.c.SysUser.Create().SetAccount("ds-sa").SetName("sa").SetIsSuperAdmin(true).SetOrgID(orgA).SaveX(e.ctx).ID
	e.c.SysUser.UpdateOneID(sa).SetIsDelete(true).SetDeleteKey(sa).ExecX(e.ctx)
	e.expect("restore a super-admin (not the super-admin)", e.restore(all, "user", sa), errcode.SuperAdminProtected)
	e.expect("purge a super-admin (super-admin)", e.purge(e.admin, "user", sa), errcode.SuperAdminProtected)
	e.expect("restore a super-admin (super-admin)", e.restore(e.admin, "user", sa), 0)

	// A role whose deleted data scope is "all" is beyond an own-org caller.
	wide := e.c.SysRole.Create().SetName("wide").SetCode("ds-wide").SaveX(e.ctx).ID
	e.expect("wide scope", e.k.Do("PUT", api+"/sys/role/datascope", e.admin, map[string]any{"roleId": wide, "scopeType": 1}), 0)
	e.expect("delete wide role", e.k.Do("DELETE", fmt.Sprintf("%s/sys/role/%d", api, wide), e.admin, nil), 0)
	e.expect("restore a wider role", e.restore(tok, "role", wide), errcode.AuthorityExceeded)
	e.expect("purge a wider role", e.purge(tok, "role", wide), errcode.AuthorityExceeded)
	e.expect("restore a wider role (super-admin)", e.restore(e.admin, "role", wide), 0)
	if n := e.c.SysRoleDataScope.Query().Where(sysroledatascope.RoleID(wide), sysroledatascope.IsDelete(false)).CountX(e.ctx); n != 1 {
		t.Fatalf("live data scopes of the restored role = %d, want 1 (restored with it)", n)
	}

	// A menu carrying a code the caller does not hold.
	m := e.c.SysMenu.Create().SetType(3).SetTitle("ds button").SetParentID(310).SetPermission("GET:/api/v1/sys/config/page").SaveX(e.ctx).ID
	e.expect("delete menu", e.k.Do("DELETE", fmt.Sprintf("%s/sys/menu/%d", api, m), e.admin, nil), 0)
	e.expect("restore a menu with a code not held", e.restore(tok, "menu", m), errcode.AuthorityExceeded)
}

// TestPurgeRemovesDependents: a purged user's links, bindings, sessions and
// MFA rows go, and the account name is free; a purged role's grants and
// scopes go; a purged menu's grants go; a restored menu's grant is back in
// the holder's permission set at once.
func TestPurgeRemovesDependents(t *testing.T) {
	e := setup(t)
	uid := e.k.User("dep", userPw, "GET:/api/v1/ping")
	e.k.Login("dep", userPw)
	e.c.SysUserExternal.Create().SetUserID(uid).SetProvider("oidc").SetSubject("dep-sub").ExecX(e.ctx)
	e.c.SysUserRecoveryCode.Create().SetUserID(uid).SetCodeHash("h").SetCreateTime(e.c.SysUser.GetX(e.ctx, uid).CreateTime).ExecX(e.ctx)
	role := e.c.SysUserRole.Query().Where(sysuserrole.UserID(uid)).OnlyX(e.ctx).RoleID
	menuID := e.c.SysRoleMenu.Query().Where(sysrolemenu.RoleID(role)).OnlyX(e.ctx).MenuID

	// The grant through a menu comes back with the menu.
	perms := func(tok string) []string {
		var codes []string
		e.expect("permissions", e.k.Do("GET", api+"/personal/permissions", tok, nil), 0).Decode(t, &codes)
		return codes
	}
	tok := e.k.Login("dep", userPw).AccessToken
	e.expect("delete the menu", e.k.Do("DELETE", fmt.Sprintf("%s/sys/menu/%d", api, menuID), e.admin, nil), 0)
	if slices.Contains(perms(tok), "GET:/api/v1/ping") {
		t.Fatal("the deleted menu's code is still held")
	}
	e.expect("restore the menu", e.restore(e.admin, "menu", menuID), 0)
	if !slices.Contains(perms(tok), "GET:/api/v1/ping") {
		t.Fatal("the restored menu's code is not held again (permission cache not dropped)")
	}

	e.expect("delete the user", e.k.Do("DELETE", fmt.Sprintf("%s/sys/user/%d", api, uid), e.admin, nil), 0)
	e.expect("purge the user", e.purge(e.admin, "user", uid), 0)
	checks := map[string]int{
		"role links": e.c.SysUserRole.Query().Where(sysuserrole.UserID(uid)).CountX(e.ctx),
		"bindings":   e.c.SysUserExternal.Query().Where(sysuserexternal.UserID(uid)).CountX(e.ctx),
		"sessions":   e.c.SysSession.Query().Where(syssession.UserID(uid)).CountX(e.ctx),
		"recovery":   e.c.SysUserRecoveryCode.Query().Where(sysuserrecoverycode.UserID(uid)).CountX(e.ctx),
	}
	for what, n := range checks {
		if n != 0 {
			t.Errorf("%s of the purged user = %d, want 0", what, n)
		}
	}
	// The account name is free.
	r := e.expect("create the same account", e.k.Do("POST", api+"/sys/user", e.admin, map[string]any{"account": "dep", "name": "again"}), 0)
	var out struct {
		ID int64 `json:"id"`
	}
	r.Decode(t, &out)
	if out.ID == uid || out.ID == 0 {
		t.Fatalf("new account id %d", out.ID)
	}

	e.expect("delete the role", e.k.Do("DELETE", fmt.Sprintf("%s/sys/role/%d", api, role), e.admin, nil), 0)
	e.expect("purge the role", e.purge(e.admin, "role", role), 0)
	if n := e.c.SysRoleMenu.Query().Where(sysrolemenu.RoleID(role)).CountX(e.ctx) +
		e.c.SysRoleDataScope.Query().Where(sysroledatascope.RoleID(role)).CountX(e.ctx); n != 0 {
		t.Fatalf("rows of the purged role = %d, want 0", n)
	}

	// A purged menu's grants go.
	r2 := e.c.SysRole.Create().SetName("g").SetCode("dep-g").SaveX(e.ctx).ID
	m := e.c.SysMenu.Create().SetType(3).SetTitle("dep button").SetParentID(310).SaveX(e.ctx).ID
	e.c.SysRoleMenu.Create().SetRoleID(r2).SetMenuID(m).ExecX(e.ctx)
	e.expect("delete menu", e.k.Do("DELETE", fmt.Sprintf("%s/sys/menu/%d", api, m), e.admin, nil), 0)
	e.expect("purge menu", e.purge(e.admin, "menu", m), 0)
	if n := e.c.SysRoleMenu.Query().Where(sysrolemenu.MenuID(m)).CountX(e.ctx); n != 0 {
		t.Fatalf("grants of the purged menu = %d, want 0", n)
	}

	// A purged org leaves no custom data scope naming it.
	org := e.c.SysOrg.Create().SetName("o").SetCode("dep-o").SetParentID(1).SaveX(e.ctx).ID
	e.expect("custom scope", e.k.Do("PUT", api+"/sys/role/datascope", e.admin,
		map[string]any{"roleId": r2, "scopeType": 5, "customOrgIds": []int64{1, org}}), 0)
	e.expect("delete org", e.k.Do("DELETE", fmt.Sprintf("%s/sys/org/%d", api, org), e.admin, nil), 0)
	e.expect("purge org", e.purge(e.admin, "org", org), 0)
	sc := e.c.SysRoleDataScope.Query().Where(sysroledatascope.RoleID(r2), sysroledatascope.IsDelete(false)).OnlyX(e.ctx)
	if sc.CustomOrgIds == nil || *sc.CustomOrgIds != "1" {
		t.Fatalf("custom org ids after the purge = %v, want 1", sc.CustomOrgIds)
	}
}

// TestConfigCache: a restored config row's value is read again at once
// (the cached miss the delete left is dropped).
func TestConfigCache(t *testing.T) {
	e := setup(t)
	id := e.c.SysConfig.Create().SetName("cached").SetConfigKey("app.recycleCached").SetConfigValue("v1").SaveX(e.ctx).ID
	value := func() *string {
		var v *string
		e.expect("value", e.k.Do("GET", api+"/sys/config/value/app.recycleCached", e.admin, nil), 0).Decode(t, &v)
		return v
	}
	if v := value(); v == nil || *v != "v1" {
		t.Fatalf("value before = %v, want v1", v)
	}
	e.expect("delete config", e.k.Do("DELETE", fmt.Sprintf("%s/sys/config/%d", api, id), e.admin, nil), 0)
	if v := value(); v != nil {
		t.Fatalf("value of the deleted row = %q, want null", *v)
	}
	e.expect("restore config", e.restore(e.admin, "config", id), 0)
	if v := value(); v == nil || *v != "v1" {
		t.Fatalf("value after the restore = %v, want v1 (cache dropped)", v)
	}
}

// TestFilePurgeContent: a purged file's stored content stays while another
// file row (an instant upload) shares it, and goes with the last row.
func TestFilePurgeContent(t *testing.T) {
	e := setup(t)
	content := []byte("%PDF-1.4\n% recycle bin test\n%%EOF\n")
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile("file", "a.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequestWithContext(t.Context(), "POST", api+"/sys/file/upload", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.admin)
	var a struct {
		ID          int64  `json:"id"`
		StoragePath string `json:"storagePath"`
	}
	e.expect("upload", e.k.Send(req), 0).Decode(t, &a)
	h := sha256.Sum256(content)
	var init struct {
		Uploaded bool `json:"uploaded"`
		File     *struct {
			ID          int64  `json:"id"`
			StoragePath string `json:"storagePath"`
		} `json:"file"`
	}
	e.expect("instant upload", e.k.Do("POST", api+"/sys/file/chunk/init", e.admin, map[string]any{
		"fileHash": hex.EncodeToString(h[:]), "fileName": "b.pdf", "totalSize": len(content), "chunkCount": 1,
	}), 0).Decode(t, &init)
	if !init.Uploaded || init.File == nil || init.File.StoragePath != a.StoragePath {
		t.Fatalf("instant upload = %+v, want a second row sharing %s", init, a.StoragePath)
	}
	cfg := e.k.Config()
	store, err := storage.New(e.ctx, cfg.Service.Upload, cfg.DataPath())
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []int64{a.ID, init.File.ID} {
		e.expect("delete file", e.k.Do("DELETE", fmt.Sprintf("%s/sys/file/%d", api, id), e.admin, nil), 0)
		e.expect("purge file", e.purge(e.admin, "file", id), 0)
		_, err := store.Size(e.ctx, a.StoragePath)
		switch {
		case i == 0 && err != nil:
			t.Fatalf("content shared with a live row is gone after the first purge: %v", err)
		case i == 1 && !errors.Is(err, storage.ErrNotFound):
			t.Fatalf("content after the last row's purge: err %v, want not found", err)
		}
	}
}

// TestAreaCodes: the recycle codes alone restore and purge nothing: a
// restore needs one of the owning area's write codes, a purge its delete
// code (41007), for every type; with them it works.
func TestAreaCodes(t *testing.T) {
	e := setup(t)
	e.k.User("binonly", userPw, cPage, cRestore, cPurge)
	binOnly := e.k.Login("binonly", userPw).AccessToken

	// The row of each type, created live and deleted through its area's
	// own route; two of each (one to restore, one to purge).
	paths := map[string]string{"config": "/sys/config/%d", "dict": "/sys/dict/type/%d", "dictitem": "/sys/dict/item/%d",
		"module": "/sys/module/%d", "position": "/sys/position/%d", "job": "/sys/job/%d"}
	create := map[string]func(n string) int64{
		"config": func(n string) int64 {
			return e.c.SysConfig.Create().SetName(n).SetConfigKey("app.ac" + n).SetConfigValue("v").SaveX(e.ctx).ID
		},
		"dict": func(n string) int64 { return e.c.SysDictType.Create().SetName(n).SetCode("ac_" + n).SaveX(e.ctx).ID },
		"dictitem": func(n string) int64 {
			return e.c.SysDictItem.Create().SetDictTypeCode("gender").SetLabel(n).SetValue("ac" + n).SaveX(e.ctx).ID
		},
		"module":   func(n string) int64 { return e.c.SysModule.Create().SetTitle(n).SetCode("ac_" + n).SaveX(e.ctx).ID },
		"position": func(n string) int64 { return e.c.SysPosition.Create().SetName(n).SetCode("ac_" + n).SaveX(e.ctx).ID },
		"job": func(n string) int64 {
			return e.c.SysJob.Create().SetCode("ac-" + n).SetName(n).SetHandlerKind(1).SetHandlerName("kernel.sessionCleanup").
				SetTriggerKind(1).SetCronExpression("0 0 3 * * ?").SaveX(e.ctx).ID
		},
	}
	for typ, mk := range create {
		var ids [2]int64
		for i := range ids {
			ids[i] = mk(fmt.Sprintf("%s%d", typ, i))
			e.expect("delete "+typ, e.k.Do("DELETE", api+fmt.Sprintf(paths[typ], ids[i]), e.admin, nil), 0)
		}
		restore, purge := areaCodes(typ)
		e.expect("restore "+typ+" with the recycle codes only", e.restore(binOnly, typ, ids[0]), errcode.AreaPermissionRequired)
		e.expect("purge "+typ+" with the recycle codes only", e.purge(binOnly, typ, ids[1]), errcode.AreaPermissionRequired)

		acct := "ac" + typ
		e.k.User(acct, userPw, cPage, cRestore, cPurge, restore[len(restore)-1], purge)
		tok := e.k.Login(acct, userPw).AccessToken
		e.expect("restore "+typ+" with the area's update code", e.restore(tok, typ, ids[0]), 0)
		e.expect("purge "+typ+" with the area's delete code", e.purge(tok, typ, ids[1]), 0)
	}
}

// areaCodes are the owning areas' codes of each type (the modules declare
// them with their kinds): those of which a restore needs one, and the one
// a purge needs.
func areaCodes(typ string) (restore []string, purge string) {
	c := map[string][2]string{
		"user": {"/api/v1/sys/user", "/api/v1/sys/user/{id}"}, "role": {"/api/v1/sys/role/add", "/api/v1/sys/role/{id}"},
		"job": {"/api/v1/sys/job", "/api/v1/sys/job/{id}"}, "org": {"/api/v1/sys/org/add", "/api/v1/sys/org/{id}"},
		"position": {"/api/v1/sys/position/add", "/api/v1/sys/position/{id}"}, "module": {"/api/v1/sys/module/add", "/api/v1/sys/module/{id}"},
		"config": {"/api/v1/sys/config", "/api/v1/sys/config/{id}"}, "dict": {"/api/v1/sys/dict/type", "/api/v1/sys/dict/type/{id}"},
		"dictitem": {"/api/v1/sys/dict/item", "/api/v1/sys/dict/item/{id}"}, "menu": {"/api/v1/sys/menu/add", "/api/v1/sys/menu/{id}"},
	}[typ]
	if typ == "file" {
		return []string{"POST:/api/v1/sys/file/upload"}, "DELETE:/api/v1/sys/file/{id}"
	}
	return []string{"POST:" + c[0], "PUT:" + c[1]}, "DELETE:" + c[1]
}
