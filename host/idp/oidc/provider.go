// Package oidc is the kernel's built-in OpenID Connect provider: one
// instance per entry of Service:ExternalAuth:Oidc, each under its own code,
// implementing pluginsdk.Provider in process.
//
// Discovery happens on first use (bounded by the timeout, retried after a
// failure), so an unreachable provider never blocks startup. The
// authorization request carries the kernel's state, nonce and, when UsePkce
// is on, an S256 code challenge. At the callback the code is exchanged with
// the verifier and the ID token is verified by go-oidc (signature through
// the provider's key set, exact issuer, audience containing the client id,
// expiry). go-oidc leaves the rest to its caller, so this package then
// checks: the nonce equals the one sent, iat is present and not in the
// future beyond the clock skew, sub is present, azp equals the client id
// when present and is present when there are several audiences, extra
// audiences are explicitly trusted, and at_hash matches when present.
//
// UserInfo: when the discovery document names a userinfo endpoint and the
// verified ID token lacks name or email, the endpoint is called with the
// access token (only after every ID-token check passed; same client: per-call
// timeout, no redirects, body capped at MaxResponseBytes). Its sub must equal
// the ID token's sub (OIDC Core §5.3.2), otherwise the login is refused; a
// failed call refuses the login too (fail closed: a half-read identity is
// never used). Its claims only fill what the ID token left empty (name,
// preferred_username, email with email_verified, phone_number with
// phone_number_verified); the subject always comes from the ID token.
//
// Account hint: OIDC Core §5.7 says preferred_username is neither unique
// nor stable, so it is not the account hint by default. The operator names
// the claim per instance (AccountClaim): without one, the identity carries
// no account hint (linkByAccount cannot match and provisioning names new
// accounts {code}_{random}); with "email" or "phone_number" the value
// counts only when email_verified or phone_number_verified is true (the
// boolean or the string "true"). The claim is read from the ID token, or,
// when the ID token lacks it, from the userinfo answer (same sub).
//
// Issuer: a Provider reports the issuer its ID tokens are verified against
// (Issuer, the configured Authority). pluginsdk.Identity has no issuer, so
// the host reads it through this optional method, stores it with a new
// binding and refuses a login whose provider now reports another issuer.
package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/pluginsdk"
)

// Defaults of a Config.
const (
	DefaultScopes    = "openid profile email"
	DefaultClockSkew = time.Minute
	// discoveryRetry is how long a failed discovery is remembered before
	// the next request tries again (keeps a dead provider from being
	// hammered by every login attempt).
	discoveryRetry = 5 * time.Second
	maxSubjectLen  = 255
)

