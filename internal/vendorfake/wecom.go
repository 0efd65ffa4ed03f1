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

// WeCom is a faithful fake of the vendor (vendor-protocols.md §6.1): the
// in-client authorize page, the QR login page, gettoken, auth/getuserinfo
// (and the legacy user/getuserinfo) and user/get, all HTTP 200 JSON with
// errcode/errmsg. Codes are single-use and expire after 5 minutes on the
// fake's clock; the access token is the same while valid. The API paths
// (/cgi-bin/*) misbehave on demand.
type WeCom struct {
	Core

	CorpID        string
	Secret        string
	AgentID       string
	TrustedDomain string            // host[:port] of allowed redirect URIs
	Members       map[string]string // userid → name

	// Hooks.
	NextUser       string        // identity the authorize pages log in: a userid, "outsider" (non-member) or "deny"
	GettokenErr    int           // gettoken answers this errcode (45009, 60020, ...)
	AlwaysExpired  bool          // every API call answers 42001
	DomainMismatch bool          // getuserinfo answers 50001
	EchoSecretMsg  bool          // errmsg echoes the secret and token (to test scrubbing)
	GettokenDelay  time.Duration // gettoken answers after this long

	token    string
	tokenExp time.Time
	tokenSeq int
	revoked  map[string]int // token → errcode it now draws (40014/42001)
	codes    map[string]*weComCode
	codeSeq  int
}

type weComCode struct {
	userID, openID string
	issued         time.Time
	used           bool
}

// NewWeCom starts a fake WeCom for corp ww1234567890abcdef, agent 1000002,
// trusted domain kernel.example.com, with members zhangsan and lisi
// (zhangsan logs in).
func NewWeCom(t testing.TB) *WeCom {
	t.Helper()
	f := &WeCom{
		CorpID:        "ww1234567890abcdef",
		Secret:        "S3cr3t-corp-secret-value",
		AgentID:       "1000002",
		TrustedDomain: "kernel.example.com",
		Members:       map[string]string{"zhangsan": "张三", "lisi": "李四"},
		NextUser:      "zhangsan",
		revoked:       map[string]int{},
		codes:         map[string]*weComCode{},
	}
	f.Clock = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.start(t, f.serve)
	return f
}

// ExpireToken makes the current token draw errcode (42001 expired, 40014
// invalid) from now on; gettoken then issues a new one.
func (f *WeCom) ExpireToken(errcode int) {
	f.mu.Lock()
	f.revoked[f.token] = errcode
	f.token = ""
	f.mu.Unlock()
}

// IssueCode plays a user's successful authorization.
func (f *WeCom) IssueCode(who string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issueCodeLocked(who)
}

func (f *WeCom) issueCodeLocked(who string) string {
	f.codeSeq++
	c := f.issueLocked(fmt.Sprintf("CODE%04dxYz", f.codeSeq))
	fc := &weComCode{issued: f.Clock}
	if who == "outsider" {
		fc.openID = "oXYZ_outsider"
	} else {
		fc.userID = who
	}
	f.codes[c] = fc
	return c
}

func (f *WeCom) json(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *WeCom) errJSON(w http.ResponseWriter, code int, msg string) {
	f.json(w, map[string]any{"errcode": code, "errmsg": msg})
}

