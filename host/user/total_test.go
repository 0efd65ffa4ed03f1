package user_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"

	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// totalFilter is one page filter and the same filter as a direct query:
// the page's total must always equal the database's count (the cached
// total, host/pagetotal, never lags a committed write).
type totalFilter struct {
	name  string
	query url.Values
	where []predicate.SysUser
}

func totalFilters(roleID int64) []totalFilter {
	return []totalFilter{
		{"all", url.Values{}, nil},
		{"enabled", url.Values{"Enabled": {"true"}}, []predicate.SysUser{sysuser.Enabled(true)}},
		{"name", url.Values{"Name": {"tot-"}}, []predicate.SysUser{sysuser.NameContainsFold("tot-")}},
		{"org 4", url.Values{"OrgId": {"4"}}, []predicate.SysUser{sysuser.OrgID(4)}},
		{"role", url.Values{"RoleId": {strconv.FormatInt(roleID, 10)}}, nil},
	}
}

// checkTotals compares every filter's page total (read through k, possibly
// another replica) with the database.
func checkTotals(t *testing.T, step string, k *kerneltest.Kernel, tok string, roleID int64) {
	t.Helper()
	ctx := context.Background()
	for _, f := range totalFilters(roleID) {
		q := k.Ent().SysUser.Query().Where(sysuser.IsDelete(false)).Where(f.where...)
		if f.name == "role" {
			var ids []int64
			for _, l := range k.Ent().SysUserRole.Query().Where(sysuserrole.RoleID(roleID)).AllX(ctx) {
				ids = append(ids, l.UserID)
			}
			q = k.Ent().SysUser.Query().Where(sysuser.IsDelete(false), sysuser.IDIn(ids...))
		}
		want := q.CountX(ctx)
		r := k.Do("GET", base+"/page?"+f.query.Encode(), tok, nil).ExpectCode(t, "page "+f.name, 0)
		var p page
		r.Decode(t, &p)
		if p.Total != want {
			t.Fatalf("after %s: %s total %d, the database has %d", step, f.name, p.Total, want)
		}
	}
}

// totalSteps are the writes that change the user page's totals, each
// followed by a check of every filter's total. w is the kernel that
// writes, r the one that reads (the same one, or another replica).
func totalSteps(t *testing.T, w, r *kerneltest.Kernel) {
	wtok, rtok := w.Admin(), r.Admin()
	roleID := int64(3)
	var id int64
	do := func(what, method, path string, body any) kerneltest.Reply {
		t.Helper()
		return w.Do(method, path, wtok, body).ExpectCode(t, what, 0)
	}
	steps := []struct {
		name  string
		write func()
	}{
		{"create", func() {
			rep := do("create", "POST", base, map[string]any{"account": "tot-a", "name": "tot-a", "orgId": 4, "roleIds": []int64{roleID}})
			var out struct {
				ID int64 `json:"id"`
			}
			rep.Decode(t, &out)
			id = out.ID
		}},
		{"update (name, org, roles)", func() {
			do("update", "PUT", fmt.Sprintf("%s/%d", base, id), map[string]any{"name": "renamed", "orgId": 3, "roleIds": []int64{}, "enabled": true})
		}},
		{"update back", func() {
			do("update", "PUT", fmt.Sprintf("%s/%d", base, id), map[string]any{"name": "tot-b", "orgId": 4, "roleIds": []int64{roleID}, "enabled": true})
		}},
		{"disable", func() { do("disable", "PUT", fmt.Sprintf("%s/%d/enabled", base, id), map[string]any{"enabled": false}) }},
		{"enable", func() { do("enable", "PUT", fmt.Sprintf("%s/%d/enabled", base, id), map[string]any{"enabled": true}) }},
		{"delete", func() { do("delete", "DELETE", fmt.Sprintf("%s/%d", base, id), nil) }},
		{"restore from the recycle bin", func() {
			do("restore", "POST", fmt.Sprintf("/api/v1/sys/recycle/user/%d/restore", id), nil)
		}},
		{"batch delete", func() { do("batch delete", "POST", base+"/batch-delete", map[string]any{"ids": []int64{id}}) }},
		{"purge", func() { do("purge", "DELETE", fmt.Sprintf("/api/v1/sys/recycle/user/%d", id), nil) }},
		{"import", func() {
			e := &env{t: t, k: w, admin: wtok}
			p := e.preview(wtok, workbook(t, importHeaders, [][]string{
				{"tot-i1", "tot-i1", "", "", "", "", "前端组"}, {"tot-i2", "tot-i2"}, {"tot-i3", "tot-i3", "", "", "", "", "", "", "停用"},
			}))
			if res := e.commit(wtok, p.Rows, 0); res.Inserted != 3 {
				t.Fatalf("import = %+v", res)
			}
		}},
	}
	checkTotals(t, "start", r, rtok, roleID)
	for _, s := range steps {
		checkTotals(t, "before "+s.name, r, rtok, roleID) // the totals are cached now
		s.write()
		checkTotals(t, s.name, r, rtok, roleID)
	}
}

