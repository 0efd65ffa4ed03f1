// Package codehost is the code_host identity provider: an OAuth app of the
// code-hosting vendor (GitHub, or GitHub Enterprise Server), spoken to over
// plain HTTP as described in vendor-protocols.md §3.
//
// # Settings (keys case-insensitive)
//
//   - ClientId (required): the OAuth app's client id.
//   - ClientSecret (required): the OAuth app's client secret. Never logged.
//   - WebBase (optional, default https://github.com): host of the
//     authorization page and the token endpoint (GitHub Enterprise:
//     https://ghe.example.com).
//   - ApiBase (optional): REST API root. Default https://api.github.com, or
//     WebBase + /api/v3 when only WebBase is set (the GitHub Enterprise
//     layout).
//   - UsePkce (optional, default false): send the kernel's S256 challenge and
//     the verifier (github.com supports PKCE since 2025; older Enterprise
//     servers may not).
//
// # Flow
//
// The authorization URL asks for scope read:user only. The callback's code is
// redeemed at /login/oauth/access_token (form body, Accept:
// application/json; errors come back as HTTP 200 with an error field), then
// /user is read with the bearer token and a User-Agent.
//
// Identity: Subject = the numeric user id (a renamed login keeps its
// binding), AccountHint = login, DisplayName = name, else login. No email:
// read:user does not grant the email list, and the public profile email is
// not reported as verified.
package codehost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/vendorhttp"
)

// Code is the provider code.
const Code = "code_host"

// Default vendor hosts.
const (
	DefaultWebBase = "https://github.com"
	DefaultAPIBase = "https://api.github.com"
)

// Scope is the only scope requested.
const Scope = "read:user"

const (
	tokenPath = "/login/oauth/access_token" //nolint:gosec // a URL path, not a credential
	userPath  = "/user"
	userAgent = "adminkernel-provider-code_host"
)

// Provider is the code_host provider. It is safe for concurrent use.
type Provider struct {
	log     hclog.Logger
	timeout time.Duration
	cur     atomic.Pointer[instance]
}

var _ pluginsdk.Provider = (*Provider)(nil)

type config struct {
	clientID, secret string
	webBase, apiBase string
	usePKCE          bool
}

type instance struct {
	cfg    config
	client *http.Client
}

// New returns an unconfigured provider; log may be nil.
func New(log hclog.Logger) *Provider {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Provider{log: log, timeout: vendorhttp.DefaultTimeout}
}

// Describe reports the provider.
func (p *Provider) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{
		Code:            Code,
		DisplayName:     "Code Host",
		Icon:            "ant-design:github-outlined",
		Brand:           "github",
		ProtocolVersion: pluginsdk.ProtocolVersion,
	}, nil
}

