// Package oidctest is an OpenID provider for tests: an httptest server with
// discovery, a key set (an RSA key generated per issuer), an authorization
// endpoint that signs a user in without a page and redirects back with a
// code, a token endpoint that checks the client, the redirect URI and
// PKCE and issues an RS256 ID token carrying the nonce received at
// authorization, and a userinfo endpoint answering for the access tokens it
// issued. Tests can alter the claims or the signing key of the next tokens
// to exercise ID-token validation, rotate the signing key, alter or replace
// the userinfo answer, and count token, key-set and userinfo calls.
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// User is an account at the test provider.
type User struct {
	Subject           string
	PreferredUsername string
	Name              string
	Email             string
	// EmailVerified is sent as email_verified when not nil.
	EmailVerified *bool
}

// Issuer is a running test provider.
type Issuer struct {
	// URL is the issuer (the server's base URL).
	URL          string
	ClientID     string
	ClientSecret string
	// Key signs ID tokens; its public half is served at /keys under KeyID.
	// Both are fixed at New: Rotate changes the signing key without
	// touching them (see CurrentKey).
	Key   *rsa.PrivateKey
	KeyID string

	server        *httptest.Server
	tokenCalls    atomic.Int64
	keysCalls     atomic.Int64
	userInfoCalls atomic.Int64

	mu          sync.Mutex
	users       map[string]User
	defaultUser string
	grants      map[string]grant
	mutate      func(claims map[string]any)
	signKey     *rsa.PrivateKey
	signKID     string
	lastAuth    url.Values
	tokenDelay  time.Duration
	// published are the keys served at /keys (the current one last);
	// curKey/curKID sign the next tokens.
	published  []jose.JSONWebKey
	curKey     *rsa.PrivateKey
	curKID     string
	rotations  int
	accessToks map[string]User
	uiMutate   func(claims map[string]any)
	uiHandler  http.Handler
}

type grant struct {
	user          User
	clientID      string
	redirectURI   string
	nonce         string
	challenge     string
	challengeMeth string
}

// Options configure Start.
type Options struct {
	// Addr is the TCP address to listen on ("" = a free port on
	// 127.0.0.1).
	Addr string
	// Wrap, when set, wraps the provider's handler (for example to pick
	// the signed-in user from a cookie in a browser test).
	Wrap func(http.Handler) http.Handler
}

// New starts a provider for client id "kernel-client" with a generated
// secret and a default user "alice" (subject "sub-alice"). It stops when
// the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	is, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.Close)
	return is
}

// Start is New for a program that is not a test: it listens on opts.Addr
// and runs until Close.
func Start(opts Options) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	is := &Issuer{
		ClientID:     "kernel-client",
		ClientSecret: "s3cret-" + rand.Text(),
		Key:          key,
		KeyID:        "k1",
		users:        map[string]User{},
		grants:       map[string]grant{},
		accessToks:   map[string]User{},
	}
	is.curKey, is.curKID = key, is.KeyID
	is.published = []jose.JSONWebKey{publicJWK(key, is.KeyID)}
	is.AddUser(User{Subject: "sub-alice", PreferredUsername: "alice", Name: "Alice", Email: "alice@example.test"})
	is.defaultUser = "alice"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", is.discovery)
	mux.HandleFunc("GET /keys", is.keys)
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.token)
	mux.HandleFunc("GET /userinfo", is.userinfo)
	var h http.Handler = mux
	if opts.Wrap != nil {
		h = opts.Wrap(mux)
	}
	is.server = httptest.NewUnstartedServer(h)
	if opts.Addr != "" {
		var lc net.ListenConfig
		l, err := lc.Listen(context.Background(), "tcp", opts.Addr)
		if err != nil {
			return nil, err
		}
		_ = is.server.Listener.Close()
		is.server.Listener = l
	}
	is.server.Start()
	is.URL = is.server.URL
	return is, nil
}

// Close stops the provider.
func (is *Issuer) Close() { is.server.Close() }

// HasUser reports whether an account named login (PreferredUsername) is
// registered.
func (is *Issuer) HasUser(login string) bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	_, ok := is.users[login]
	return ok
}

// AddUser registers (or replaces) an account, selected at authorization by
// login=<PreferredUsername>.
func (is *Issuer) AddUser(u User) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.users[u.PreferredUsername] = u
}