// Config is one OIDC instance.
type Config struct {
	Code        string
	DisplayName string
	// Icon (an Iconify name) and Brand (a brand key) are optional; the
	// external-login service drops invalid ones with a warning.
	Icon  string
	Brand string
	// Authority is the issuer URL; the discovery document's issuer and the
	// ID token's iss must equal it exactly.
	Authority    string
	ClientID     string
	ClientSecret string
	// Scopes requested (default openid profile email; openid is always
	// added).
	Scopes []string
	// UsePKCE sends an S256 code challenge and the verifier.
	UsePKCE bool
	// AccountClaim names the claim whose value is the identity's account
	// hint (pluginsdk.Identity.AccountHint, used by linkByAccount and to
	// name provisioned accounts). Empty (the default): no account hint.
	// "email" and "phone_number" count only when verified. A string value is
	// used as is, a number as its decimal text; other values give no hint.
	AccountClaim string
	// TrustedAudiences are audiences accepted in an ID token next to the
	// client id (default none: a token for several audiences is refused
	// unless every other audience is listed here and azp is the client id).
	TrustedAudiences []string
	// HTTPClient is used for discovery, the key set and the token call
	// (default NewHTTPClient(Timeout)).
	HTTPClient *http.Client
	// Timeout bounds discovery and the token call (default 10 s).
	Timeout time.Duration
	// ClockSkew is how far in the future an ID token's iat may be
	// (default 1 min).
	ClockSkew time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Provider is one OIDC instance. It is safe for concurrent use.
type Provider struct {
	code string
	cur  atomic.Pointer[instance]
}

var _ pluginsdk.Provider = (*Provider)(nil)

// instance is one configuration and its discovered endpoints; Configure
// replaces it as a whole.
type instance struct {
	cfg    Config
	client *http.Client

	mu       sync.Mutex
	disc     *discovered
	failErr  error
	failedAt time.Time
}

type discovered struct {
	issuer   string
	endpoint oauth2.Endpoint
	verifier *gooidc.IDTokenVerifier
	// op is the discovered provider, used for the userinfo call; userInfo
	// tells whether it names a usable userinfo endpoint.
	op       *gooidc.Provider
	userInfo bool
}

// New returns a provider for cfg. It does not contact the provider.
func New(cfg Config) (*Provider, error) {
	in, err := newInstance(cfg)
	if err != nil {
		return nil, err
	}
	p := &Provider{code: in.cfg.Code}
	p.cur.Store(in)
	return p, nil
}

func newInstance(cfg Config) (*instance, error) {
	switch {
	case strings.TrimSpace(cfg.Code) == "":
		return nil, errors.New("oidc: Code is required")
	case !isHTTPURL(cfg.Authority):
		return nil, fmt.Errorf("oidc %s: Authority %q must be an absolute http or https URL", cfg.Code, cfg.Authority)
	case strings.TrimSpace(cfg.ClientID) == "":
		return nil, fmt.Errorf("oidc %s: ClientId is required", cfg.Code)
	}
	if cfg.DisplayName == "" {
		cfg.DisplayName = "SSO"
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = strings.Fields(DefaultScopes)
	}
	if !slices.Contains(cfg.Scopes, gooidc.ScopeOpenID) {
		cfg.Scopes = append([]string{gooidc.ScopeOpenID}, cfg.Scopes...)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	client := cfg.HTTPClient
	if client == nil {
		client = NewHTTPClient(cfg.Timeout)
	}
	return &instance{cfg: cfg, client: client}, nil
}

// Issuer reports the issuer the provider's ID tokens must carry (the
// configured Authority; discovery refuses a document naming another). The
// host stores it with each new binding and refuses a login through a
// binding made under another issuer.
func (p *Provider) Issuer() string {
	return p.cur.Load().cfg.Authority
}

// Describe reports the instance's code, display name, icon and brand.
func (p *Provider) Describe(context.Context) (pluginsdk.Descriptor, error) {
	c := p.cur.Load().cfg
	return pluginsdk.Descriptor{Code: c.Code, DisplayName: c.DisplayName, Icon: c.Icon, Brand: c.Brand, ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}

// Configure replaces settings: DisplayName, Icon, Brand, Authority, ClientId,
// ClientSecret, Scopes (space or comma separated), UsePkce, TrustedAudiences,
// AccountClaim (keys case-insensitive; missing keys keep their value). The code cannot
// change. Discovery is redone on next use.
func (p *Provider) Configure(_ context.Context, s pluginsdk.Settings) error {
	cfg := p.cur.Load().cfg
	for k, v := range s {
		switch strings.ToLower(k) {
		case "code":
			if v != "" && v != p.code {
				return fmt.Errorf("oidc %s: the code cannot be changed to %q", p.code, v)
			}
		case "displayname":
			cfg.DisplayName = v
		case "icon":
			cfg.Icon = v
		case "brand":
			cfg.Brand = v
		case "authority":
			cfg.Authority = v
		case "clientid":
			cfg.ClientID = v
		case "clientsecret":
			cfg.ClientSecret = v
		case "scopes":
			cfg.Scopes = splitList(v)
		case "usepkce":
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true", "1":
				cfg.UsePKCE = true
			case "false", "0":
				cfg.UsePKCE = false
			default:
				return fmt.Errorf("oidc %s: UsePkce %q is not a boolean", p.code, v)
			}
		case "trustedaudiences":
			cfg.TrustedAudiences = splitList(v)
		case "accountclaim":
			cfg.AccountClaim = strings.TrimSpace(v)
		}
	}
	if cfg.HTTPClient == nil {
		// Keep the instance's default client rather than building another.
		cfg.HTTPClient = p.cur.Load().client
	}
	in, err := newInstance(cfg)
	if err != nil {
		return err
	}
	p.cur.Store(in)
	return nil
}

func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// discover fetches the discovery document once; a failure is remembered for
// discoveryRetry.
func (in *instance) discover(ctx context.Context) (*discovered, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.disc != nil {
		return in.disc, nil
	}
	if in.failErr != nil && in.cfg.Now().Sub(in.failedAt) < discoveryRetry {
		return nil, in.failErr
	}
	// A caller that gives up must not poison discovery for the others.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.cfg.Timeout)
	defer cancel()
	d, err := in.fetch(gooidc.ClientContext(dctx, in.client))
	if err != nil {
		in.failErr = fmt.Errorf("oidc %s: discovery at %s: %w", in.cfg.Code, in.cfg.Authority, err)
		in.failedAt = in.cfg.Now()
		return nil, in.failErr
	}
	in.disc, in.failErr = d, nil
	return d, nil
}

func (in *instance) fetch(ctx context.Context) (*discovered, error) {
	op, err := gooidc.NewProvider(ctx, in.cfg.Authority)
	if err != nil {
		return nil, err
	}
	var meta struct {
		TokenAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := op.Claims(&meta); err != nil {
		return nil, err
	}
	ep := op.Endpoint()
	if !isHTTPURL(ep.AuthURL) || !isHTTPURL(ep.TokenURL) {
		return nil, errors.New("the discovery document lacks an absolute authorization or token endpoint")
	}
	// Never auto-detect: detection retries the token call, and a code is
	// single-use.
	ep.AuthStyle = authStyle(meta.TokenAuthMethods, in.cfg.ClientSecret)
	// The key set is fetched with in.client (NewProvider keeps the client
	// of its context), bounded by the client's timeout.
	v := op.Verifier(&gooidc.Config{ClientID: in.cfg.ClientID, Now: in.cfg.Now})
	return &discovered{issuer: in.cfg.Authority, endpoint: ep, verifier: v, op: op, userInfo: isHTTPURL(op.UserInfoEndpoint())}, nil
}

// authStyle picks client authentication at the token endpoint:
// client_secret_basic (the OIDC default) unless only client_secret_post is
// offered; a public client (no secret) sends its id in the form.
func authStyle(methods []string, secret string) oauth2.AuthStyle {
	if secret == "" {
		return oauth2.AuthStyleInParams
	}
	if len(methods) > 0 && !slices.Contains(methods, "client_secret_basic") && slices.Contains(methods, "client_secret_post") {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

func (in *instance) oauth2(d *discovered, redirectURI string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     in.cfg.ClientID,
		ClientSecret: in.cfg.ClientSecret,
		Endpoint:     d.endpoint,
		RedirectURL:  redirectURI,
		Scopes:       in.cfg.Scopes,
	}
}

// AuthorizeURL builds the authorization URL with state, nonce and (UsePkce)
// the S256 challenge.
func (p *Provider) AuthorizeURL(ctx context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	in := p.cur.Load()
	switch {
	case req.State == "" || req.RedirectURI == "":
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("oidc %s: state and redirect URI are required", p.code)
	case req.Nonce == "":
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("oidc %s: a nonce is required", p.code)
	case in.cfg.UsePKCE && (req.CodeChallenge == "" || req.CodeChallengeMethod != pluginsdk.CodeChallengeS256):
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("oidc %s: an S256 code challenge is required", p.code)
	}
	d, err := in.discover(ctx)
	if err != nil {
		return pluginsdk.AuthorizeResponse{}, err
	}
	opts := []oauth2.AuthCodeOption{gooidc.Nonce(req.Nonce)}
	if in.cfg.UsePKCE {
		opts = append(opts,
			oauth2.SetAuthURLParam("code_challenge", req.CodeChallenge),
			oauth2.SetAuthURLParam("code_challenge_method", pluginsdk.CodeChallengeS256))
	}
	return pluginsdk.AuthorizeResponse{URL: in.oauth2(d, req.RedirectURI).AuthCodeURL(req.State, opts...)}, nil
}

// claims are the ID-token claims read beyond go-oidc's IDToken.
type claims struct {
	Azp                 string          `json:"azp"`
	PreferredUsername   string          `json:"preferred_username"`
	Name                string          `json:"name"`
	Email               string          `json:"email"`
	EmailVerified       json.RawMessage `json:"email_verified"`
	PhoneNumber         string          `json:"phone_number"`
	PhoneNumberVerified json.RawMessage `json:"phone_number_verified"`
	// Account is the raw value of a configured AccountClaim other than
	// preferred_username, email and phone_number (readAccount).
	Account json.RawMessage `json:"-"`
}

// Exchange redeems the code and validates the ID token.
func (p *Provider) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	in := p.cur.Load()
	q := req.Query
	if e := q["error"]; e != "" {
		kind := pluginsdk.InvalidCallback
		if e == "access_denied" {
			kind = pluginsdk.Denied
		}
		return pluginsdk.Fail(kind, "the provider answered error %q", textclip.BytesMarked(e, 64, "…")), nil
	}
	code := q["code"]
	if code == "" {
		return pluginsdk.Fail(pluginsdk.InvalidCallback, "the callback carries no code"), nil
	}
	if req.Nonce == "" || (in.cfg.UsePKCE && req.CodeVerifier == "") {
		return pluginsdk.Fail(pluginsdk.Misconfigured, "no nonce or PKCE verifier was kept with the state"), nil
	}
	d, err := in.discover(ctx)
	if err != nil {
		return pluginsdk.ExchangeResponse{}, err
	}
	// RFC 9207: an iss parameter, when sent, must name this provider.
	if iss, ok := q["iss"]; ok && iss != d.issuer {
		return pluginsdk.Fail(pluginsdk.InvalidCallback, "the callback's iss %q is not the issuer %q", textclip.BytesMarked(iss, 128, "…"), d.issuer), nil
	}
	xctx, cancel := context.WithTimeout(ctx, in.cfg.Timeout)
	defer cancel()
	xctx = gooidc.ClientContext(xctx, in.client)
	var opts []oauth2.AuthCodeOption
	if in.cfg.UsePKCE {
		opts = append(opts, oauth2.VerifierOption(req.CodeVerifier))
	}
	tok, err := in.oauth2(d, req.RedirectURI).Exchange(xctx, code, opts...)
	if err != nil {
		var re *oauth2.RetrieveError
		var ue *url.Error
		switch {
		case errors.As(err, &re):
			return pluginsdk.Fail(pluginsdk.ExchangeFailed, "the token endpoint answered HTTP %d %s", re.Response.StatusCode, textclip.BytesMarked(re.ErrorCode, 64, "…")), nil
		case errors.As(err, &ue):
			return pluginsdk.ExchangeResponse{}, fmt.Errorf("oidc %s: token endpoint: %w", p.code, err)
		default:
			return pluginsdk.Fail(pluginsdk.ExchangeFailed, "unusable token response: %v", err), nil
		}
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "the token response carries no id_token"), nil
	}
	idt, err := d.verifier.Verify(xctx, raw)
	if err != nil {
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "id_token rejected: %v", err), nil
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "id_token claims unreadable: %v", err), nil
	}
	if err := c.readAccount(in.cfg.AccountClaim, idt.Claims); err != nil {
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "id_token claims unreadable: %v", err), nil
	}
	if msg := in.check(idt, c, req.Nonce, tok.AccessToken); msg != "" {
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "id_token rejected: %s", msg), nil
	}
	// Only now, with the ID token fully checked, may the access token be
	// used.
	if d.userInfo && (c.Name == "" || c.Email == "" || c.accountMissing(in.cfg.AccountClaim)) {
		if msg := fillFromUserInfo(xctx, d, tok, idt.Subject, &c, in.cfg.AccountClaim); msg != "" {
			return pluginsdk.Fail(pluginsdk.ExchangeFailed, "userinfo rejected: %s", msg), nil
		}
	}
	id := pluginsdk.Identity{
		Subject:     idt.Subject,
		AccountHint: c.accountHint(in.cfg.AccountClaim),
		DisplayName: c.Name,
	}
	if v, ok := boolClaim(c.EmailVerified); !ok || v {
		id.Email = c.Email
	}
	if v, ok := boolClaim(c.PhoneNumberVerified); !ok || v {
		id.Phone = c.PhoneNumber
	}
	return pluginsdk.Succeed(id), nil
}