// Configure applies the settings (see the package doc). Invalid settings
// return a *pluginsdk.ProviderError of kind Misconfigured and keep the
// previous configuration.
func (p *Provider) Configure(_ context.Context, s pluginsdk.Settings) error {
	var cfg config
	cfg.clientID = vendorhttp.First(s, "ClientId")
	cfg.secret = vendorhttp.First(s, "ClientSecret")
	switch {
	case cfg.clientID == "" && cfg.secret == "":
		return vendorhttp.Misconfigured(Code, "ClientId, ClientSecret required")
	case cfg.clientID == "":
		return vendorhttp.Misconfigured(Code, "ClientId required")
	case cfg.secret == "":
		return vendorhttp.Misconfigured(Code, "ClientSecret required")
	case strings.ContainsAny(cfg.clientID, " \t\r\n&#?/"):
		return vendorhttp.Misconfigured(Code, "ClientId contains invalid characters")
	}
	var err error
	if cfg.webBase, err = vendorhttp.Base(s, "WebBase", DefaultWebBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	defAPI := DefaultAPIBase
	if cfg.webBase != DefaultWebBase {
		defAPI = cfg.webBase + "/api/v3"
	}
	if cfg.apiBase, err = vendorhttp.Base(s, "ApiBase", defAPI); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	if cfg.usePKCE, err = vendorhttp.Bool(s, "UsePkce", false); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	in := &instance{cfg: cfg}
	if old := p.cur.Load(); old != nil {
		in.client = old.client
	} else {
		in.client = vendorhttp.NewClient(p.timeout)
	}
	p.cur.Store(in)
	p.log.Debug("configured", "client_id", cfg.clientID, "web_base", cfg.webBase, "api_base", cfg.apiBase, "pkce", cfg.usePKCE)
	return nil
}

// AuthorizeURL builds the authorization URL: client_id, redirect_uri,
// scope=read:user, state (and the S256 challenge with UsePkce).
func (p *Provider) AuthorizeURL(_ context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	in := p.cur.Load()
	switch {
	case in == nil:
		return pluginsdk.AuthorizeResponse{}, vendorhttp.Misconfigured(Code, "not configured")
	case !vendorhttp.ValidState(req.State):
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("%s: the state must be 1-128 letters and digits", Code)
	case !vendorhttp.ValidRedirect(req.RedirectURI):
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("%s: the redirect URI must be an absolute http(s) URL", Code)
	case in.cfg.usePKCE && (req.CodeChallenge == "" || req.CodeChallengeMethod != pluginsdk.CodeChallengeS256):
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("%s: UsePkce is on but no S256 code challenge was given", Code)
	}
	c := in.cfg
	u := c.webBase + "/login/oauth/authorize?client_id=" + url.QueryEscape(c.clientID) +
		"&redirect_uri=" + url.QueryEscape(req.RedirectURI) +
		"&scope=" + url.QueryEscape(Scope) +
		"&state=" + url.QueryEscape(req.State)
	if c.usePKCE {
		u += "&code_challenge=" + url.QueryEscape(req.CodeChallenge) + "&code_challenge_method=S256"
	}
	return pluginsdk.AuthorizeResponse{URL: u}, nil
}

// Exchange redeems the code and reads the user.
func (p *Provider) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	in := p.cur.Load()
	if in == nil {
		return pluginsdk.Fail(pluginsdk.Misconfigured, "not configured"), nil
	}
	id, err := p.exchange(ctx, in, req)
	return vendorhttp.Finish(Code, id, err)
}

// callbackErrors are the error parameters the vendor redirects with that
// point at the app's configuration rather than the user.
var callbackErrors = map[string]bool{"redirect_uri_mismatch": true, "application_suspended": true}

// tokenErrors are token-endpoint errors caused by the settings.
var tokenErrors = map[string]bool{"incorrect_client_credentials": true, "redirect_uri_mismatch": true}

