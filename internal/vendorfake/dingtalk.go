package vendorfake

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// DingTalk is a faithful fake of the vendor (vendor-protocols.md §6.2):
// the login page, the user token call (JSON body only) and users/me. Errors
// are HTTP 4xx with a JSON code/message/requestid. Codes are single-use and
// expire after 5 minutes on the fake's clock. The API paths (/v1.0/*)
// misbehave on demand.
type DingTalk struct {
	Core

	ClientID   string
	Secret     string
	Redirect   string                  // the registered redirect URL
	Users      map[string]DingTalkUser // login name → user
	NextUser   string                  // who logs in at the page; "deny" declines
	PickedCorp string                  // corp the user picks when scope has corpid

	// Hooks.
	NoPermission  bool // users/me answers 403 (app lacks Contact.User.Read)
	RevokeTokens  bool // users/me answers 400 InvalidAuthentication
	DropUnionID   bool // users/me omits unionId
	EchoSecretMsg bool // error messages echo the secret / code

	codes  map[string]*dingTalkCode
	tokens map[string]DingTalkUser
	seq    int
}

// DingTalkUser is an account at the fake.
type DingTalkUser struct {
	Nick, UnionID, OpenID, Mobile string
}

type dingTalkCode struct {
	user   DingTalkUser
	corp   string
	issued time.Time
	used   bool
}

// NewDingTalk starts a fake DingTalk with an app whose registered redirect
// URL is https://kernel.example.com/api/v1/auth/external/team_chat/callback,
// and users zhangsan (logs in, picks corp dingcorp1) and lisi.
func NewDingTalk(t testing.TB) *DingTalk {
	t.Helper()
	f := &DingTalk{
		ClientID: "dingabcdef123456",
		Secret:   "Dt-s3cr3t-app-secret",
		Redirect: "https://kernel.example.com/api/v1/auth/external/team_chat/callback",
		Users: map[string]DingTalkUser{
			"zhangsan": {Nick: "张三", UnionID: "uNi0nZhangSan", OpenID: "0penZhangSan", Mobile: "15000000000"},
			"lisi":     {Nick: "李四", UnionID: "uNi0nLiSi", OpenID: "0penLiSi"},
		},
		NextUser:   "zhangsan",
		PickedCorp: "dingcorp1",
		codes:      map[string]*dingTalkCode{},
		tokens:     map[string]DingTalkUser{},
	}
	f.Clock = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.start(t, f.serve)
	return f
}

// IssueCode plays a user's successful authorization.
func (f *DingTalk) IssueCode(who string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issueCodeLocked(who, "")
}

func (f *DingTalk) issueCodeLocked(who, corp string) string {
	f.seq++
	c := f.issueLocked(fmt.Sprintf("authc0de%04d", f.seq))
	f.codes[c] = &dingTalkCode{user: f.Users[who], corp: corp, issued: f.Clock}
	return c
}

func (f *DingTalk) answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *DingTalk) fail(w http.ResponseWriter, status int, code, msg string) {
	f.answer(w, status, map[string]any{"code": code, "message": msg, "requestid": "0A1B2C3D-4E5F-6789"})
}

func (f *DingTalk) serve(w http.ResponseWriter, r *http.Request) {
	if f.begin(w, r, strings.HasPrefix(r.URL.Path, "/v1.0/"), "application/json;charset=utf-8") {
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/oauth2/auth":
		f.authorize(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1.0/oauth2/userAccessToken":
		f.userAccessToken(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1.0/contact/users/me":
		f.me(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1.0/oauth2/accessToken":
		f.appAccessToken(w, r)
	default:
		f.fail(w, http.StatusNotFound, "InvalidAction.NotFound", "Specified api is not found, please check your url and method.")
	}
}

func (f *DingTalk) authorize(w http.ResponseWriter, r *http.Request) {
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
	case q.Get("client_id") != f.ClientID:
		page("应用不存在")
	case q.Get("response_type") != "code" || q.Get("prompt") != "consent" || !hasScope("openid"):
		page("参数错误")
	case q.Get("redirect_uri") != f.Redirect:
		page("redirect_uri 不合法")
	case q.Get("state") == "":
		page("state 缺失")
	default:
		cb, _ := url.Parse(q.Get("redirect_uri"))
		v := cb.Query()
		if f.NextUser == "deny" {
			v.Set("error", "access_denied")
		} else {
			corp := ""
			if hasScope("corpid") {
				corp = f.PickedCorp
			}
			v.Set("authCode", f.issueCodeLocked(f.NextUser, corp))
		}
		v.Set("state", q.Get("state"))
		cb.RawQuery = v.Encode()
		http.Redirect(w, r, cb.String(), http.StatusFound)
	}
}

func (f *DingTalk) userAccessToken(w http.ResponseWriter, r *http.Request) {
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
	if body.ClientID != f.ClientID || body.ClientSecret != f.Secret {
		msg := "clientId或clientSecret不合法"
		if f.EchoSecretMsg {
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
	if !ok || c.used || f.Clock.Sub(c.issued) > 5*time.Minute {
		msg := "不合法的临时授权码"
		if f.EchoSecretMsg {
			msg += " code=" + body.Code
		}
		f.fail(w, http.StatusBadRequest, "invalidParameter.authCode.notFound", msg)
		return
	}
	c.used = true
	f.seq++
	tok := f.issueLocked(fmt.Sprintf("usertoken%04d%s", f.seq, strings.Repeat("t", 24)))
	f.tokens[tok] = c.user
	resp := map[string]any{"accessToken": tok, "refreshToken": "refresh" + tok, "expireIn": 7200}
	if c.corp != "" {
		resp["corpId"] = c.corp
	}
	f.answer(w, http.StatusOK, resp)
}

func (f *DingTalk) me(w http.ResponseWriter, r *http.Request) {
	tok := r.Header.Get("x-acs-dingtalk-access-token")
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.tokens[tok]
	switch {
	case !ok || f.RevokeTokens:
		msg := "不合法的access_token"
		if f.EchoSecretMsg {
			msg += " token=" + tok
		}
		f.fail(w, http.StatusBadRequest, "InvalidAuthentication", msg)
	case f.NoPermission:
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
		if f.DropUnionID {
			delete(me, "unionId")
		}
		f.answer(w, http.StatusOK, me)
	}
}
