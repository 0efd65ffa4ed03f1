package fuzz

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/route"
)

// Operations of FuzzAnonymous (op modulo opCount).
const (
	opLogin uint8 = iota
	opRefresh
	opExchange
	opSmsSend
	opSmsLogin
	opCaptcha
	opAuthorize
	opCallback
	opCallbackWithState
	opAnyRoute
	opCount
)

const externalBase = "/api/v1/auth/external"

// FuzzAnonymous drives the endpoints a caller without a token reaches:
// password and SMS login, refresh, ticket exchange, captcha, the external
// login's authorize and callback (fuzzed provider and query; once with a
// real state and cookie from a real authorize, so the token call to the
// provider happens), and any route without a token (401 with the challenge
// unless the route is anonymous).
//
// Placeholders: $REFRESH in a refresh body is a live refresh token, $TICKET
// in an exchange body a live login ticket (a real SSO as bob), $STATE in a
// callback query the state of a real authorize.
func FuzzAnonymous(f *testing.F) {
	h := start(f)
	all := h.routesWhere(func(route.Route) bool { return true })
	if testing.Verbose() {
		logRoutes(f, all)
	}
	seeds := []struct {
		op    uint8
		param string
		query string
		body  string
	}{
		{opLogin, "", "", `{"account":"superAdmin","password":"Adm1n#Passw0rd"}`},
		{opLogin, "", "", `{"account":"superAdmin","password":"wrong"}`},
		{opLogin, "", "", `{"account":"nobody","password":"x","captchaId":"c","captchaCode":"1234"}`},
		{opLogin, "", "", `{"account":"` + strings.Repeat("a", 65) + `","password":"` + strings.Repeat("p", 1025) + `"}`},
		{opLogin, "", "", `{"account":["superAdmin"],"password":{"x":1}}`},
		{opRefresh, "", "", `{"refreshToken":"$REFRESH"}`},
		{opRefresh, "", "", `{"refreshToken":"$REFRESH$REFRESH"}`},
		{opRefresh, "", "", `{"refreshToken":""}`},
		{opRefresh, "", "", `{"refreshToken":null}`},
		{opExchange, "", "", `{"ticket":"$TICKET"}`},
		{opExchange, "", "", `{"ticket":"$TICKETx"}`},
		{opExchange, "other-browser", "", `{"ticket":"$TICKET"}`},
		{opExchange, "", "", `{"ticket":12}`},
		{opSmsSend, "", "", `{"phone":"13800138000"}`},
		{opSmsSend, "", "", `{"phone":"+86 138-0013-8000","captchaId":null,"captchaCode":null}`},
		{opSmsSend, "", "", `{"phone":"` + strings.Repeat("9", 100) + `"}`},
		{opSmsLogin, "", "", `{"phone":"13800138000","code":"123456"}`},
		{opSmsLogin, "", "", `{"phone":"13800138000","code":"` + strings.Repeat("1", 50) + `"}`},
		{opCaptcha, "", "", ""},
		{opCaptcha, "", "type=svg&x=%00", ""},
		{opAuthorize, "", "", ""},
		{opAuthorize, "nope", "", ""},
		{opAuthorize, "CORP", "redirect=https://evil.example/&returnUrl=//evil", ""},
		{opCallback, "", "code=abc&state=def", ""},
		{opCallback, "", "error=access_denied&error_description=no", ""},
		{opCallback, "nope", "code=abc&state=def&state=ghi", ""},
		{opCallbackWithState, "", "code=not-a-code", ""},
		{opCallbackWithState, "", "error=access_denied", ""},
		{opCallbackWithState, "", "code=&iss=https://evil.example", ""},
		{opCallbackWithState, "nope", "code=x", ""},
		{opAnyRoute, "", "", ""},
		{opAnyRoute, "1", "", `{}`},
	}
	for _, s := range seeds {
		f.Add(s.op, uint16(0), s.param, s.query, []byte(s.body))
	}
	for i := range all {
		if !fuzzing() {
			f.Add(opAnyRoute, uint16(i), "", "", []byte(nil))
		}
	}
	f.Fuzz(func(t *testing.T, op uint8, idx uint16, param, query string, body []byte) {
		var send []byte
		if len(body) > 0 {
			send = body
		}
		provider := provider
		if param != "" {
			provider = param
		}
		switch op % opCount {
		case opLogin:
			h.anon(t, "POST", "/api/v1/auth/login", "", send, "")
		case opRefresh:
			if strings.Contains(string(send), "$REFRESH") {
				send = []byte(strings.ReplaceAll(string(send), "$REFRESH", h.refreshToken(t)))
			}
			h.anon(t, "POST", "/api/v1/auth/refresh", "", send, "")
		case opExchange:
			cookie := ""
			if strings.Contains(string(send), "$TICKET") {
				var tk string
				tk, cookie = h.ticket(t)
				send = []byte(strings.ReplaceAll(string(send), "$TICKET", tk))
				if param != "" {
					cookie = "" // the same ticket from another browser
				}
			}
			h.anon(t, "POST", externalBase+"/exchange", "", send, cookie)
		case opSmsSend:
			h.anon(t, "POST", "/api/v1/auth/sms/send", "", send, "")
		case opSmsLogin:
			h.anon(t, "POST", "/api/v1/auth/sms/login", "", send, "")
		case opCaptcha:
			h.anon(t, "GET", "/api/v1/auth/captcha", query, nil, "")
		case opAuthorize:
			h.anon(t, "GET", externalBase+"/"+url.PathEscape(provider)+"/authorize", query, nil, "")
		case opCallback:
			h.anon(t, "GET", externalBase+"/"+url.PathEscape(provider)+"/callback", query, nil, "")
		case opCallbackWithState:
			state, cookie := h.authorize(t)
			q := "state=" + url.QueryEscape(state)
			if query != "" {
				q += "&" + strings.ReplaceAll(query, "$STATE", state)
			}
			h.anon(t, "GET", externalBase+"/"+url.PathEscape(provider)+"/callback", q, nil, cookie)
		case opAnyRoute:
			r := pick(all, idx)
			path := h.fill(r.Path, param)
			rp := h.raw(t, r.Method, path, query, "", send, nil)
			check(t, r.Method+" "+path+" (anonymous)", key(r), rp)
			if r.Access != route.Anonymous && rp.status != http.StatusUnauthorized && rp.status != http.StatusNotFound {
				t.Fatalf("%s %s without a token: HTTP %d, want 401: %s", r.Method, path, rp.status, rp.body)
			}
		}
	})
}

