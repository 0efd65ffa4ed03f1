package socialchat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/plugins/internal/vendortest"
)

// fakeWeChat is a faithful fake of the vendor (vendor-protocols.md §6.4):
// the qrconnect page (domain and scope checks), sns/oauth2/access_token and
// sns/userinfo. Everything is answered with HTTP 200 and Content-Type
// text/plain, errors as errcode/errmsg. Codes are single-use (40163 on
// reuse) and expire after 10 minutes (40029).
type fakeWeChat struct {
	srv *httptest.Server

	mu             sync.Mutex
	appID          string
	secret         string
	callbackDomain string // the website app's 授权回调域 (bare host, default port)
	clock          time.Time
	codes          map[string]*fakeCode
	tokens         map[string]*fakeToken
	seq            int
	users          map[string]fakeUser
	nextUser       string // who scans; "deny" declines (redirect with the state only)

	// Hooks.
	unionID       string // "both" (default), "userinfo" (only in userinfo), "none"
	userinfoErr   int    // userinfo answers this errcode
	echoSecretMsg bool   // errmsg echoes the secret / code / token
	misbehave     string // for /sns/*: a vendortest.Misbehave name
	misbehaveOnly string // restrict misbehave to this path ("" = all /sns/*)
	calls         map[string]int
}

type fakeUser struct {
	OpenID, UnionID, Nickname string
}

type fakeCode struct {
	user   fakeUser
	issued time.Time
	used   bool
}

type fakeToken struct {
	user    fakeUser
	expires time.Time
}

func newFakeWeChat(t *testing.T) *fakeWeChat {
	t.Helper()
	f := &fakeWeChat{
		appID:          "wx0123456789abcdef",
		secret:         "Wx5ecret0123456789abcdef01234567",
		callbackDomain: "kernel.example.com",
		clock:          time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		codes:          map[string]*fakeCode{},
		tokens:         map[string]*fakeToken{},
		users: map[string]fakeUser{
			"alice": {OpenID: "oAlice_websiteapp", UnionID: "o6_bmasdasdsad6_2sgVt7hMZOPfL", Nickname: "Alice"},
			"bob":   {OpenID: "oBob_websiteapp", UnionID: "o6_bobUnion000000000000000000", Nickname: "Bob"},
		},
		nextUser: "alice",
		unionID:  "both",
		calls:    map[string]int{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeWeChat) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeWeChat) issueCode(who string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issueCodeLocked(who)
}

func (f *fakeWeChat) issueCodeLocked(who string) string {
	f.seq++
	c := fmt.Sprintf("0a1b2c%04dWxCode", f.seq)
	f.codes[c] = &fakeCode{user: f.users[who], issued: f.clock}
	return c
}

// text answers JSON with the vendor's text/plain Content-Type.
func (f *fakeWeChat) text(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeWeChat) errText(w http.ResponseWriter, code int, msg string) {
	f.text(w, map[string]any{"errcode": code, "errmsg": msg + ", rid: 65f0a1b2-0c1d2e3f-4a5b6c7d"})
}

func (f *fakeWeChat) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.URL.Path]++
	mis, only := f.misbehave, f.misbehaveOnly
	f.mu.Unlock()
	if mis != "" && strings.HasPrefix(r.URL.Path, "/sns/") && (only == "" || only == r.URL.Path) {
		vendortest.Misbehave(w, r, mis, "text/plain")
		return
	}
	switch r.URL.Path {
	case "/connect/qrconnect":
		f.qrconnect(w, r)
	case "/sns/oauth2/access_token":
		f.accessToken(w, r)
	case "/sns/userinfo":
		f.userinfo(w, r)
	default:
		f.errText(w, -1, "system error")
	}
}

func (f *fakeWeChat) qrconnect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	page := func(msg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body>%s</body></html>", msg)
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("appid") != f.appID:
		page("该链接无法访问")
	case q.Get("response_type") != "code":
		page("参数错误")
	case q.Get("scope") != "snsapi_login":
		page("Scope 参数错误或没有 Scope 权限")
	case err != nil || redirect.Host != f.callbackDomain: // a host with a port never matches
		page("redirect_uri 参数错误")
	default:
		v := redirect.Query()
		if f.nextUser != "deny" {
			v.Set("code", f.issueCodeLocked(f.nextUser))
		}
		v.Set("state", q.Get("state"))
		redirect.RawQuery = v.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	}
}

func (f *fakeWeChat) accessToken(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	code := q.Get("code")
	c, ok := f.codes[code]
	switch {
	case q.Get("appid") != f.appID:
		f.errText(w, 40013, "invalid appid")
	case q.Get("secret") != f.secret:
		msg := "invalid appsecret"
		if f.echoSecretMsg {
			msg += " secret=" + q.Get("secret")
		}
		f.errText(w, 40125, msg)
	case q.Get("grant_type") != "authorization_code":
		f.errText(w, 40002, "invalid grant_type")
	case ok && c.used:
		msg := "code been used"
		if f.echoSecretMsg {
			msg += " code=" + code
		}
		f.errText(w, 40163, msg)
	case !ok || f.clock.Sub(c.issued) > 10*time.Minute:
		msg := "invalid code"
		if f.echoSecretMsg {
			msg += " code=" + code
		}
		f.errText(w, 40029, msg)
	default:
		c.used = true
		f.seq++
		tok := fmt.Sprintf("WXACCESS%04d_%s", f.seq, strings.Repeat("k", 40))
		f.tokens[tok] = &fakeToken{user: c.user, expires: f.clock.Add(7200 * time.Second)}
		resp := map[string]any{"access_token": tok, "expires_in": 7200, "refresh_token": "WXREFRESH" + tok,
			"openid": c.user.OpenID, "scope": "snsapi_login"}
		if f.unionID == "both" {
			resp["unionid"] = c.user.UnionID
		}
		f.text(w, resp)
	}
}

func (f *fakeWeChat) userinfo(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, ok := f.tokens[q.Get("access_token")]
	switch {
	case !ok:
		msg := "invalid credential, access_token is invalid or not latest"
		if f.echoSecretMsg {
			msg += " access_token=" + q.Get("access_token")
		}
		f.errText(w, 40001, msg)
	case !f.clock.Before(tok.expires):
		f.errText(w, 42001, "access_token expired")
	case q.Get("openid") != tok.user.OpenID:
		f.errText(w, 40003, "invalid openid")
	case f.userinfoErr != 0:
		f.errText(w, f.userinfoErr, "api unauthorized")
	default:
		resp := map[string]any{"openid": tok.user.OpenID, "nickname": tok.user.Nickname, "sex": 0,
			"language": "", "province": "", "city": "", "country": "",
			"headimgurl": "https://thirdwx.qlogo.cn/mmopen/g3MonUZtNHkdmzicIlibx6iaFqAc56vxLSUfpb6n5WKSYVY0ChQKkiaJSgQ1dZuTOgvLLrhJbERQQ4eMsv84eavHiaiceqxibJxCfHe/0",
			"privilege":  []string{}}
		if f.unionID != "none" {
			resp["unionid"] = tok.user.UnionID
		}
		f.text(w, resp)
	}
}