// Mutate changes the claims of every ID token issued from now on (nil
// restores the normal claims). The function sees iss, sub, aud, exp, iat,
// nonce and the profile claims, and may add, change or delete any of them.
func (is *Issuer) Mutate(f func(claims map[string]any)) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.mutate = f
}

// SignWith signs the next ID tokens with another key under the current key
// id (nil restores the current key): their signature no longer verifies.
func (is *Issuer) SignWith(k *rsa.PrivateKey) {
	is.SignWithKeyID(k, "")
}

// SignWithKeyID signs the next ID tokens with k under key id kid ("" = the
// current key id); nil restores the current key. A kid the key set does not
// publish makes a relying party fetch the key set again and still fail.
func (is *Issuer) SignWithKeyID(k *rsa.PrivateKey, kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.signKey, is.signKID = k, kid
	if k == nil {
		is.signKID = ""
	}
}

// Rotate generates a new signing key under a new key id, publishes it next
// to the earlier keys (the current one last) and signs every later ID token
// with it. It returns the new key id. A relying party that cached the key
// set before the rotation sees an unknown kid and must fetch it again.
func (is *Issuer) Rotate(t testing.TB) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.rotations++
	kid := is.KeyID + "-r" + strconv.Itoa(is.rotations)
	is.curKey, is.curKID = key, kid
	is.published = append(is.published, publicJWK(key, kid))
	return kid
}

// RetireOldKeys stops publishing every key but the current one.
func (is *Issuer) RetireOldKeys() {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.published = is.published[len(is.published)-1:]
}

// CurrentKey returns the key and key id that sign the next ID tokens
// (ignoring SignWith).
func (is *Issuer) CurrentKey() (*rsa.PrivateKey, string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.curKey, is.curKID
}

// MutateUserInfo changes the claims of every userinfo answer from now on
// (nil restores them). The function sees sub and the profile claims.
func (is *Issuer) MutateUserInfo(f func(claims map[string]any)) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.uiMutate = f
}

// SetUserInfoHandler replaces the userinfo endpoint (nil restores it), for
// answers such as a redirect or an oversized body. Calls are still counted.
func (is *Issuer) SetUserInfoHandler(h http.Handler) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.uiHandler = h
}

// SetTokenDelay makes the token endpoint wait before answering.
func (is *Issuer) SetTokenDelay(d time.Duration) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.tokenDelay = d
}

// TokenCalls returns how many requests reached the token endpoint.
func (is *Issuer) TokenCalls() int64 { return is.tokenCalls.Load() }

// KeysCalls returns how many requests reached the key set.
func (is *Issuer) KeysCalls() int64 { return is.keysCalls.Load() }

// UserInfoCalls returns how many requests reached the userinfo endpoint.
func (is *Issuer) UserInfoCalls() int64 { return is.userInfoCalls.Load() }

// LastAuthorize returns the query of the last authorization request.
func (is *Issuer) LastAuthorize() url.Values {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.lastAuth
}

// Login plays the browser at the provider: it opens authorizeURL as user
// (by PreferredUsername; "" = the default user) and returns the callback
// URL the provider redirects to.
func (is *Issuer) Login(t testing.TB, authorizeURL, user string) *url.URL {
	t.Helper()
	u, err := url.Parse(authorizeURL)
	if err != nil {
		t.Fatalf("authorize URL %q: %v", authorizeURL, err)
	}
	if user != "" {
		q := u.Query()
		q.Set("login", user)
		u.RawQuery = q.Encode()
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("GET %s = HTTP %d, want 302", u, resp.StatusCode)
	}
	cb, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

func (is *Issuer) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                is.URL,
		"authorization_endpoint":                is.URL + "/authorize",
		"token_endpoint":                        is.URL + "/token",
		"userinfo_endpoint":                     is.URL + "/userinfo",
		"jwks_uri":                              is.URL + "/keys",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func publicJWK(k *rsa.PrivateKey, kid string) jose.JSONWebKey {
	return jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"}
}

func (is *Issuer) keys(w http.ResponseWriter, _ *http.Request) {
	is.keysCalls.Add(1)
	is.mu.Lock()
	keys := append([]jose.JSONWebKey(nil), is.published...)
	is.mu.Unlock()
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: keys})
}