func (p *Provider) exchange(ctx context.Context, in *instance, req pluginsdk.ExchangeRequest) (pluginsdk.Identity, error) {
	q := req.Query
	if e := q["error"]; e != "" {
		kind := pluginsdk.Denied
		if callbackErrors[e] {
			kind = pluginsdk.Misconfigured
		}
		return pluginsdk.Identity{}, vendorhttp.Fail(kind, "the vendor answered error %q", vendorhttp.Clean(e, 64))
	}
	code := q["code"]
	if code == "" {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.InvalidCallback, "the callback carries no code")
	}
	if !vendorhttp.ValidCode(code, 512) {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.InvalidCallback, "the callback's code is malformed")
	}
	c := in.cfg
	if c.usePKCE && req.CodeVerifier == "" {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Misconfigured, "UsePkce is on but no PKCE verifier was kept with the state")
	}

	// An ended context never reaches the vendor (a code is single-use).
	if err := ctx.Err(); err != nil {
		return pluginsdk.Identity{}, err
	}
	form := url.Values{"client_id": {c.clientID}, "client_secret": {c.secret}, "code": {code}}
	if req.RedirectURI != "" {
		form.Set("redirect_uri", req.RedirectURI)
	}
	if c.usePKCE {
		form.Set("code_verifier", req.CodeVerifier)
	}
	resp, err := vendorhttp.Post(ctx, in.client, c.webBase, tokenPath, "application/x-www-form-urlencoded",
		[]byte(form.Encode()), http.Header{"Accept": {"application/json"}, "User-Agent": {userAgent}})
	if err != nil {
		return pluginsdk.Identity{}, wrapCall(tokenPath, err)
	}
	if !resp.OK() {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor answered %s", tokenPath, resp.Describe())
	}
	tok, err := parseToken(resp)
	if err != nil {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", tokenPath, err)
	}
	if tok.Error != "" {
		kind := pluginsdk.ExchangeFailed
		if tokenErrors[tok.Error] {
			kind = pluginsdk.Misconfigured
		}
		return pluginsdk.Identity{}, vendorhttp.Fail(kind, "%s: error %s: %s", tokenPath,
			vendorhttp.Clean(tok.Error, 64, c.secret, code), vendorhttp.Clean(tok.ErrorDescription, 160, c.secret, code))
	}
	if tok.AccessToken == "" || len(tok.AccessToken) > 4096 {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the answer carries no usable access_token", tokenPath)
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: unexpected token_type %q", tokenPath, vendorhttp.Clean(tok.TokenType, 32))
	}

	resp, err = vendorhttp.Get(ctx, in.client, c.apiBase, userPath, nil, http.Header{
		"Authorization":        {"Bearer " + tok.AccessToken},
		"Accept":               {"application/vnd.github+json"},
		"X-GitHub-Api-Version": {"2022-11-28"},
		"User-Agent":           {userAgent},
	})
	if err != nil {
		return pluginsdk.Identity{}, wrapCall(userPath, err)
	}
	if !resp.OK() {
		var e struct {
			Message string `json:"message"`
		}
		if resp.Status < 300 || resp.Status >= 400 {
			_ = vendorhttp.DecodeJSON(resp.Body, &e)
		}
		msg := ""
		if e.Message != "" {
			msg = ": " + vendorhttp.Clean(e.Message, 160, c.secret, code, tok.AccessToken)
		}
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor answered %s%s", userPath, resp.Describe(), msg)
	}
	var u struct {
		Login string          `json:"login"`
		ID    json.RawMessage `json:"id"`
		Name  *string         `json:"name"`
	}
	if err := vendorhttp.DecodeJSON(resp.Body, &u); err != nil {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", userPath, err)
	}
	id, err := strconv.ParseInt(string(u.ID), 10, 64)
	if err != nil || id <= 0 {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the answer carries no numeric id", userPath)
	}
	ident := pluginsdk.Identity{Subject: strconv.FormatInt(id, 10)}
	if login := strings.TrimSpace(u.Login); vendorhttp.ValidSubject(login) {
		ident.AccountHint = login
		ident.DisplayName = login
	}
	if u.Name != nil {
		if name := strings.TrimSpace(*u.Name); vendorhttp.ValidSubject(name) {
			ident.DisplayName = name
		}
	}
	return ident, nil
}

type tokenAnswer struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	Scope            string `json:"scope"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// parseToken reads the token answer as JSON, or form-encoded when the
// server ignored Accept (the vendor's default format).
func parseToken(resp *vendorhttp.Response) (tokenAnswer, error) {
	var t tokenAnswer
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/x-www-form-urlencoded" {
		v, err := url.ParseQuery(strings.TrimSpace(string(resp.Body)))
		if err != nil {
			return t, errors.New("the answer is not valid form data")
		}
		t = tokenAnswer{AccessToken: v.Get("access_token"), TokenType: v.Get("token_type"), Scope: v.Get("scope"),
			Error: v.Get("error"), ErrorDescription: v.Get("error_description")}
		return t, nil
	}
	return t, vendorhttp.DecodeJSON(resp.Body, &t)
}

func wrapCall(path string, err error) error {
	if errors.Is(err, vendorhttp.ErrBodyTooLarge) {
		return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor's answer exceeds %d bytes", path, vendorhttp.MaxBodyBytes)
	}
	return err
}
