package teamchat

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/plugins/internal/vendortest"
)

// fakeDingTalk is a faithful fake of the vendor (vendor-protocols.md §6.2):
// the login page, the user token call (JSON body only) and users/me. Errors
// are HTTP 4xx with a JSON code/message/requestid. Codes are single-use and
// expire after 5 minutes on the fake's clock.
type fakeDingTalk struct {
	srv *httptest.Server

	mu         sync.Mutex
	clientID   string
	secret     string
	redirect   string // the registered redirect URL
	clock      time.Time
	codes      map[string]*fakeCode
	tokens     map[string]fakeUser
	seq        int
	users      map[string]fakeUser // login name → user
	nextUser   string              // who logs in at the page; "deny" declines
	pickedCorp string              // corp the user picks when scope has corpid

	// Hooks.
	noPermission  bool   // users/me answers 403 (app lacks Contact.User.Read)
	revokeTokens  bool   // users/me answers 400 InvalidAuthentication
	dropUnionID   bool   // users/me omits unionId
	echoSecretMsg bool   // error messages echo the secret / code
	misbehave     string // for /v1.0/*: a vendortest.Misbehave name

	calls map[string]int
}

type fakeUser struct {
	Nick, UnionID, OpenID, Mobile string
}

type fakeCode struct {
	user   fakeUser
	corp   string
	issued time.Time
	used   bool
}

func newFakeDingTalk(t *testing.T) *fakeDingTalk {
	t.Helper()
	f := &fakeDingTalk{
		clientID: "dingabcdef123456",
		secret:   "Dt-s3cr3t-app-secret",
		redirect: redirectURI,
		clock:    time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		codes:    map[string]*fakeCode{},
		tokens:   map[string]fakeUser{},
		users: map[string]fakeUser{
			"zhangsan": {Nick: "张三", UnionID: "uNi0nZhangSan", OpenID: "0penZhangSan", Mobile: "15000000000"},
			"lisi":     {Nick: "李四", UnionID: "uNi0nLiSi", OpenID: "0penLiSi"},
		},
		nextUser:   "zhangsan",
		pickedCorp: "dingcorp1",
		calls:      map[string]int{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDingTalk) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeDingTalk) issueCode(who string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issueCodeLocked(who, "")
}

func (f *fakeDingTalk) issueCodeLocked(who, corp string) string {
	f.seq++
	c := fmt.Sprintf("authc0de%04d", f.seq)
	f.codes[c] = &fakeCode{user: f.users[who], corp: corp, issued: f.clock}
	return c
}

func (f *fakeDingTalk) answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeDingTalk) fail(w http.ResponseWriter, status int, code, msg string) {
	f.answer(w, status, map[string]any{"code": code, "message": msg, "requestid": "0A1B2C3D-4E5F-6789"})
}

func (f *fakeDingTalk) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.URL.Path]++
	mis := f.misbehave
	f.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/v1.0/") && mis != "" {
		vendortest.Misbehave(w, r, mis, "application/json;charset=utf-8")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/oauth2/auth":
		f.authorize(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1.0/oauth2/userAccessToken":
		f.userAccessToken(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1.0/contact/users/me":
		f.me(w, r)
	default:
		f.fail(w, http.StatusNotFound, "InvalidAction.NotFound", "Specified api is not found, please check your url and method.")
	}
}

func (f *fakeDingTalk) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	page := func(msg string) {
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		fmt.Fprintf(w, "<html>%s</html>", msg)
	}
	scopes := strings.Fields(q.Get("scope"))
	hasScope := func(s string) bool {
		for _, x := range scopes {
			if x == s {
				return true
			}
		}
		return false
	}
	switch {
	case q.Get("client_id") != f.clientID:
		page("应用不存在")
	case q.Get("response_type") != "code" || q.Get("prompt") != "consent" || !hasScope("openid"):
		page("参数错误")
	case q.Get("redirect_uri") != f.redirect:
		page("redirect_uri 不合法")
	case q.Get("state") == "":
		page("state 缺失")
	default:
		cb, _ := url.Parse(q.Get("redirect_uri"))
		v := cb.Query()
		if f.nextUser == "deny" {
			v.Set("error", "access_denied")
		} else {
			corp := ""
			if hasScope("corpid") {
				corp = f.pickedCorp
			}
			v.Set("authCode", f.issueCodeLocked(f.nextUser, corp))
		}
		v.Set("state", q.Get("state"))
		cb.RawQuery = v.Encode()
		http.Redirect(w, r, cb.String(), http.StatusFound)
	}
}

func (f *fakeDingTalk) userAccessToken(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
		Code         string `json:"code"`
		GrantType    string `json:"grantType"`
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil {
		f.fail(w, http.StatusBadRequest, "Missingbody", "body is mandatory for this action.")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if body.ClientID != f.clientID || body.ClientSecret != f.secret {
		msg := "clientId或clientSecret不合法"
		if f.echoSecretMsg {
			msg += " clientSecret=" + body.ClientSecret
		}
		f.fail(w, http.StatusUnauthorized, "invalidClientIdOrSecret", msg)
		return
	}
	if body.GrantType != "authorization_code" {
		f.fail(w, http.StatusBadRequest, "invalidParameter.grantType.invalid", "grantType不合法")
		return
	}
	c, ok := f.codes[body.Code]
	if !ok || c.used || f.clock.Sub(c.issued) > 5*time.Minute {
		msg := "不合法的临时授权码"
		if f.echoSecretMsg {
			msg += " code=" + body.Code
		}
		f.fail(w, http.StatusBadRequest, "invalidParameter.authCode.notFound", msg)
		return
	}
	c.used = true
	f.seq++
	tok := fmt.Sprintf("usertoken%04d%s", f.seq, strings.Repeat("t", 24))
	f.tokens[tok] = c.user
	resp := map[string]any{"accessToken": tok, "refreshToken": "refresh" + tok, "expireIn": 7200}
	if c.corp != "" {
		resp["corpId"] = c.corp
	}
	f.answer(w, http.StatusOK, resp)
}

func (f *fakeDingTalk) me(w http.ResponseWriter, r *http.Request) {
	tok := r.Header.Get("x-acs-dingtalk-access-token")
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.tokens[tok]
	switch {
	case !ok || f.revokeTokens:
		msg := "不合法的access_token"
		if f.echoSecretMsg {
			msg += " token=" + tok
		}
		f.fail(w, http.StatusBadRequest, "InvalidAuthentication", msg)
	case f.noPermission:
		f.answer(w, http.StatusForbidden, map[string]any{
			"code": "Forbidden.AccessDenied.AccessTokenPermissionDenied", "requestid": "0A1B2C3D",
			"message":            "没有调用该接口的权限，接口权限申请参考：https://open.dingtalk.com/document/orgapp-server/add-api-permission",
			"accessdenieddetail": map[string]any{"requiredScopes": []string{"Contact.User.Read"}},
		})
	default:
		me := map[string]any{"nick": u.Nick, "avatarUrl": "https://static-legacy.dingtalk.com/media/x.jpg",
			"openId": u.OpenID, "unionId": u.UnionID, "stateCode": "86", "visitor": false}
		if u.Mobile != "" {
			me["mobile"] = u.Mobile
		}
		if f.dropUnionID {
			delete(me, "unionId")
		}
		f.answer(w, http.StatusOK, me)
	}
}