// TestPageTotalFollowsWrites: on one kernel, every kind of write is
// reflected in the next page's total at once, although totals are cached.
func TestPageTotalFollowsWrites(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Cache__ListTotalSeconds=60"})
	totalSteps(t, k, k)
}

// TestPageTotalAcrossReplicas: two kernels on one database and one Redis;
// a write on one is reflected in the other's next total at once.
func TestPageTotalAcrossReplicas(t *testing.T) {
	if db, c := kerneltest.Backend(t); db == "Sqlite" || c != kerneltest.CacheRedis {
		t.Skip("two replicas need a shared database and Redis (ADMINKERNEL_TEST_DB=PostgreSQL|MySql ADMINKERNEL_TEST_CACHE=redis)")
	}
	env := append(kerneltest.BackendEnviron(t, nil), "Service__Cache__ListTotalSeconds=60")
	a := kerneltest.Start(t, env)
	b := kerneltest.Start(t, env)
	t.Run("write on a, read on b", func(t *testing.T) { totalSteps(t, a, b) })
}

// TestPageTotalScope: the data scope is part of the cached total's key. A
// scoped administrator reading after the super-admin (and after another
// scope, and with filters that name orgs outside the scope) gets the
// count of its own scope, never a total cached for someone else.
func TestPageTotalScope(t *testing.T) {
	e := setup(t, "Service__Cache__ListTotalSeconds=60")
	for i, org := range []int{3, 4, 4, 5, 6, 6, 6, 2} {
		e.create(e.admin, map[string]any{"account": fmt.Sprintf("sc-%d", i), "name": "sc", "orgId": org})
	}
	_, below3 := e.scoped("sc-below3", 3, 3, nil, cPage) // orgs 3, 4, 5
	_, only6 := e.scoped("sc-only6", 6, 2, nil, cPage)   // org 6
	selfA, selfTokA := e.scoped("sc-selfa", 6, 4, nil, cPage)
	_, selfTokB := e.scoped("sc-selfb", 6, 4, nil, cPage)
	_, none := e.scoped("sc-none", 6, 0, nil, cPage) // no scope-bearing role: own rows only
	ctx := context.Background()
	count := func(where ...predicate.SysUser) int {
		return e.k.Ent().SysUser.Query().Where(sysuser.IsDelete(false)).Where(where...).CountX(ctx)
	}
	orgs := func(ids ...int64) predicate.SysUser { return sysuser.OrgIDIn(ids...) }
	cases := []struct {
		name  string
		tok   string
		query url.Values
		want  int
	}{
		{"super-admin, all", e.admin, nil, count()},
		{"org and below, all", below3, nil, count(orgs(3, 4, 5))},
		{"own org, all", only6, nil, count(orgs(6))},
		{"self A", selfTokA, nil, count(sysuser.ID(selfA))},
		{"self B (same org set as A, another user)", selfTokB, nil, 1},
		{"no scope", none, nil, 1},
		{"super-admin, org 6", e.admin, url.Values{"OrgId": {"6"}}, count(orgs(6))},
		{"org and below asks for org 6 (outside)", below3, url.Values{"OrgId": {"6"}}, 0},
		{"own org asks for org 4 (outside)", only6, url.Values{"OrgId": {"4"}}, 0},
		{"super-admin, name", e.admin, url.Values{"Name": {"sc"}}, count(sysuser.NameContainsFold("sc"))},
		{"org and below, name", below3, url.Values{"Name": {"sc"}}, count(orgs(3, 4, 5), sysuser.NameContainsFold("sc"))},
	}
	// Twice: the second round is served from the cache and must agree.
	for round := range 2 {
		for _, tc := range cases {
			if p := e.page(tc.tok, tc.query); p.Total != tc.want {
				t.Fatalf("round %d, %s: total %d, want %d", round, tc.name, p.Total, tc.want)
			}
		}
	}
}
