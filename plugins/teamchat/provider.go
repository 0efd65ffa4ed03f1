// Package teamchat is the team_chat identity provider: the team-chat
// vendor's (DingTalk) OAuth 2.0 unified login, spoken to over plain HTTP as
// described in vendor-protocols.md §2 (api v1.0; the legacy signed
// sns/getuserinfo_bycode flow is not implemented).
//
// # Settings (keys case-insensitive)
//
//   - ClientId (required; alias AppKey): the app's client id.
//   - ClientSecret (required; alias AppSecret): the app's secret. Never
//     logged.
//   - CorpId (optional): when set, the scope becomes "openid corpid" and
//     only logins whose token answer names this organization are accepted
//     (others are refused, kind Denied).
//   - LoginBase (optional, default https://login.dingtalk.com): host of the
//     authorization page.
//   - ApiBase (optional, default https://api.dingtalk.com): host of the
//     token and contact calls.
//
// # Flow
//
// One authorization URL serves the desktop QR page and the in-client
// consent page. The callback carries authCode (code is accepted as a
// fallback) or error. The code is redeemed with a JSON POST to
// /v1.0/oauth2/userAccessToken; the user token then reads
// /v1.0/contact/users/me (header x-acs-dingtalk-access-token). Errors are
// HTTP 4xx with a JSON code/message.
//
// Identity: Subject = unionId (stable across the organization's apps; openId
// is per app), DisplayName = nick, Phone = mobile when granted. AccountHint
// is left empty: nick is chosen freely by the user, so linking local
// accounts by it would let anyone claim any account name.
package teamchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/vendorhttp"
)

// Code is the provider code.
const Code = "team_chat"

// Default vendor hosts.
const (
	DefaultLoginBase = "https://login.dingtalk.com"
	DefaultAPIBase   = "https://api.dingtalk.com"
)

const (
	tokenPath = "/v1.0/oauth2/userAccessToken" //nolint:gosec // a URL path, not a credential
	mePath    = "/v1.0/contact/users/me"
)

// Provider is the team_chat provider. It is safe for concurrent use.
type Provider struct {
	log     hclog.Logger
	timeout time.Duration
	cur     atomic.Pointer[instance]
}

var _ pluginsdk.Provider = (*Provider)(nil)

type config struct {
	clientID, secret, corpID string
	loginBase, apiBase       string
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
		DisplayName:     "Team Chat",
		Icon:            "ant-design:dingtalk-outlined",
		Brand:           "dingtalk",
		ProtocolVersion: pluginsdk.ProtocolVersion,
	}, nil
}

