package enterprisechat

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

// fakeWeCom is a faithful fake of the vendor (vendor-protocols.md §6.1): the
// in-client authorize page, the QR login page, gettoken, auth/getuserinfo
// (and the legacy user/getuserinfo) and user/get, all HTTP 200 JSON with
// errcode/errmsg. Codes are single-use and expire after 5 minutes on the
// fake's clock; the access token is the same while valid.
type fakeWeCom struct {
	srv *httptest.Server

	mu            sync.Mutex
	corpID        string
	secret        string
	agentID       string
	trustedDomain string // host[:port] of allowed redirect URIs

	clock    time.Time
	token    string
	tokenExp time.Time
	tokenSeq int
	revoked  map[string]int // token → errcode it now draws (40014/42001)
	codes    map[string]*fakeCode
	codeSeq  int
	members  map[string]string // userid → name

	// Hooks.
	nextUser       string // identity the authorize pages log in: a userid, "outsider" (non-member) or "deny"
	gettokenErr    int    // gettoken answers this errcode (45009, 60020, ...)
	alwaysExpired  bool   // every API call answers 42001
	domainMismatch bool   // getuserinfo answers 50001
	echoSecretMsg  bool   // errmsg echoes the secret and token (to test scrubbing)
	gettokenDelay  time.Duration
	misbehave      string // for /cgi-bin/*: a vendortest.Misbehave name

	calls    map[string]int
	requests []*http.Request
}

type fakeCode struct {
	userID, openID string
	issued         time.Time
	used           bool
}

func newFakeWeCom(t *testing.T) *fakeWeCom {
	t.Helper()
	f := &fakeWeCom{
		corpID:   "ww1234567890abcdef",
		secret:   "S3cr3t-corp-secret-value",
		agentID:  "1000002",
		clock:    time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		revoked:  map[string]int{},
		codes:    map[string]*fakeCode{},
		members:  map[string]string{"zhangsan": "张三", "lisi": "李四"},
		nextUser: "zhangsan",
		calls:    map[string]int{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.trustedDomain = "kernel.example.com"
	return f
}

func (f *fakeWeCom) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock
}

func (f *fakeWeCom) advance(d time.Duration) {
	f.mu.Lock()
	f.clock = f.clock.Add(d)
	f.mu.Unlock()
}

func (f *fakeWeCom) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

// expireToken makes the current token draw errcode (42001 expired, 40014
// invalid) from now on; gettoken then issues a new one.
func (f *fakeWeCom) expireToken(errcode int) {
	f.mu.Lock()
	f.revoked[f.token] = errcode
	f.token = ""
	f.mu.Unlock()
}

// issueCode plays a user's successful authorization.
func (f *fakeWeCom) issueCode(who string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issueCodeLocked(who)
}

func (f *fakeWeCom) issueCodeLocked(who string) string {
	f.codeSeq++
	c := fmt.Sprintf("CODE%04dxYz", f.codeSeq)
	fc := &fakeCode{issued: f.clock}
	if who == "outsider" {
		fc.openID = "oXYZ_outsider"
	} else {
		fc.userID = who
	}
	f.codes[c] = fc
	return c
}

func (f *fakeWeCom) json(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeWeCom) errJSON(w http.ResponseWriter, code int, msg string) {
	f.json(w, map[string]any{"errcode": code, "errmsg": msg})
}

func (f *fakeWeCom) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.URL.Path]++
	f.requests = append(f.requests, r.Clone(r.Context()))
	mis := f.misbehave
	f.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/cgi-bin/") && mis != "" {
		vendortest.Misbehave(w, r, mis, "application/json; charset=UTF-8")
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

