//go:build !unit

package notice_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

var noticeAdminCodes = []string{"GET:/api/v1/sys/notice/page", "POST:/api/v1/sys/notice", "DELETE:/api/v1/sys/notice/{id}"}

// noticeTitles lists the titles of the admin page as the token sees it.
func noticeTitles(t *testing.T, k *kerneltest.Kernel, tok string) map[string]int64 {
	t.Helper()
	var p page[sysNotice]
	k.Do("GET", base+"/page?Size=100", tok, nil).Expect(t, "notice page", 200, 0).Decode(t, &p)
	out := map[string]int64{}
	for _, n := range p.Items {
		out[n.Title] = n.ID
	}
	if p.Total != len(p.Items) {
		t.Fatalf("total %d, items %d", p.Total, len(p.Items))
	}
	return out
}

// TestNoticeAdminDataScope: the admin page lists, and delete accepts, only
// the notices published by the caller or by users inside the caller's data
// scope (45005 outside it, as 41005 for users); a super-admin's notice is
// deleted only by the super-admin (42007).
func TestNoticeAdminDataScope(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	admin := k.Admin()
	c := k.Ent()
	k.User("ann", "Ann#Passw0rd1", noticeAdminCodes...)
	zedID := k.User("zed", "Zed#Passw0rd1", noticeAdminCodes...)
	// ann's role sees her own org (1); zed sits in another org and sees
	// only himself.
	role := c.SysRole.Query().Where(sysrole.Code("test_ann")).OnlyX(ctx)
	c.SysRoleDataScope.Create().SetRoleID(role.ID).SetScopeType(int(datascope.Org)).ExecX(ctx)
	other := c.SysOrg.Create().SetParentID(1).SetName("外部").SetCode("elsewhere").SaveX(ctx)
	c.SysUser.UpdateOneID(zedID).SetOrgID(other.ID).ExecX(ctx)
	ann := k.Login("ann", "Ann#Passw0rd1").AccessToken
	zed := k.Login("zed", "Zed#Passw0rd1").AccessToken

	bySuper := publish(t, k, admin, map[string]any{"title": "by-super", "type": 1, "receiverType": 0})
	byAnn := publish(t, k, ann, map[string]any{"title": "by-ann", "type": 1, "receiverType": 0})
	byZed := publish(t, k, zed, map[string]any{"title": "by-zed", "type": 1, "receiverType": 0})

	for _, tc := range []struct {
		who, tok string
		want     []string
	}{
		{"super-admin", admin, []string{"by-super", "by-ann", "by-zed"}},
		{"ann (own org)", ann, []string{"by-super", "by-ann"}},
		{"zed (self)", zed, []string{"by-zed"}},
	} {
		got := noticeTitles(t, k, tc.tok)
		if len(got) != len(tc.want) {
			t.Fatalf("%s sees %v, want %v", tc.who, got, tc.want)
		}
		for _, w := range tc.want {
			if _, ok := got[w]; !ok {
				t.Fatalf("%s sees %v, want %v", tc.who, got, tc.want)
			}
		}
	}

	k.Do("DELETE", base+"/"+itoa(byZed), ann, nil).ExpectCode(t, "ann deletes zed's notice", errcode.NoticeOutOfDataScope)
	k.Do("DELETE", base+"/"+itoa(byAnn), zed, nil).ExpectCode(t, "zed deletes ann's notice", errcode.NoticeOutOfDataScope)
	k.Do("DELETE", base+"/"+itoa(bySuper), ann, nil).ExpectCode(t, "ann deletes the super-admin's notice", errcode.SuperAdminProtected)
	k.Do("DELETE", base+"/"+itoa(bySuper), zed, nil).ExpectCode(t, "zed deletes the super-admin's notice", errcode.NoticeOutOfDataScope)
	k.Do("DELETE", base+"/123", ann, nil).ExpectCode(t, "no such notice", errcode.NoticeNotFound)
	k.Do("DELETE", base+"/"+itoa(byAnn), ann, nil).ExpectCode(t, "ann deletes her notice", errcode.Success)
	k.Do("DELETE", base+"/"+itoa(byZed), admin, nil).ExpectCode(t, "the super-admin deletes zed's notice", errcode.Success)
	if got := noticeTitles(t, k, admin); len(got) != 1 {
		t.Fatalf("after the deletes the super-admin sees %v", got)
	}
}

// TestNoticeActionAuthority: an action that calls the API is accepted only
// when it names known routes whose codes the publisher holds (the
// confused deputy of Security III: an administrator's notice made the
// super-admin call a route the administrator could not); plain links pass.
func TestNoticeActionAuthority(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	k.User("ann", "Ann#Passw0rd1", noticeAdminCodes...)
	ann := k.Login("ann", "Ann#Passw0rd1").AccessToken
	body := func(method, url string) map[string]any {
		return map[string]any{"title": "act", "type": 1, "receiverType": 0,
			"actions": []map[string]any{{"label": "Go", "method": method, "url": url}}}
	}
	for _, tc := range []struct {
		name, tok, method, url string
		want                   errcode.Code
	}{
		{"POST a route ann lacks", ann, "POST", "/api/v1/sys/user/batch-delete", errcode.NoticeActionNotPermitted},
		{"POST a recycle restore ann lacks", ann, "POST", "/api/v1/sys/recycle/user/5/restore", errcode.NoticeActionNotPermitted},
		{"GET a route ann lacks", ann, "GET", "/api/v1/sys/user/page?Size=1", errcode.NoticeActionNotPermitted},
		{"GET a route ann lacks, other case", ann, "get", "/API/V1/sys/USER/page", errcode.NoticeActionNotPermitted},
		{"POST a route ann holds", ann, "POST", "/api/v1/sys/notice", errcode.Success},
		{"GET a route ann holds", ann, "GET", "/api/v1/sys/notice/page?Title=x", errcode.Success},
		{"GET a session route", ann, "GET", "/api/v1/sys/notice/unread-count", errcode.Success},
		{"unknown API route", ann, "POST", "/api/v1/sys/nothing-here", errcode.NoticeActionInvalid},
		{"unknown API GET", ann, "GET", "/api/v1/nothing", errcode.NoticeActionInvalid},
		{"POST outside the API", ann, "POST", "/system/user", errcode.NoticeActionInvalid},
		{"percent-escaped path", ann, "POST", "/api/v1/sys/%75ser/batch-delete", errcode.NoticeActionInvalid},
		{"dot segments", ann, "POST", "/api/v1/sys/notice/../user/batch-delete", errcode.NoticeActionInvalid},
		{"empty segment", ann, "POST", "/api/v1/sys//notice", errcode.NoticeActionInvalid},
		{"plain link", ann, "GET", "/system/user?x=1", errcode.Success},
		{"super-admin may name any route", admin, "POST", "/api/v1/sys/user/batch-delete", errcode.Success},
	} {
		k.Do("POST", base, tc.tok, body(tc.method, tc.url)).ExpectCode(t, tc.name, tc.want)
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
