// Package fakevendor is a standard OAuth 2.0 authorization server for
// provider tests: the authorization-code grant with PKCE (RFC 6749, RFC
// 7636, S256 only), a token endpoint and a userinfo endpoint, served by
// httptest. The walkthrough of docs/vendors/plugins.md tests its provider against
// it.
//
//	GET  /oauth/authorize  response_type=code, client_id, redirect_uri, state,
//	                       code_challenge, code_challenge_method=S256
//	                       → 302 to redirect_uri?code=..&state=..
//	POST /oauth/token      grant_type=authorization_code, code, redirect_uri,
//	                       code_verifier; the client authenticates with HTTP
//	                       Basic or client_id/client_secret in the form
//	                       → {"access_token","token_type":"Bearer","expires_in"}
//	GET  /oauth/userinfo   Authorization: Bearer <access token>
//	                       → {"sub","preferred_username","name","email"}
//
// Codes are single-use and live one minute; an error answers like RFC 6749
// section 5.2 ({"error": "invalid_grant", ...}, HTTP 400 or 401). A user
// marked Blocked is refused at the token endpoint with access_denied: the
// way some vendors report a denial the browser never saw.
//
// Login plays the user in the browser: it follows the authorization URL as
// the signed-in user and returns the callback's query, which is what
// providertest.Options.Login wants.
package fakevendor

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// User is an account at the vendor. ID is stable; Username, Name and Email
// may change (Rename).
type User struct {
	ID       string
	Username string
	Name     string
	Email    string
	// Blocked users are refused at the token endpoint (access_denied).
	Blocked bool
}

// Vendor is a running fake authorization server.
type Vendor struct {
	// URL is the server's base URL (http://127.0.0.1:port), the value of
	// a provider's base-URL setting in tests.
	URL          string
	ClientID     string
	ClientSecret string

	srv *httptest.Server

	mu     sync.Mutex
	users  map[string]*User // by username
	codes  map[string]grant
	tokens map[string]string // access token → user id
	calls  map[string]int    // path → requests
}

type grant struct {
	userID      string
	clientID    string
	redirectURI string
	challenge   string
	expires     time.Time
}

// CodeLifetime is how long an authorization code can be redeemed.
const CodeLifetime = time.Minute

// userHeader names the signed-in user of an authorization request (the
// vendor's session cookie, in a real browser).
const userHeader = "X-Fakevendor-User"

// New starts a vendor with one registered OAuth client; it stops when the
// test ends.
func New(t testing.TB, clientID, clientSecret string) *Vendor {
	t.Helper()
	v := &Vendor{
		ClientID: clientID, ClientSecret: clientSecret,
		users: map[string]*User{}, codes: map[string]grant{}, tokens: map[string]string{}, calls: map[string]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/authorize", v.authorize)
	mux.HandleFunc("POST /oauth/token", v.token)
	mux.HandleFunc("GET /oauth/userinfo", v.userinfo)
	v.srv = httptest.NewServer(mux)
	v.URL = v.srv.URL
	t.Cleanup(v.srv.Close)
	return v
}

// AddUser registers u (replacing a user with the same username).
func (v *Vendor) AddUser(u User) {
	v.mu.Lock()
	defer v.mu.Unlock()
	c := u
	v.users[u.Username] = &c
}

// Rename changes a user's username, keeping the ID: a provider whose
// subject is the stable ID does not notice.
func (v *Vendor) Rename(oldUsername, newUsername string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if u, ok := v.users[oldUsername]; ok {
		delete(v.users, oldUsername)
		u.Username = newUsername
		v.users[newUsername] = u
	}
}

// Calls is how many requests reached path (e.g. "/oauth/token").
func (v *Vendor) Calls(path string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[path]
}

// Login returns a providertest.Options.Login that signs username in: it
// requests the authorization URL as that user and returns the query of
// the redirect back to the kernel (code and state, or error and state).
func (v *Vendor) Login(username string) func(t *testing.T, authorizeURL string) map[string]string {
	return func(t *testing.T, authorizeURL string) map[string]string {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, authorizeURL, nil)
		if err != nil {
			t.Fatalf("fakevendor: %v", err)
		}
		req.Header.Set(userHeader, username)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req) //nolint:gosec // the test's own server
		if err != nil {
			t.Fatalf("fakevendor: authorization request: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("fakevendor: the authorization request answered HTTP %d, not a redirect back to the kernel", resp.StatusCode)
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatalf("fakevendor: bad redirect: %v", err)
		}
		q := map[string]string{}
		for k, vs := range loc.Query() {
			q[k] = vs[0]
		}
		return q
	}
}

