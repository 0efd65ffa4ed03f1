package vendorfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// WeChat is a faithful fake of the vendor (vendor-protocols.md §6.4):
// the qrconnect page (domain and scope checks), sns/oauth2/access_token and
// sns/userinfo. Everything is answered with HTTP 200 and Content-Type
// text/plain, errors as errcode/errmsg. Codes are single-use (40163 on
// reuse) and expire after 10 minutes (40029). The API paths (/sns/*)
// misbehave on demand.
type WeChat struct {
	Core

	AppID          string
	Secret         string
	CallbackDomain string // the website app's 授权回调域 (bare host, default port)
	Users          map[string]WeChatUser
	NextUser       string // who scans; "deny" declines (redirect with the state only)

	// Hooks.
	UnionID       string // "both" (default), "userinfo" (only in userinfo), "none"
	UserinfoErr   int    // userinfo answers this errcode
	EchoSecretMsg bool   // errmsg echoes the secret / code / token

	codes  map[string]*weChatCode
	tokens map[string]*weChatToken
	seq    int
}

// WeChatUser is an account at the fake.
type WeChatUser struct {
	OpenID, UnionID, Nickname string
}

type weChatCode struct {
	user   WeChatUser
	issued time.Time
	used   bool
}

type weChatToken struct {
	user    WeChatUser
	expires time.Time
}

// NewWeChat starts a fake WeChat Open Platform with a website app whose
// callback domain is kernel.example.com, and users alice (scans) and bob.
func NewWeChat(t testing.TB) *WeChat {
	t.Helper()
	f := &WeChat{
		AppID:          "wx0123456789abcdef",
		Secret:         "Wx5ecret0123456789abcdef01234567",
		CallbackDomain: "kernel.example.com",
		Users: map[string]WeChatUser{
			"alice": {OpenID: "oAlice_websiteapp", UnionID: "o6_bmasdasdsad6_2sgVt7hMZOPfL", Nickname: "Alice"},
			"bob":   {OpenID: "oBob_websiteapp", UnionID: "o6_bobUnion000000000000000000", Nickname: "Bob"},
		},
		NextUser: "alice",
		UnionID:  "both",
		codes:    map[string]*weChatCode{},
		tokens:   map[string]*weChatToken{},
	}
	f.Clock = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.start(t, f.serve)
	return f
}

// IssueCode plays a user's successful scan.
func (f *WeChat) IssueCode(who string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issueCodeLocked(who)
}

func (f *WeChat) issueCodeLocked(who string) string {
	f.seq++
	c := f.issueLocked(fmt.Sprintf("0a1b2c%04dWxCode", f.seq))
	f.codes[c] = &weChatCode{user: f.Users[who], issued: f.Clock}
	return c
}

// text answers JSON with the vendor's text/plain Content-Type.
func (f *WeChat) text(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *WeChat) errText(w http.ResponseWriter, code int, msg string) {
	f.text(w, map[string]any{"errcode": code, "errmsg": msg + ", rid: 65f0a1b2-0c1d2e3f-4a5b6c7d"})
}

func (f *WeChat) serve(w http.ResponseWriter, r *http.Request) {
	if f.begin(w, r, strings.HasPrefix(r.URL.Path, "/sns/"), "text/plain") {
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

func (f *WeChat) qrconnect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	page := func(msg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body>%s</body></html>", msg)
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("appid") != f.AppID:
		page("该链接无法访问")
	case q.Get("response_type") != "code":
		page("参数错误")
	case q.Get("scope") != "snsapi_login":
		page("Scope 参数错误或没有 Scope 权限")
	case err != nil || redirect.Host != f.CallbackDomain: // a host with a port never matches
		page("redirect_uri 参数错误")
	default:
		v := redirect.Query()
		if f.NextUser != "deny" {
			v.Set("code", f.issueCodeLocked(f.NextUser))
		}
		v.Set("state", q.Get("state"))
		redirect.RawQuery = v.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	}
}

func (f *WeChat) accessToken(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	code := q.Get("code")
	c, ok := f.codes[code]
	switch {
	case q.Get("appid") != f.AppID:
		f.errText(w, 40013, "invalid appid")
	case q.Get("secret") != f.Secret:
		msg := "invalid appsecret"
		if f.EchoSecretMsg {
			msg += " secret=" + q.Get("secret")
		}
		f.errText(w, 40125, msg)
	case q.Get("grant_type") != "authorization_code":
		f.errText(w, 40002, "invalid grant_type")
	case ok && c.used:
		msg := "code been used"
		if f.EchoSecretMsg {
			msg += " code=" + code
		}
		f.errText(w, 40163, msg)
	case !ok || f.Clock.Sub(c.issued) > 10*time.Minute:
		msg := "invalid code"
		if f.EchoSecretMsg {
			msg += " code=" + code
		}
		f.errText(w, 40029, msg)
	default:
		c.used = true
		f.seq++
		tok := f.issueLocked(fmt.Sprintf("WXACCESS%04d_%s", f.seq, strings.Repeat("k", 40)))
		f.tokens[tok] = &weChatToken{user: c.user, expires: f.Clock.Add(7200 * time.Second)}
		resp := map[string]any{"access_token": tok, "expires_in": 7200, "refresh_token": "WXREFRESH" + tok,
			"openid": c.user.OpenID, "scope": "snsapi_login"}
		if f.UnionID == "both" {
			resp["unionid"] = c.user.UnionID
		}
		f.text(w, resp)
	}
}

func (f *WeChat) userinfo(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, ok := f.tokens[q.Get("access_token")]
	switch {
	case !ok:
		msg := "invalid credential, access_token is invalid or not latest"
		if f.EchoSecretMsg {
			msg += " access_token=" + q.Get("access_token")
		}
		f.errText(w, 40001, msg)
	case !f.Clock.Before(tok.expires):
		f.errText(w, 42001, "access_token expired")
	case q.Get("openid") != tok.user.OpenID:
		f.errText(w, 40003, "invalid openid")
	case f.UserinfoErr != 0:
		f.errText(w, f.UserinfoErr, "api unauthorized")
	default:
		resp := map[string]any{"openid": tok.user.OpenID, "nickname": tok.user.Nickname, "sex": 0,
			"language": "", "province": "", "city": "", "country": "",
			"headimgurl": "https://thirdwx.qlogo.cn/mmopen/g3MonUZtNHkdmzicIlibx6iaFqAc56vxLSUfpb6n5WKSYVY0ChQKkiaJSgQ1dZuTOgvLLrhJbERQQ4eMsv84eavHiaiceqxibJxCfHe/0",
			"privilege":  []string{}}
		if f.UnionID != "none" {
			resp["unionid"] = tok.user.UnionID
		}
		f.text(w, resp)
	}
}
