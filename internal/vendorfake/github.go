package vendorfake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// GitHub is a faithful fake of the vendor (vendor-protocols.md §6.3):
// the authorization page (with the redirect_uri host/port/sub-path rule),
// the token endpoint (HTTP 200 errors, Accept honoured, PKCE), /user (User-
// Agent and bearer token required) and /user/emails (refused without
// user:email). The REST API is served at / and /api/v3 (Enterprise layout).
// The token endpoint and /user misbehave on demand.
type GitHub struct {
	Core

	ClientID string
	Secret   string
	Callback string                 // registered authorization callback URL
	Users    map[string]*GitHubUser // by login name at the page

	// Hooks.
	NextUser   string // who logs in; "deny" declines
	FormAnswer bool   // the token endpoint ignores Accept and answers form-encoded

	// What /user last saw.
	LastUA   string
	LastAuth string

	codes  map[string]*gitHubCode
	tokens map[string]*GitHubUser
	seq    int
}

// GitHubUser is an account at the fake.
type GitHubUser struct {
	Login string
	ID    int64
	Name  *string
}

type gitHubCode struct {
	user            *GitHubUser
	redirectURI     string
	challenge       string
	challengeMethod string
	scope           string
	issued          time.Time
	used            bool
}

// NewGitHub starts a fake GitHub with an OAuth app whose callback is
// https://kernel.example.com/api/v1/auth/external/code_host/callback, and
// users octocat (583231, logs in) and nameless (an id beyond float64
// precision, no name).
func NewGitHub(t testing.TB) *GitHub {
	t.Helper()
	name := "The Octocat"
	f := &GitHub{
		ClientID: "Iv1.0123456789abcdef",
		Secret:   "ghs3cr3t0123456789abcdef0123456789abcdef",
		Callback: "https://kernel.example.com/api/v1/auth/external/code_host/callback",
		Users: map[string]*GitHubUser{
			"octocat":  {Login: "octocat", ID: 583231, Name: &name},
			"nameless": {Login: "nameless", ID: 9007199254740993}, // beyond float64 precision
		},
		NextUser: "octocat",
		codes:    map[string]*gitHubCode{},
		tokens:   map[string]*GitHubUser{},
	}
	f.Clock = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.start(t, f.serve)
	return f
}

func (f *GitHub) issueCodeLocked(who, redirectURI, challenge, method, scope string) string {
	f.seq++
	c := f.issueLocked(fmt.Sprintf("%020x", 0xabc000+f.seq))
	f.codes[c] = &gitHubCode{user: f.Users[who], redirectURI: redirectURI, challenge: challenge, challengeMethod: method, scope: scope, issued: f.Clock}
	return c
}

func (f *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	if f.begin(w, r, r.URL.Path == "/login/oauth/access_token" || path == "/user", "application/json; charset=utf-8") {
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

func (f *GitHub) apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": fmt.Sprint(status)})
}

// gitHubRedirectAllowed applies the documented rule: same host or a sub-domain,
// exactly the same port, the callback path or a sub-path (any port for a
// loopback callback).
func gitHubRedirectAllowed(registered, given string) bool {
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

func (f *GitHub) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.Get("client_id") != f.ClientID {
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprint(w, "<html>Not Found</html>")
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		redirect = f.Callback
	}
	back := func(to string, v url.Values) {
		u, _ := url.Parse(to)
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	state := q.Get("state")
	switch {
	case !gitHubRedirectAllowed(f.Callback, redirect):
		back(f.Callback, url.Values{"error": {"redirect_uri_mismatch"},
			"error_description": {"The redirect_uri MUST match the registered callback URL for this application."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch"},
			"state":             {state}})
	case f.NextUser == "deny":
		back(redirect, url.Values{"error": {"access_denied"},
			"error_description": {"The user has denied your application access."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied"},
			"state":             {state}})
	default:
		back(redirect, url.Values{"code": {f.issueCodeLocked(f.NextUser, q.Get("redirect_uri"), q.Get("code_challenge"), q.Get("code_challenge_method"), q.Get("scope"))}, "state": {state}})
	}
}

func (f *GitHub) accessToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(v map[string]string) {
		if f.FormAnswer || !strings.Contains(r.Header.Get("Accept"), "application/json") {
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
	case r.PostForm.Get("client_id") != f.ClientID || r.PostForm.Get("client_secret") != f.Secret:
		fail("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.", "incorrect-client-credentials")
	case !ok || c.used || f.Clock.Sub(c.issued) > 10*time.Minute:
		fail("bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code")
	case r.PostForm.Has("redirect_uri") && r.PostForm.Get("redirect_uri") != c.redirectURI && c.redirectURI != "":
		fail("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.", "redirect-uri-mismatch")
	case c.challenge != "" && !pkceOK(c.challenge, r.PostForm.Get("code_verifier")):
		c.used = true
		fail("bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code")
	default:
		c.used = true
		f.seq++
		tok := f.issueLocked(fmt.Sprintf("gho_%036d", f.seq))
		f.tokens[tok] = c.user
		answer(map[string]string{"access_token": tok, "scope": c.scope, "token_type": "bearer"})
	}
}

func pkceOK(challenge, verifier string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return verifier != "" && base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

func (f *GitHub) bearer(w http.ResponseWriter, r *http.Request) (*GitHubUser, string, bool) {
	f.LastUA, f.LastAuth = r.Header.Get("User-Agent"), r.Header.Get("Authorization")
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

func (f *GitHub) user(w http.ResponseWriter, r *http.Request) {
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

func (f *GitHub) emails(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, _, ok := f.bearer(w, r); !ok {
		return
	}
	// The tokens of this fake only ever carry read:user.
	f.apiError(w, http.StatusNotFound, "Not Found")
}