// fillFromUserInfo calls the userinfo endpoint with the access token,
// requires its sub to equal the ID token's and fills the claims the ID
// token left empty. It returns why the answer is refused, or "".
func fillFromUserInfo(ctx context.Context, d *discovered, tok *oauth2.Token, sub string, c *claims, accountClaim string) string {
	if tok.AccessToken == "" {
		return "the token response carries no access token"
	}
	ui, err := d.op.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		// go-oidc quotes the answer's body in the error: keep it short.
		return "request failed: " + textclip.BytesMarked(err.Error(), 200, "…")
	}
	if ui.Subject != sub {
		return "sub does not match the id_token sub"
	}
	var u claims
	if err := ui.Claims(&u); err != nil {
		return "claims unreadable: " + textclip.BytesMarked(err.Error(), 200, "…")
	}
	if c.accountMissing(accountClaim) {
		if err := u.readAccount(accountClaim, ui.Claims); err != nil {
			return "claims unreadable: " + textclip.BytesMarked(err.Error(), 200, "…")
		}
		c.Account = u.Account
	}
	if c.Name == "" {
		c.Name = u.Name
	}
	if c.PreferredUsername == "" {
		c.PreferredUsername = u.PreferredUsername
	}
	if c.Email == "" {
		c.Email, c.EmailVerified = u.Email, u.EmailVerified
	}
	if c.PhoneNumber == "" {
		c.PhoneNumber, c.PhoneNumberVerified = u.PhoneNumber, u.PhoneNumberVerified
	}
	return ""
}

