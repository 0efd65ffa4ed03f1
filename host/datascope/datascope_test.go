package datascope_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// fixture adds a user in org with one role per scope spec; spec 0 is a
// role without a data scope.
type fixture struct {
	t *testing.T
	c *ent.Client
	n int
}

type spec struct {
	typ     int
	custom  string
	enabled bool
	deleted bool
}

func (f *fixture) user(org int64, specs ...spec) int64 {
	f.t.Helper()
	ctx := context.Background()
	f.n++
	u := f.c.SysUser.Create().SetAccount("u" + string(rune('a'+f.n))).SetName("U")
	if org != 0 {
		u.SetOrgID(org)
	}
	uid := u.SaveX(ctx).ID
	for i, s := range specs {
		r := f.c.SysRole.Create().SetName("r").SetCode("r" + string(rune('a'+f.n)) + string(rune('a'+i))).
			SetEnabled(s.enabled).SaveX(ctx)
		if s.deleted {
			f.c.SysRole.UpdateOneID(r.ID).SetIsDelete(true).SetDeleteKey(r.ID).ExecX(ctx)
		}
		if s.typ != 0 {
			c := f.c.SysRoleDataScope.Create().SetRoleID(r.ID).SetScopeType(s.typ)
			if s.custom != "" {
				c.SetCustomOrgIds(s.custom)
			}
			c.ExecX(ctx)
		}
		f.c.SysUserRole.Create().SetUserID(uid).SetRoleID(r.ID).ExecX(ctx)
	}
	return uid
}

func on(typ int) spec { return spec{typ: typ, enabled: true} }

func TestResolve(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	c := k.Ent()
	// Seeded orgs: 1 > {2, 3 > {4, 5}, 6, 7}; add 8 under 4 and a deleted 9 under 3.
	c.SysOrg.Create().SetID(8).SetParentID(4).SetName("深层").SetCode("deep").ExecX(ctx)
	c.SysOrg.Create().SetID(9).SetParentID(3).SetName("已删").SetCode("gone").SetIsDelete(true).SetDeleteKey(9).ExecX(ctx)
	f := &fixture{t: t, c: c}

	type want struct {
		all  bool
		orgs []int64
		self bool
	}
	tests := []struct {
		name string
		uid  int64
		want want
	}{
		{"super-admin", 1, want{all: true}},
		{"no role", f.user(3), want{self: true}},
		{"role without scope", f.user(3, on(0)), want{self: true}},
		{"1 all", f.user(3, on(1)), want{all: true}},
		{"2 own org", f.user(3, on(2)), want{orgs: []int64{3}}},
		{"2 without an org", f.user(0, on(2)), want{orgs: []int64{}}},
		{"3 own org and below (live orgs only)", f.user(3, on(3)), want{orgs: []int64{3, 4, 5, 8}}},
		{"3 at a leaf", f.user(5, on(3)), want{orgs: []int64{5}}},
		{"4 self", f.user(3, on(4)), want{orgs: []int64{}, self: true}},
		{"5 custom", f.user(3, spec{typ: 5, custom: "6, 2,,x", enabled: true}), want{orgs: []int64{2, 6}}},
		{"2 + 5 unite", f.user(3, on(2), spec{typ: 5, custom: "2,6", enabled: true}), want{orgs: []int64{2, 3, 6}}},
		{"3 + 4 unite with self", f.user(4, on(3), on(4)), want{orgs: []int64{4, 8}, self: true}},
		{"4 + 1: all wins", f.user(3, on(4), on(1)), want{all: true}},
		{"disabled all-role ignored", f.user(3, on(2), spec{typ: 1}), want{orgs: []int64{3}}},
		{"deleted all-role ignored", f.user(3, on(2), spec{typ: 1, enabled: true, deleted: true}), want{orgs: []int64{3}}},
		{"only a disabled scope role: self", f.user(3, spec{typ: 1}), want{self: true}},
		{"unknown user", 999, want{}},
	}
	for _, tt := range tests {
		s, err := datascope.Resolve(ctx, c, tt.uid)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if s.UserID != tt.uid || s.Unrestricted != tt.want.all || s.IncludeSelf != tt.want.self ||
			!slices.Equal(append([]int64{}, s.OrgIDs...), append([]int64{}, tt.want.orgs...)) {
			t.Errorf("%s: %+v, want %+v", tt.name, s, tt.want)
		}
	}

	// The predicate: org_id IN orgs OR id = self; nothing for an empty scope.
	count := func(s datascope.Scope) int {
		return c.SysUser.Query().Where(sysuser.IsDelete(false)).Where(s.Users()...).CountX(ctx)
	}
	total := c.SysUser.Query().Where(sysuser.IsDelete(false)).CountX(ctx)
	inOrg3 := c.SysUser.Query().Where(sysuser.OrgID(3)).CountX(ctx)
	if n := count(datascope.Everything(1)); n != total {
		t.Errorf("unrestricted sees %d of %d", n, total)
	}
	if n := count(datascope.Scope{UserID: 999}); n != 0 {
		t.Errorf("empty scope sees %d", n)
	}
	if n := count(datascope.Scope{UserID: 1, IncludeSelf: true}); n != 1 {
		t.Errorf("self scope sees %d", n)
	}
	if n := count(datascope.Scope{UserID: 1, OrgIDs: []int64{3}, IncludeSelf: true}); n != inOrg3+1 {
		t.Errorf("org 3 + self sees %d, want %d", n, inOrg3+1)
	}
	s := datascope.Scope{UserID: 5, OrgIDs: []int64{2, 6}}
	org6, org3 := int64(6), int64(3)
	if !s.ContainsUser(7, &org6) || s.ContainsUser(7, &org3) || s.ContainsUser(5, nil) || !datascope.Everything(1).ContainsUser(7, nil) {
		t.Error("ContainsUser")
	}
	s.IncludeSelf = true
	if !s.ContainsUser(5, nil) {
		t.Error("ContainsUser self")
	}
}

