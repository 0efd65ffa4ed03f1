//go:build !unit

package host_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestLogClearingNeedsReauth: clearing the operation, login, exception and
// job run logs is +R: a scoped (not super) administrator holding exactly
// the clearing codes is refused without a re-authentication window while
// TOTP is on, and clears after re-authenticating.
func TestLogClearingNeedsReauth(t *testing.T) {
	k := kerneltest.Start(t, nil)
	const pw = "Logs#Passw0rd1"
	routes := []struct{ method, path, code string }{
		{"DELETE", "/api/v1/sys/log/op", "DELETE:/api/v1/sys/log/op"},
		{"DELETE", "/api/v1/sys/log/login", "DELETE:/api/v1/sys/log/login"},
		{"DELETE", "/api/v1/sys/log/exception", "DELETE:/api/v1/sys/log/exception"},
		{"POST", "/api/v1/sys/job/log/clear", "POST:/api/v1/sys/job/log/clear"},
	}
	var codes []string
	for _, r := range routes {
		codes = append(codes, r.code)
	}
	k.User("logadmin", pw, codes...)
	tok := k.Login("logadmin", pw).AccessToken
	totpOn(t, k, true)
	for _, r := range routes {
		var body any
		if r.method == "POST" {
			body = map[string]any{}
		}
		k.Do(r.method, r.path, tok, body).ExpectCode(t, r.method+" "+r.path+" without a window", errcode.ReauthRequired)
	}
	reauthPassword(k, tok, pw).Expect(t, "re-auth", http.StatusOK, 0)
	for _, r := range routes {
		var body any
		if r.method == "POST" {
			body = map[string]any{}
		}
		k.Do(r.method, r.path, tok, body).Expect(t, r.method+" "+r.path+" in the window", http.StatusOK, 0)
	}
}

// TestHighSensitivityListAuthority: a scoped administrator holding the
// list's codes adds and removes only codes they hold themselves (41006);
// the defaults (the +R routes) are nobody's to remove.
func TestHighSensitivityListAuthority(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	const pw = "Hs#Passw0rd1"
	const hs = "/api/v1/sys/mfa/high-sensitivity"
	k.User("hsadmin", pw, "GET:"+hs, "POST:"+hs, "DELETE:"+hs+"/{id:long}", "GET:/api/v1/sys/dict/type/page")
	tok := k.Login("hsadmin", pw).AccessToken

	k.Do("POST", hs, tok, map[string]any{"permissionCode": "GET:/api/v1/sys/user/page"}).
		ExpectCode(t, "add a code not held", errcode.AuthorityExceeded)
	var held struct {
		ID int64 `json:"id"`
	}
	k.Do("POST", hs, tok, map[string]any{"permissionCode": "GET:/api/v1/sys/dict/type/page"}).
		Expect(t, "add a held code", http.StatusOK, 0).Decode(t, &held)

	var other struct {
		ID int64 `json:"id"`
	}
	k.Do("POST", hs, admin, map[string]any{"permissionCode": "GET:/api/v1/sys/user/page"}).
		Expect(t, "the super-admin adds any code", http.StatusOK, 0).Decode(t, &other)
	k.Do("DELETE", fmt.Sprintf("%s/%d", hs, other.ID), tok, nil).ExpectCode(t, "remove a code not held", errcode.AuthorityExceeded)
	if st, body := sendEmpty(t, k, "DELETE", fmt.Sprintf("%s/%d", hs, held.ID), tok, ""); st != http.StatusOK || body != "" {
		t.Fatalf("remove a held code = HTTP %d %q, want an empty 200", st, body)
	}
	var l hsList
	k.Do("GET", hs, tok, nil).Expect(t, "list", http.StatusOK, 0).Decode(t, &l)
	if len(l.Customs) != 1 || l.Customs[0].ID != other.ID || len(l.Defaults) == 0 {
		t.Fatalf("list after the changes %+v, want the super-admin's code only", l)
	}
}
