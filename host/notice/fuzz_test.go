package notice

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/route"
)

// fuzzRoutes is a small route table: Permission routes with and without
// parameters, a session route.
var fuzzRoutes = []route.Route{
	{Method: "GET", Path: "/api/v1/sys/user/page", Access: route.Permission},
	{Method: "GET", Path: "/api/v1/sys/user/{id}", Access: route.Permission},
	{Method: "POST", Path: "/api/v1/sys/user/batch-delete", Access: route.Permission},
	{Method: "POST", Path: "/api/v1/sys/recycle/{type}/{id}/restore", Access: route.Permission},
	{Method: "POST", Path: "/api/v1/sys/notice", Access: route.Permission},
	{Method: "GET", Path: "/api/v1/sys/notice/page", Access: route.Permission},
	{Method: "GET", Path: "/api/v1/sys/notice/unread-count", Access: route.Session},
}

// fuzzHeld are the codes the fuzzed publisher holds.
var fuzzHeld = map[string]bool{"POST:/api/v1/sys/notice": true, "GET:/api/v1/sys/notice/page": true}

// FuzzNoticeAction: the action validator (validAction, then CheckActions)
// never panics, and an accepted action is either a GET plain link — a site
// path (no scheme, no host: never javascript:, never another site) outside
// /api — or resolves to at least one known route, every Permission one of
// which the publisher holds.
func FuzzNoticeAction(f *testing.F) {
	for _, s := range [][2]string{
		{"GET", "/system/user?x=1"}, {"POST", "/api/v1/sys/user/batch-delete"}, {"get", "/API/v1/sys/notice/page"},
		{"POST", "/api/v1/sys/recycle/user/5/restore"}, {"GET", "javascript:alert(1)"}, {"GET", "//evil.example/"},
		{"POST", "/api/v1/sys/%75ser/batch-delete"}, {"POST", "/api/v1/sys/notice/../user/batch-delete"},
		{"GET", "/api/v1/sys/notice/unread-count#x"}, {"POST", "/api/v1/sys/notice/"}, {"GET", "/\\evil"},
	} {
		f.Add(s[0], s[1])
	}
	holds := func(_ context.Context, code string) (bool, error) { return fuzzHeld[code], nil }
	f.Fuzz(func(t *testing.T, method, raw string) {
		a := Action{Label: "x", Method: method, URL: raw}
		if !validAction(&a) {
			return
		}
		if CheckActions(context.Background(), []Action{a}, fuzzRoutes, holds) != nil {
			return
		}
		u, err := url.Parse(a.URL)
		if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(a.URL, "/") || strings.HasPrefix(a.URL, "//") {
			t.Fatalf("accepted %s %q is not a site path", a.Method, a.URL)
		}
		if !CallsAPI(a) {
			if a.Method != "GET" {
				t.Fatalf("accepted %s %q as a plain link", a.Method, a.URL)
			}
			return
		}
		hit := Resolve(fuzzRoutes, a.Method, a.URL)
		if len(hit) == 0 {
			t.Fatalf("accepted %s %q resolves to no route", a.Method, a.URL)
		}
		for _, r := range hit {
			if r.Access == route.Permission && !fuzzHeld[r.PermissionCode()] {
				t.Fatalf("accepted %s %q reaches %s, not held", a.Method, a.URL, r.PermissionCode())
			}
		}
	})
}
