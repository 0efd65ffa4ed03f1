package codehost

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/plugins/internal/vendortest"
)

// fakeGitHub is a faithful fake of the vendor (vendor-protocols.md §6.3):
// the authorization page (with the redirect_uri host/port/sub-path rule),
// the token endpoint (HTTP 200 errors, Accept honoured, PKCE), /user (User-
// Agent and bearer token required) and /user/emails (refused without
// user:email). The REST API is served at / and /api/v3 (Enterprise layout).
type fakeGitHub struct {
	srv *httptest.Server

	mu       sync.Mutex
	clientID string
	secret   string
	callback string // registered authorization callback URL
	clock    time.Time
	codes    map[string]*fakeCode
	tokens   map[string]*fakeUser
	seq      int
	users    map[string]*fakeUser
	nextUser string // who logs in; "deny" declines

	// Hooks.
	formAnswer bool   // the token endpoint ignores Accept and answers form-encoded
	misbehave  string // for the token endpoint and /user: a vendortest.Misbehave name

	calls    map[string]int
	lastUA   string
	lastAuth string
}

type fakeUser struct {
	Login string
	ID    int64
	Name  *string
}

type fakeCode struct {
	user            *fakeUser
	redirectURI     string
	challenge       string
	challengeMethod string
	scope           string
	issued          time.Time
	used            bool
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	name := "The Octocat"
	f := &fakeGitHub{
		clientID: "Iv1.0123456789abcdef",
		secret:   "ghs3cr3t0123456789abcdef0123456789abcdef",
		callback: "https://kernel.example.com/api/v1/auth/external/code_host/callback",
		clock:    time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		codes:    map[string]*fakeCode{},
		tokens:   map[string]*fakeUser{},
		users: map[string]*fakeUser{
			"octocat":  {Login: "octocat", ID: 583231, Name: &name},
			"nameless": {Login: "nameless", ID: 9007199254740993}, // beyond float64 precision
		},
		nextUser: "octocat",
		calls:    map[string]int{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeGitHub) issueCodeLocked(who, redirectURI, challenge, method, scope string) string {
	f.seq++
	c := fmt.Sprintf("%020x", 0xabc000+f.seq)
	f.codes[c] = &fakeCode{user: f.users[who], redirectURI: redirectURI, challenge: challenge, challengeMethod: method, scope: scope, issued: f.clock}
	return c
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.URL.Path]++
	mis := f.misbehave
	f.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	if mis != "" && (r.URL.Path == "/login/oauth/access_token" || path == "/user") {
		vendortest.Misbehave(w, r, mis, "application/json; charset=utf-8")
		return
	}
	switch {
	case r.URL.Path == "/login/oauth/authorize":
		f.authorize(w, r)
	case r.URL.Path == "/login/oauth/access_token" && r.Method == http.MethodPost:
		f.accessToken(w, r)
	case path == "/user" && r.Method == http.MethodGet:
		f.user(w, r)
	case path == "/user/emails":
		f.emails(w, r)
	default:
		f.apiError(w, http.StatusNotFound, "Not Found")
	}
}

func (f *fakeGitHub) apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": fmt.Sprint(status)})
}

// redirectAllowed applies the documented rule: same host or a sub-domain,
// exactly the same port, the callback path or a sub-path (any port for a
// loopback callback).
func redirectAllowed(registered, given string) bool {
	reg, err1 := url.Parse(registered)
	got, err2 := url.Parse(given)
	if err1 != nil || err2 != nil || reg.Scheme != got.Scheme {
		return false
	}
	host := got.Hostname()
	if host != reg.Hostname() && !strings.HasSuffix(host, "."+reg.Hostname()) {
		return false
	}
	if got.Port() != reg.Port() && !net.ParseIP(reg.Hostname()).IsLoopback() {
		return false
	}
	rp := strings.TrimSuffix(reg.Path, "/")
	return got.Path == rp || strings.HasPrefix(got.Path, rp+"/")
}

