package user_test

import (
	"net/http"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestImportCommitNeedsReauth: the import commit writes users (and their
// roles), as POST /sys/user does, so it is +R: with TOTP on, a session
// without a re-authentication window is refused 403 / 40024 and nothing is
// written; after re-authenticating the same commit goes through. Preview
// and validate only read and stay outside the set.
func TestImportCommitNeedsReauth(t *testing.T) {
	e := setup(t)
	p := e.preview(e.admin, workbook(t, importHeaders, [][]string{{"reauthimp", "R"}}))
	if p.ErrorRows != 0 || len(p.Rows) != 1 {
		t.Fatalf("preview = %+v", p)
	}
	if err := e.k.Settings().Set(t.Context(), "sys.security.totp.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	before := e.liveUsers()
	r := e.do("POST", base+"/import/commit", e.admin, map[string]any{"rows": p.Rows, "strategy": 0})
	if r.Status != http.StatusForbidden || r.Code != int(errcode.ReauthRequired) {
		t.Fatalf("commit without re-authentication = HTTP %d code %d, want 403 40024", r.Status, r.Code)
	}
	if n := e.liveUsers(); n != before {
		t.Fatalf("a refused commit wrote users: %d -> %d", before, n)
	}
	e.expect("validate is not +R", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": p.Rows}), 0)
	e.expect("preview is not +R", e.upload(e.admin, "u.xlsx", workbook(t, importHeaders, [][]string{{"reauthimp", "R"}}), ""), 0)
	e.expect("re-authenticate", e.do("POST", "/api/v1/auth/reauth", e.admin, map[string]any{"method": "password", "password": kerneltest.AdminPassword}), 0)
	if res := e.commit(e.admin, p.Rows, 0); res.Inserted != 1 {
		t.Fatalf("commit after re-authentication = %+v", res)
	}
	// The commit's code is among the high-sensitivity defaults.
	var l struct {
		Defaults []string `json:"defaults"`
	}
	e.expect("list", e.do("GET", "/api/v1/sys/mfa/high-sensitivity", e.admin, nil), 0).Decode(t, &l)
	found := false
	for _, c := range l.Defaults {
		found = found || c == "POST:/api/v1/sys/user/import/commit"
	}
	if !found {
		t.Fatalf("defaults lack the import commit: %v", l.Defaults)
	}
}