func (f *fakeWeCom) authorize(w http.ResponseWriter, r *http.Request, qr bool) {
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
	case q.Get("appid") != f.corpID:
		bad("invalid appid")
		return
	case err != nil || redirect.Host != f.trustedDomain:
		bad("redirect_uri需使用应用可信域名")
		return
	case q.Get("state") == "":
		bad("missing state")
		return
	}
	if qr {
		if q.Get("login_type") != "CorpApp" || q.Get("agentid") != f.agentID {
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
	if f.nextUser != "deny" {
		cb.Set("code", f.issueCodeLocked(f.nextUser))
	}
	cb.Set("state", q.Get("state"))
	if qr {
		cb.Set("appid", f.corpID)
	}
	redirect.RawQuery = cb.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (f *fakeWeCom) gettoken(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	delay := f.gettokenDelay
	f.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case q.Get("corpid") == "":
		f.errJSON(w, 41002, "corpid missing")
	case q.Get("corpid") != f.corpID:
		f.errJSON(w, 40013, "invalid corpid")
	case q.Get("corpsecret") == "":
		f.errJSON(w, 41004, "corpsecret missing")
	case q.Get("corpsecret") != f.secret:
		msg := "invalid credential, hint: [1740000000_1_abc], from ip: 203.0.113.7, more info at https://open.work.weixin.qq.com/devtool/query?e=40001"
		if f.echoSecretMsg {
			msg += " corpsecret=" + q.Get("corpsecret")
		}
		f.errJSON(w, 40001, msg)
	case f.gettokenErr == 45009:
		f.errJSON(w, 45009, "api freq out of limit")
	case f.gettokenErr == 60020:
		f.errJSON(w, 60020, "not allow to access from your ip, hint: [1740000000_2_def], from ip: 203.0.113.7")
	case f.gettokenErr != 0:
		f.errJSON(w, f.gettokenErr, "system error")
	default:
		if f.token == "" || !f.clock.Before(f.tokenExp) {
			f.tokenSeq++
			f.token = fmt.Sprintf("accesstoken%06d%s", f.tokenSeq, strings.Repeat("x", 40))
			f.tokenExp = f.clock.Add(7200 * time.Second)
		}
		f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "access_token": f.token, "expires_in": int(f.tokenExp.Sub(f.clock) / time.Second)})
	}
}

// checkToken answers the token errors; it reports false when it did.
func (f *fakeWeCom) checkToken(w http.ResponseWriter, tok string) bool {
	switch {
	case tok == "":
		f.errJSON(w, 41001, "access_token missing")
	case f.alwaysExpired:
		f.errJSON(w, 42001, "access_token expired, hint: [1740000000_3_ghi]")
	case f.revoked[tok] == 42001:
		f.errJSON(w, 42001, "access_token expired, hint: [1740000000_3_ghi]")
	case f.revoked[tok] != 0 || tok != f.token:
		msg := "invalid access_token, hint: [1740000000_4_jkl]"
		if f.echoSecretMsg {
			msg += " access_token=" + tok
		}
		f.errJSON(w, 40014, msg)
	case !f.clock.Before(f.tokenExp):
		f.errJSON(w, 42001, "access_token expired")
	default:
		return true
	}
	return false
}

func (f *fakeWeCom) getuserinfo(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.checkToken(w, q.Get("access_token")) {
		return
	}
	if f.domainMismatch {
		f.errJSON(w, 50001, "redirect_url not authorised")
		return
	}
	code := q.Get("code")
	c, ok := f.codes[code]
	if !ok || c.used || f.clock.Sub(c.issued) > 5*time.Minute {
		msg := "invalid code, hint: [1740000000_5_mno], from ip: 203.0.113.7, more info at https://open.work.weixin.qq.com/devtool/query?e=40029"
		if f.echoSecretMsg {
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

func (f *fakeWeCom) userGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.checkToken(w, q.Get("access_token")) {
		return
	}
	name, ok := f.members[q.Get("userid")]
	if !ok {
		f.errJSON(w, 60111, "userid not found")
		return
	}
	// A "new app": no avatar, gender, mobile or email.
	f.json(w, map[string]any{"errcode": 0, "errmsg": "ok", "userid": q.Get("userid"), "name": name,
		"department": []int{1}, "position": "", "status": 1, "main_department": 1})
}