func (f *fakeGitHub) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.Get("client_id") != f.clientID {
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprint(w, "<html>Not Found</html>")
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		redirect = f.callback
	}
	back := func(to string, v url.Values) {
		u, _ := url.Parse(to)
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	state := q.Get("state")
	switch {
	case !redirectAllowed(f.callback, redirect):
		back(f.callback, url.Values{"error": {"redirect_uri_mismatch"},
			"error_description": {"The redirect_uri MUST match the registered callback URL for this application."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch"},
			"state":             {state}})
	case f.nextUser == "deny":
		back(redirect, url.Values{"error": {"access_denied"},
			"error_description": {"The user has denied your application access."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied"},
			"state":             {state}})
	default:
		back(redirect, url.Values{"code": {f.issueCodeLocked(f.nextUser, q.Get("redirect_uri"), q.Get("code_challenge"), q.Get("code_challenge_method"), q.Get("scope"))}, "state": {state}})
	}
}

func (f *fakeGitHub) accessToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(v map[string]string) {
		if f.formAnswer || !strings.Contains(r.Header.Get("Accept"), "application/json") {
			w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			vals := url.Values{}
			for k, x := range v {
				vals.Set(k, x)
			}
			_, _ = fmt.Fprint(w, vals.Encode())
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(code, desc, anchor string) {
		answer(map[string]string{"error": code, "error_description": desc,
			"error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#" + anchor})
	}
	c, ok := f.codes[r.PostForm.Get("code")]
	switch {
	case r.PostForm.Get("client_id") != f.clientID || r.PostForm.Get("client_secret") != f.secret:
		fail("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.", "incorrect-client-credentials")
	case !ok || c.used || f.clock.Sub(c.issued) > 10*time.Minute:
		fail("bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code")
	case r.PostForm.Has("redirect_uri") && r.PostForm.Get("redirect_uri") != c.redirectURI && c.redirectURI != "":
		fail("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.", "redirect-uri-mismatch")
	case c.challenge != "" && !pkceOK(c.challenge, r.PostForm.Get("code_verifier")):
		c.used = true
		fail("bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code")
	default:
		c.used = true
		f.seq++
		tok := fmt.Sprintf("gho_%036d", f.seq)
		f.tokens[tok] = c.user
		answer(map[string]string{"access_token": tok, "scope": c.scope, "token_type": "bearer"})
	}
}

func pkceOK(challenge, verifier string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return verifier != "" && base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

func (f *fakeGitHub) bearer(w http.ResponseWriter, r *http.Request) (*fakeUser, string, bool) {
	f.lastUA, f.lastAuth = r.Header.Get("User-Agent"), r.Header.Get("Authorization")
	if r.Header.Get("User-Agent") == "" {
		w.WriteHeader(http.StatusForbidden)
		_, _ = fmt.Fprint(w, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.")
		return nil, "", false
	}
	auth := r.Header.Get("Authorization")
	var tok string
	switch {
	case strings.HasPrefix(auth, "Bearer "):
		tok = strings.TrimPrefix(auth, "Bearer ")
	case strings.HasPrefix(auth, "token "):
		tok = strings.TrimPrefix(auth, "token ")
	default:
		f.apiError(w, http.StatusUnauthorized, "Requires authentication")
		return nil, "", false
	}
	u, ok := f.tokens[tok]
	if !ok {
		f.apiError(w, http.StatusUnauthorized, "Bad credentials")
		return nil, "", false
	}
	return u, tok, true
}

func (f *fakeGitHub) user(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, _, ok := f.bearer(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	// Written by hand so the id stays an exact integer literal.
	name := "null"
	if u.Name != nil {
		b, _ := json.Marshal(*u.Name)
		name = string(b)
	}
	fmt.Fprintf(w, `{"login":%q,"id":%d,"node_id":"MDQ6VXNlcjU4MzIzMQ==","avatar_url":"https://avatars.githubusercontent.com/u/%d?v=4","type":"User","site_admin":false,"name":%s,"email":null}`,
		u.Login, u.ID, u.ID, name)
}

func (f *fakeGitHub) emails(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, _, ok := f.bearer(w, r); !ok {
		return
	}
	// The tokens of this fake only ever carry read:user.
	f.apiError(w, http.StatusNotFound, "Not Found")
}