func (v *Vendor) count(r *http.Request) {
	v.mu.Lock()
	v.calls[r.URL.Path]++
	v.mu.Unlock()
}

func (v *Vendor) authorize(w http.ResponseWriter, r *http.Request) {
	v.count(r)
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	// An unknown client or an unusable redirect URI is shown to the user,
	// never redirected (RFC 6749 section 4.1.2.1).
	if q.Get("client_id") != v.ClientID {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(redirect)
	if err != nil || (back.Scheme != "http" && back.Scheme != "https") || back.Host == "" {
		http.Error(w, "invalid redirect_uri", http.StatusBadRequest)
		return
	}
	answer := url.Values{"state": {q.Get("state")}}
	fail := func(code string) {
		answer.Set("error", code)
		back.RawQuery = answer.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound) //nolint:gosec // G710: an authorization server redirects to the client's redirect_uri by design
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type")
		return
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		fail("invalid_request")
		return
	}
	v.mu.Lock()
	u, ok := v.users[r.Header.Get(userHeader)]
	v.mu.Unlock()
	if !ok {
		fail("access_denied")
		return
	}
	code := rand.Text()
	v.mu.Lock()
	v.codes[code] = grant{userID: u.ID, clientID: v.ClientID, redirectURI: redirect, challenge: q.Get("code_challenge"), expires: time.Now().Add(CodeLifetime)}
	v.mu.Unlock()
	answer.Set("code", code)
	back.RawQuery = answer.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound) //nolint:gosec // G710: an authorization server redirects to the client's redirect_uri by design
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (v *Vendor) token(w http.ResponseWriter, r *http.Request) {
	v.count(r)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if !equal(id, v.ClientID) || !equal(secret, v.ClientSecret) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code")
		return
	}
	code := r.PostForm.Get("code")
	v.mu.Lock()
	g, ok := v.codes[code]
	delete(v.codes, code) // single use, whatever happens next
	v.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case !ok || time.Now().After(g.expires) || g.clientID != id:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, used or expired")
		return
	case g.redirectURI != r.PostForm.Get("redirect_uri"):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
		return
	case !equal(base64.RawURLEncoding.EncodeToString(sum[:]), g.challenge):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code_verifier does not match the code_challenge")
		return
	}
	v.mu.Lock()
	var user *User
	for _, u := range v.users {
		if u.ID == g.userID {
			user = u
		}
	}
	blocked := user == nil || user.Blocked
	access := rand.Text()
	if !blocked {
		v.tokens[access] = g.userID
	}
	v.mu.Unlock()
	if blocked {
		oauthError(w, http.StatusBadRequest, "access_denied", "the user may not use this application")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600})
}

func (v *Vendor) userinfo(w http.ResponseWriter, r *http.Request) {
	v.count(r)
	const prefix = "Bearer "
	h := r.Header.Get("Authorization")
	var token string
	if len(h) > len(prefix) && h[:len(prefix)] == prefix {
		token = h[len(prefix):]
	}
	v.mu.Lock()
	var found *User
	if id, ok := v.tokens[token]; ok {
		for _, u := range v.users {
			if u.ID == id {
				c := *u
				found = &c
			}
		}
	}
	v.mu.Unlock()
	if found == nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		oauthError(w, http.StatusUnauthorized, "invalid_token", "unknown access token")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"sub": found.ID, "preferred_username": found.Username, "name": found.Name, "email": found.Email})
}