// userinfo answers for an access token issued by the token endpoint.
func (is *Issuer) userinfo(w http.ResponseWriter, r *http.Request) {
	is.userInfoCalls.Add(1)
	is.mu.Lock()
	h, mutate := is.uiHandler, is.uiMutate
	is.mu.Unlock()
	if h != nil {
		h.ServeHTTP(w, r)
		return
	}
	at, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	is.mu.Lock()
	u, known := is.accessToks[at]
	is.mu.Unlock()
	if !ok || !known {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
		return
	}
	claims := map[string]any{
		"sub":                u.Subject,
		"preferred_username": u.PreferredUsername,
		"name":               u.Name,
		"email":              u.Email,
	}
	if u.EmailVerified != nil {
		claims["email_verified"] = *u.EmailVerified
	}
	if mutate != nil {
		mutate(claims)
	}
	writeJSON(w, http.StatusOK, claims)
}

func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	is.mu.Lock()
	is.lastAuth = q
	login := q.Get("login")
	if login == "" {
		login = is.defaultUser
	}
	u, ok := is.users[login]
	is.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if q.Get("response_type") != "code" || q.Get("client_id") != is.ClientID || redirect == "" || !ok {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	is.mu.Lock()
	is.grants[code] = grant{
		user: u, clientID: q.Get("client_id"), redirectURI: redirect, nonce: q.Get("nonce"),
		challenge: q.Get("code_challenge"), challengeMeth: q.Get("code_challenge_method"),
	}
	is.mu.Unlock()
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	// A test issuer accepts whatever redirect_uri the client under test
	// sends (the token endpoint then requires the same one): redirecting
	// there is what the authorization endpoint is for.
	http.Redirect(w, r, back.String(), http.StatusFound) //nolint:gosec // G710: redirect to the client's redirect_uri by design (test issuer)
}

func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	is.tokenCalls.Add(1)
	is.mu.Lock()
	delay := is.tokenDelay
	is.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != is.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(is.ClientSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", "Basic")
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	code := r.PostForm.Get("code")
	is.mu.Lock()
	g, ok := is.grants[code]
	delete(is.grants, code)
	mutate, signKey, signKID := is.mutate, is.signKey, is.signKID
	if signKey == nil {
		signKey, signKID = is.curKey, is.curKID
	}
	if signKID == "" {
		signKID = is.curKID
	}
	is.mu.Unlock()
	switch {
	case r.PostForm.Get("grant_type") != "authorization_code" || !ok:
		oauthError(w, "invalid_grant")
		return
	case g.redirectURI != r.PostForm.Get("redirect_uri"):
		oauthError(w, "invalid_grant")
		return
	case !pkceOK(g.challenge, g.challengeMeth, r.PostForm.Get("code_verifier")):
		oauthError(w, "invalid_grant")
		return
	}
	now := time.Now()
	claims := map[string]any{
		"iss":                is.URL,
		"sub":                g.user.Subject,
		"aud":                is.ClientID,
		"exp":                now.Add(5 * time.Minute).Unix(),
		"iat":                now.Unix(),
		"preferred_username": g.user.PreferredUsername,
		"name":               g.user.Name,
		"email":              g.user.Email,
	}
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	if g.user.EmailVerified != nil {
		claims["email_verified"] = *g.user.EmailVerified
	}
	if mutate != nil {
		mutate(claims)
	}
	idToken, err := Sign(signKey, signKID, claims)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	accessToken := "at-" + rand.Text()
	is.mu.Lock()
	is.accessToks[accessToken] = g.user
	is.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": accessToken,
		"token_type":   "Bearer",
		"expires_in":   300,
		"id_token":     idToken,
	})
}

// Sign returns a compact RS256 JWS of claims under key id kid.
func Sign(key *rsa.PrivateKey, kid string, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), kid))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// pkceOK checks RFC 7636: without a challenge no verifier may be sent; with
// one, only S256 is accepted and the verifier must hash to it.
func pkceOK(challenge, method, verifier string) bool {
	if challenge == "" {
		return verifier == ""
	}
	if method != "S256" || verifier == "" {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

func oauthError(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Callback is the path and query of a callback URL, ready to send to the
// kernel under test.
func Callback(u *url.URL) string {
	return u.EscapedPath() + "?" + u.RawQuery
}