// check applies what go-oidc leaves to its caller; it returns why the
// token is refused, or "".
func (in *instance) check(idt *gooidc.IDToken, c claims, nonce, accessToken string) string {
	cfg := &in.cfg
	switch {
	case subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1:
		return "nonce does not match the one sent"
	case idt.IssuedAt.IsZero():
		return "iat is missing"
	case idt.IssuedAt.After(cfg.Now().Add(cfg.ClockSkew)):
		return "iat is in the future"
	case idt.Subject == "":
		return "sub is missing"
	case len(idt.Subject) > maxSubjectLen || strings.ContainsFunc(idt.Subject, unicode.IsControl):
		return "sub is malformed"
	case c.Azp != "" && c.Azp != cfg.ClientID:
		return "azp is not the client id"
	case len(idt.Audience) > 1 && c.Azp == "":
		return "several audiences without azp"
	}
	for _, a := range idt.Audience {
		if a != cfg.ClientID && !slices.Contains(cfg.TrustedAudiences, a) {
			return fmt.Sprintf("untrusted audience %q", textclip.BytesMarked(a, 64, "…"))
		}
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(accessToken); err != nil {
			return "at_hash does not match the access token"
		}
	}
	return ""
}

// readAccount keeps the raw value of the configured account claim when it
// is not one of the claims the struct already reads.
func (c *claims) readAccount(name string, decode func(any) error) error {
	if name == "" || wellKnownAccountClaim(name) {
		return nil
	}
	var all map[string]json.RawMessage
	if err := decode(&all); err != nil {
		return err
	}
	c.Account = all[name]
	return nil
}