func (f *WeCom) serve(w http.ResponseWriter, r *http.Request) {
	if f.begin(w, r, strings.HasPrefix(r.URL.Path, "/cgi-bin/"), "application/json; charset=UTF-8") {
		return
	}
	switch r.URL.Path {
	case "/connect/oauth2/authorize":
		f.authorize(w, r, false)
	case "/wwlogin/sso/login":
		f.authorize(w, r, true)
	case "/cgi-bin/gettoken":
		f.gettoken(w, r)
	case "/cgi-bin/auth/getuserinfo", "/cgi-bin/user/getuserinfo":
		f.getuserinfo(w, r)
	case "/cgi-bin/user/get":
		f.userGet(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *WeCom) authorize(w http.ResponseWriter, r *http.Request, qr bool) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	f.mu.Lock()
	defer f.mu.Unlock()
	bad := func(msg string) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "<html><body>%s</body></html>", msg)
	}
	switch {
	case q.Get("appid") != f.CorpID:
		bad("invalid appid")
		return
	case err != nil || redirect.Host != f.TrustedDomain:
		bad("redirect_uri需使用应用可信域名")
		return
	case q.Get("state") == "":
		bad("missing state")
		return
	}
	if qr {
		if q.Get("login_type") != "CorpApp" || q.Get("agentid") != f.AgentID {
			bad("invalid login_type or agentid")
			return
		}
	} else {
		scope := q.Get("scope")
		if q.Get("response_type") != "code" || (scope != "snsapi_base" && scope != "snsapi_privateinfo") {
			bad("invalid response_type or scope")
			return
		}
		if scope == "snsapi_privateinfo" && q.Get("agentid") == "" {
			bad("agentid required")
			return
		}
	}
	cb := redirect.Query()
	if f.NextUser != "deny" {
		cb.Set("code", f.issueCodeLocked(f.NextUser))
	}
	cb.Set("state", q.Get("state"))
	if qr {
		cb.Set("appid", f.CorpID)
	}
	redirect.RawQuery = cb.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (f *WeCom) gettoken(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	delay := f.GettokenDelay
	f.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case q.Get("corpid") == "":
		f.errJSON(w, 41002, "corpid missing")
	case q.Get("corpid") != f.CorpID:
		f.errJSON(w, 40013, "invalid corpid")
	case q.Get("corpsecret") == "":
		f.errJSON(w, 41004, "corpsecret missing")
	case q.Get("corpsecret") != f.Secret:
		msg := "invalid credential, hint: [1740000000_1_abc], from ip: 203.0.113.7, more info at https://open.work.weixin.qq.com/devtool/query?e=40001"
		if f.EchoSecretMsg {
			msg += " corpsecret=" + q.Get("corpsecret")
		}
		f.errJSON(w, 40001, msg)
	case f.GettokenErr == 45009:
		f.errJSON(w, 45009, "api freq out of limit")
	case f.GettokenErr == 60020:
		f.errJSON(w, 60020, "not allow to access from your ip, hint: [1740000000_2_def], from ip: 203.0.113.7")
	case f.GettokenErr != 0:
		f.errJSON(w, f.GettokenErr, "system error")
	default:
		if f.token == "" || !f.Clock.Before(f.tokenExp) {
			f.tokenSeq++
			f.token = f.issueLocked(fmt.Sprintf("accesstoken%06d%s", f.tokenSeq, strings.Repeat("x", 40)))
			f.tokenExp = f.Clock.Add(7200 * time.Second)
		}
		f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "access_token": f.token, "expires_in": int(f.tokenExp.Sub(f.Clock) / time.Second)})
	}
}

// checkToken answers the token errors; it reports false when it did.
func (f *WeCom) checkToken(w http.ResponseWriter, tok string) bool {
	switch {
	case tok == "":
		f.errJSON(w, 41001, "access_token missing")
	case f.AlwaysExpired:
		f.errJSON(w, 42001, "access_token expired, hint: [1740000000_3_ghi]")
	case f.revoked[tok] == 42001:
		f.errJSON(w, 42001, "access_token expired, hint: [1740000000_3_ghi]")
	case f.revoked[tok] != 0 || tok != f.token:
		msg := "invalid access_token, hint: [1740000000_4_jkl]"
		if f.EchoSecretMsg {
			msg += " access_token=" + tok
		}
		f.errJSON(w, 40014, msg)
	case !f.Clock.Before(f.tokenExp):
		f.errJSON(w, 42001, "access_token expired")
	default:
		return true
	}
	return false
}

func (f *WeCom) getuserinfo(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.checkToken(w, q.Get("access_token")) {
		return
	}
	if f.DomainMismatch {
		f.errJSON(w, 50001, "redirect_url not authorised")
		return
	}
	code := q.Get("code")
	c, ok := f.codes[code]
	if !ok || c.used || f.Clock.Sub(c.issued) > 5*time.Minute {
		msg := "invalid code, hint: [1740000000_5_mno], from ip: 203.0.113.7, more info at https://open.work.weixin.qq.com/devtool/query?e=40029"
		if f.EchoSecretMsg {
			msg += " code=" + code
		}
		f.errJSON(w, 40029, msg)
		return
	}
	c.used = true
	legacy := r.URL.Path == "/cgi-bin/user/getuserinfo"
	switch {
	case c.userID != "" && legacy:
		f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "UserId": c.userID, "DeviceId": "dev-1"})
	case c.userID != "":
		f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "userid": c.userID})
	case legacy:
		f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "OpenId": c.openID, "DeviceId": "dev-1"})
	default:
		f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "openid": c.openID, "external_userid": "wmEXT123"})
	}
}

func (f *WeCom) userGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.checkToken(w, q.Get("access_token")) {
		return
	}
	name, ok := f.Members[q.Get("userid")]
	if !ok {
		f.errJSON(w, 60111, "userid not found")
		return
	}
	// A "new app": no avatar, gender, mobile or email.
	f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "userid": q.Get("userid"), "name": name,
		"department": []int{1}, "position": "", "status": 1, "main_department": 1})
}