// Configure applies the settings (see the package doc). Invalid settings
// return a *pluginsdk.ProviderError of kind Misconfigured and keep the
// previous configuration.
func (p *Provider) Configure(_ context.Context, s pluginsdk.Settings) error {
	var cfg config
	cfg.clientID = vendorhttp.First(s, "ClientId", "AppKey")
	cfg.secret = vendorhttp.First(s, "ClientSecret", "AppSecret")
	cfg.corpID = vendorhttp.First(s, "CorpId")
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
	if cfg.loginBase, err = vendorhttp.Base(s, "LoginBase", DefaultLoginBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	if cfg.apiBase, err = vendorhttp.Base(s, "ApiBase", DefaultAPIBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	in := &instance{cfg: cfg}
	if old := p.cur.Load(); old != nil {
		in.client = old.client
	} else {
		in.client = vendorhttp.NewClient(p.timeout)
	}
	p.cur.Store(in)
	p.log.Debug("configured", "client_id", cfg.clientID, "corp_id", cfg.corpID, "api_base", cfg.apiBase)
	return nil
}

func (c config) scope() string {
	if c.corpID != "" {
		return "openid corpid"
	}
	return "openid"
}

// AuthorizeURL builds the authorization URL (parameters in the documented
// order; the scope is space-separated, encoded as %20).
func (p *Provider) AuthorizeURL(_ context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	in := p.cur.Load()
	switch {
	case in == nil:
		return pluginsdk.AuthorizeResponse{}, vendorhttp.Misconfigured(Code, "not configured")
	case !vendorhttp.ValidState(req.State):
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("%s: the state must be 1-128 letters and digits", Code)
	case !vendorhttp.ValidRedirect(req.RedirectURI):
		return pluginsdk.AuthorizeResponse{}, fmt.Errorf("%s: the redirect URI must be an absolute http(s) URL", Code)
	}
	c := in.cfg
	u := c.loginBase + "/oauth2/auth?redirect_uri=" + url.QueryEscape(req.RedirectURI) +
		"&response_type=code&client_id=" + url.QueryEscape(c.clientID) +
		"&scope=" + url.PathEscape(c.scope()) +
		"&state=" + url.QueryEscape(req.State) +
		"&prompt=consent"
	return pluginsdk.AuthorizeResponse{URL: u}, nil
}

// Exchange redeems the callback's authCode and reads the user.
func (p *Provider) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	in := p.cur.Load()
	if in == nil {
		return pluginsdk.Fail(pluginsdk.Misconfigured, "not configured"), nil
	}
	id, err := p.exchange(ctx, in, req.Query)
	return vendorhttp.Finish(Code, id, err)
}

// apiError is the v1.0 error body.
type apiError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"requestid"`
}

func (p *Provider) exchange(ctx context.Context, in *instance, q map[string]string) (pluginsdk.Identity, error) {
	if e := q["error"]; e != "" {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Denied, "the vendor answered error %q", vendorhttp.Clean(e, 64))
	}
	code := q["authCode"]
	if code == "" {
		code = q["code"]
	}
	if code == "" {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.InvalidCallback, "the callback carries no authCode")
	}
	if !vendorhttp.ValidCode(code, 512) {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.InvalidCallback, "the callback's authCode is malformed")
	}
	// An ended context never reaches the vendor (a code is single-use).
	if err := ctx.Err(); err != nil {
		return pluginsdk.Identity{}, err
	}
	c := in.cfg

	body, _ := json.Marshal(map[string]string{
		"clientId": c.clientID, "clientSecret": c.secret, "code": code, "grantType": "authorization_code",
	})
	resp, err := vendorhttp.Post(ctx, in.client, c.apiBase, tokenPath, "application/json", body,
		http.Header{"Accept": {"application/json"}})
	if err != nil {
		return pluginsdk.Identity{}, wrapCall(tokenPath, err)
	}
	if !resp.OK() {
		return pluginsdk.Identity{}, p.apiFailure(tokenPath, resp, c.secret, code)
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
		ExpireIn    int64  `json:"expireIn"`
		CorpID      string `json:"corpId"`
	}
	if err := vendorhttp.DecodeJSON(resp.Body, &tok); err != nil {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", tokenPath, err)
	}
	if tok.AccessToken == "" || len(tok.AccessToken) > 4096 {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the answer carries no usable accessToken", tokenPath)
	}
	if c.corpID != "" && tok.CorpID != c.corpID {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Denied, "the user logged in to another organization than CorpId (%q)", vendorhttp.Clean(tok.CorpID, 64))
	}

	resp, err = vendorhttp.Get(ctx, in.client, c.apiBase, mePath, nil,
		http.Header{"x-acs-dingtalk-access-token": {tok.AccessToken}, "Accept": {"application/json"}})
	if err != nil {
		return pluginsdk.Identity{}, wrapCall(mePath, err)
	}
	if !resp.OK() {
		return pluginsdk.Identity{}, p.apiFailure(mePath, resp, c.secret, code, tok.AccessToken)
	}
	var me struct {
		Nick    string `json:"nick"`
		UnionID string `json:"unionId"`
		OpenID  string `json:"openId"`
		Mobile  string `json:"mobile"`
	}
	if err := vendorhttp.DecodeJSON(resp.Body, &me); err != nil {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", mePath, err)
	}
	if me.UnionID == "" {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the answer carries no unionId", mePath)
	}
	if !vendorhttp.ValidSubject(me.UnionID) {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the unionId is malformed", mePath)
	}
	id := pluginsdk.Identity{Subject: me.UnionID}
	if nick := strings.TrimSpace(me.Nick); vendorhttp.ValidSubject(nick) {
		id.DisplayName = nick
	}
	if m := strings.TrimSpace(me.Mobile); m != "" && len(m) <= 32 && !strings.ContainsFunc(m, func(r rune) bool { return r < '0' || r > '9' }) {
		id.Phone = m
	}
	return id, nil
}

// apiFailure maps a 4xx/5xx answer with the vendor's code/message body.
// A client that is refused is Misconfigured (invalid client, missing
// permission); everything else is ExchangeFailed.
func (p *Provider) apiFailure(path string, resp *vendorhttp.Response, secrets ...string) error {
	var e apiError
	if resp.Status < 300 || resp.Status >= 400 {
		_ = vendorhttp.DecodeJSON(resp.Body, &e)
	}
	code := vendorhttp.Clean(e.Code, 96, secrets...)
	msg := vendorhttp.Clean(e.Message, 160, secrets...)
	p.log.Debug("vendor refused", "path", path, "status", resp.Status, "code", code, "requestid", vendorhttp.Clean(e.RequestID, 64))
	if code == "" {
		return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor answered %s", path, resp.Describe())
	}
	kind := pluginsdk.ExchangeFailed
	lc := strings.ToLower(code)
	switch {
	case strings.HasPrefix(lc, "forbidden.accessdenied"),
		strings.Contains(lc, "clientid"), strings.Contains(lc, "secret"), strings.Contains(lc, "appkey"):
		kind = pluginsdk.Misconfigured
	}
	return vendorhttp.Fail(kind, "%s: the vendor answered %s %s: %s", path, resp.Describe(), code, msg)
}

func wrapCall(path string, err error) error {
	if errors.Is(err, vendorhttp.ErrBodyTooLarge) {
		return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor's answer exceeds %d bytes", path, vendorhttp.MaxBodyBytes)
	}
	return err
}