func TestParseAndFormat(t *testing.T) {
	tests := []struct {
		in   string
		ids  []int64
		ok   bool
		back string
	}{
		{"2,6", []int64{2, 6}, true, "2,6"},
		{" 6 , 2 ,6", []int64{2, 6}, true, "2,6"},
		{"", nil, true, ""},
		{"2,x,-1", []int64{2}, false, "2"},
	}
	for _, tt := range tests {
		ids, ok := datascope.ParseOrgIDs(tt.in)
		if !slices.Equal(ids, tt.ids) || ok != tt.ok || datascope.FormatOrgIDs(ids) != tt.back {
			t.Errorf("ParseOrgIDs(%q) = %v %v", tt.in, ids, ok)
		}
	}
}

func TestCache(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	f := &fixture{t: t, c: k.Ent()}
	uid := f.user(3, on(2))
	sc := datascope.New(k.Ent(), store, time.Minute)
	s, err := sc.Scope(ctx, uid)
	if err != nil || !slices.Equal(s.OrgIDs, []int64{3}) {
		t.Fatalf("scope = %+v, %v", s, err)
	}
	if _, ok, _ := store.Get(ctx, "scope:"+strconv.FormatInt(uid, 10)); !ok {
		t.Fatal("scope not cached under scope:<uid>")
	}
	// A change is not seen until the entry is invalidated.
	k.Ent().SysUser.UpdateOneID(uid).SetOrgID(6).ExecX(ctx)
	if s, _ := sc.Scope(ctx, uid); !slices.Equal(s.OrgIDs, []int64{3}) {
		t.Fatalf("cached scope = %+v", s)
	}
	if err := datascope.Invalidate(ctx, store, uid); err != nil {
		t.Fatal(err)
	}
	if s, _ := sc.Scope(ctx, uid); !slices.Equal(s.OrgIDs, []int64{6}) {
		t.Fatalf("after Invalidate = %+v", s)
	}
	k.Ent().SysUser.UpdateOneID(uid).SetOrgID(7).ExecX(ctx)
	other := f.user(2, on(2))
	if _, err := sc.Scope(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n, err := datascope.InvalidateAll(ctx, store); err != nil || n != 2 {
		t.Fatalf("InvalidateAll = %d, %v", n, err)
	}
	if s, _ := sc.Scope(ctx, uid); !slices.Equal(s.OrgIDs, []int64{7}) {
		t.Fatalf("after InvalidateAll = %+v", s)
	}
	if err := datascope.Invalidate(ctx, store); err != nil {
		t.Fatal("Invalidate without ids")
	}
}

// TestCovers is the "scope within" definition of docs/design/security.md
// (Authority boundaries): scopes as sets of org ids, self counting for
// nothing.
func TestCovers(t *testing.T) {
	all := datascope.Everything(1)
	orgs := func(ids ...int64) datascope.Scope { return datascope.Scope{UserID: 2, OrgIDs: ids} }
	self := datascope.Scope{UserID: 3, IncludeSelf: true}
	tests := []struct {
		name   string
		caller datascope.Scope
		target datascope.Scope
		within bool
	}{
		{"all covers all", all, datascope.Everything(9), true},
		{"all covers orgs", all, orgs(2, 6), true},
		{"orgs do not cover all", orgs(1, 2, 3, 4, 5, 6, 7), datascope.Everything(9), false},
		{"subset", orgs(3, 4, 5), orgs(4, 5), true},
		{"equal", orgs(3, 4, 5), orgs(3, 4, 5), true},
		{"one org outside", orgs(3, 4, 5), orgs(4, 6), false},
		{"self is within anything", datascope.Scope{UserID: 2}, self, true},
		{"self plus orgs: only the orgs count", orgs(3), datascope.Scope{UserID: 3, OrgIDs: []int64{3}, IncludeSelf: true}, true},
		{"a self-only caller covers no org", self, orgs(3), false},
		{"nothing is within anything", datascope.Scope{}, datascope.Scope{UserID: 4, OrgIDs: []int64{}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.caller.Covers(tt.target); got != tt.within {
				t.Fatalf("%+v covers %+v = %v, want %v", tt.caller, tt.target, got, tt.within)
			}
		})
	}
}