func wellKnownAccountClaim(name string) bool {
	switch name {
	case "preferred_username", "email", "phone_number":
		return true
	}
	return false
}

// accountMissing reports whether an account claim is configured and the
// claims read so far lack it.
func (c *claims) accountMissing(name string) bool {
	switch name {
	case "":
		return false
	case "preferred_username":
		return c.PreferredUsername == ""
	case "email":
		return c.Email == ""
	case "phone_number":
		return c.PhoneNumber == ""
	}
	return len(c.Account) == 0 || string(c.Account) == "null"
}

// accountHint is the value of the configured account claim: "" when none
// is configured, the claim is absent or not a string or number, or it is
// email or phone_number and not verified (boolean true or "true").
func (c *claims) accountHint(name string) string {
	switch name {
	case "":
		return ""
	case "preferred_username":
		return c.PreferredUsername
	case "email":
		if v, ok := boolClaim(c.EmailVerified); ok && v {
			return c.Email
		}
		return ""
	case "phone_number":
		if v, ok := boolClaim(c.PhoneNumberVerified); ok && v {
			return c.PhoneNumber
		}
		return ""
	}
	var s string
	if json.Unmarshal(c.Account, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(c.Account, &n) == nil {
		return n.String()
	}
	return ""
}

// boolClaim reads a boolean claim sent as true/false or "true"/"false";
// ok is false when it is absent or unreadable.
func boolClaim(raw json.RawMessage) (v, ok bool) {
	if len(raw) == 0 {
		return false, false
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(s) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