// anon sends one request without a token (cookie: a Cookie header value)
// and checks the invariants.
func (h *harness) anon(t *testing.T, method, path, query string, body []byte, cookie string) reply {
	t.Helper()
	var hdr http.Header
	if cookie != "" {
		hdr = http.Header{"Cookie": {cookie}}
	}
	rp := h.raw(t, method, path, query, "", body, hdr)
	check(t, method+" "+path+"?"+query+" "+truncate(body), templateOf(path), rp)
	return rp
}

// templateOf maps an external-login path back to its route template (for
// the redirect allowance of check).
func templateOf(path string) string {
	if rest, ok := strings.CutPrefix(path, externalBase+"/"); ok {
		if _, action, ok := strings.Cut(rest, "/"); ok && (action == "authorize" || action == "callback" || action == "bind/start") {
			return "GET " + externalBase + "/{provider}/" + action
		}
	}
	return ""
}

// refreshToken issues a fresh super-admin session and returns its refresh
// token.
func (h *harness) refreshToken(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	u, err := h.k.Ent().SysUser.Get(ctx, h.adminID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.k.Auth().IssueTokens(ctx, u, auth.MethodPassword, auth.Client{IP: "192.0.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	return out.RefreshToken
}

// authorize starts a login at the provider and returns the state and the
// state cookie (as a Cookie header value).
func (h *harness) authorize(t *testing.T) (state, cookie string) {
	t.Helper()
	loc, cookie := h.startSSO(t)
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state"), cookie
}

func (h *harness) startSSO(t *testing.T) (location, cookie string) {
	t.Helper()
	rp := h.raw(t, "GET", externalBase+"/"+provider+"/authorize", "", "", nil, nil)
	if rp.status != http.StatusFound {
		t.Fatalf("authorize: HTTP %d %s, want 302", rp.status, rp.body)
	}
	return rp.header.Get("Location"), cookies(t, rp)
}

// ticket runs a whole SSO as bob (provisioned on first use) and returns the
// login ticket of the result page and the browser's cookies (the ticket
// cookie the exchange requires).
func (h *harness) ticket(t *testing.T) (ticket, cookie string) {
	t.Helper()
	loc, cookie := h.startSSO(t)
	cb := h.is.Login(t, loc, "bob")
	rp := h.raw(t, "GET", cb.Path, cb.RawQuery, "", nil, http.Header{"Cookie": {cookie}})
	check(t, "callback of a real SSO", "GET "+externalBase+"/{provider}/callback", rp)
	res, err := url.Parse(rp.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	tk := res.Query().Get("ticket")
	if tk == "" {
		t.Fatalf("SSO as bob ended in %s, want a ticket", res)
	}
	return tk, cookies(t, rp)
}

// cookies returns the cookies an answer sets, as a Cookie header value.
func cookies(t *testing.T, rp reply) string {
	t.Helper()
	var out []string
	for _, line := range rp.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		if c.MaxAge >= 0 && c.Value != "" {
			out = append(out, c.Name+"="+c.Value)
		}
	}
	return strings.Join(out, "; ")
}
