// Package enterprisechat is the enterprise_chat identity provider: a
// self-built app of the enterprise-chat vendor (WeCom), spoken to over plain
// HTTP as described in vendor-protocols.md §1.
//
// # Settings (section Service:ExternalAuth:EnterpriseChat, keys case-insensitive)
//
//   - CorpId (required): the corp id, sent as appid.
//   - AgentId (required): the app's numeric agent id.
//   - CorpSecret (required): the app's secret. Never logged.
//   - ApiBase (optional, default https://qyapi.weixin.qq.com): the API host
//     (gettoken, auth/getuserinfo, user/get).
//   - OAuthBase (optional, default https://open.weixin.qq.com): the host of
//     the in-client web authorization page.
//   - LoginBase (optional, default https://login.work.weixin.qq.com): the
//     host of the QR / web login page.
//   - Lang (optional, zh or en): language of the QR login page.
//   - FetchProfile (optional, default true): read the member's name with
//     user/get for the display name (best effort; a failure never fails the
//     login).
//
// # Flow
//
// A User-Agent containing "wxwork" (any case; the vendor's client, mobile and
// desktop) gets in-client web authorization (scope snsapi_base, parameters
// in the documented order, #wechat_redirect); any other gets the QR login
// page (login_type=CorpApp). Both callbacks carry code; the code is exchanged
// for a userid through /cgi-bin/auth/getuserinfo with the corp access token.
// The token is app-level: cached for its lifetime minus a margin, fetched by
// one caller while concurrent callers wait (single-flight), and on errcode
// 40014 or 42001 dropped, fetched again and the call retried exactly once.
// An answer without userid (openid only) is a non-member and is refused
// (kind Denied).
//
// Identity: Subject = userid, AccountHint = userid, DisplayName = name.
package enterprisechat

import (
	"context"
	"errors"
	"fmt"
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
const Code = "enterprise_chat"

// Default vendor hosts.
const (
	DefaultAPIBase   = "https://qyapi.weixin.qq.com"
	DefaultOAuthBase = "https://open.weixin.qq.com"
	DefaultLoginBase = "https://login.work.weixin.qq.com"
)

// clientUAToken in a User-Agent marks the vendor's client.
const clientUAToken = "wxwork"

// Vendor error codes handled specially.
const (
	errInvalidToken = 40014
	errExpiredToken = 42001
	errInvalidCode  = 40029
)

// configErrors are gettoken / API errcodes that mean the settings (or the
// vendor-side app configuration) are wrong.
var configErrors = map[int]string{
	40001: "invalid secret",
	40013: "invalid corpid",
	40091: "secret is invalid",
	41002: "corpid missing",
	41004: "secret missing",
	40056: "invalid agentid",
	60020: "the server's IP is not a trusted IP of the app",
	50001: "the redirect URI's domain is not a trusted domain of the app",
}

// Provider is the enterprise_chat provider. It is safe for concurrent use.
type Provider struct {
	log     hclog.Logger
	timeout time.Duration
	now     func() time.Time
	cur     atomic.Pointer[instance]
}

var _ pluginsdk.Provider = (*Provider)(nil)

type config struct {
	corpID, agentID, secret       string
	apiBase, oauthBase, loginBase string
	lang                          string
	fetchProfile                  bool
}

// instance is one configuration; Configure replaces it as a whole but keeps
// the token cache when the app (API host, corp id, secret) is unchanged.
type instance struct {
	cfg    config
	client *http.Client
	tokens *tokenCache
}

// New returns an unconfigured provider; log may be nil.
func New(log hclog.Logger) *Provider {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Provider{log: log, timeout: vendorhttp.DefaultTimeout, now: time.Now}
}

// Describe reports the provider.
func (p *Provider) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{
		Code:            Code,
		DisplayName:     "Enterprise Chat",
		Icon:            "ant-design:wechat-work-outlined",
		Brand:           "wecom",
		ProtocolVersion: pluginsdk.ProtocolVersion,
	}, nil
}

// Configure applies the settings (see the package doc). Invalid settings
// return a *pluginsdk.ProviderError of kind Misconfigured and keep the
// previous configuration.
func (p *Provider) Configure(_ context.Context, s pluginsdk.Settings) error {
	var cfg config
	cfg.corpID = vendorhttp.First(s, "CorpId")
	cfg.agentID = vendorhttp.First(s, "AgentId")
	cfg.secret = vendorhttp.First(s, "CorpSecret")
	var missing []string
	for _, m := range []struct{ key, v string }{{"CorpId", cfg.corpID}, {"AgentId", cfg.agentID}, {"CorpSecret", cfg.secret}} {
		if m.v == "" {
			missing = append(missing, m.key)
		}
	}
	if len(missing) > 0 {
		return vendorhttp.Misconfigured(Code, "%s required", strings.Join(missing, ", "))
	}
	if _, err := strconv.ParseUint(cfg.agentID, 10, 63); err != nil {
		return vendorhttp.Misconfigured(Code, "AgentId %q is not a number", vendorhttp.Clean(cfg.agentID, 32))
	}
	if strings.ContainsAny(cfg.corpID, " \t\r\n&#?/") {
		return vendorhttp.Misconfigured(Code, "CorpId contains invalid characters")
	}
	var err error
	if cfg.apiBase, err = vendorhttp.Base(s, "ApiBase", DefaultAPIBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	if cfg.oauthBase, err = vendorhttp.Base(s, "OAuthBase", DefaultOAuthBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	if cfg.loginBase, err = vendorhttp.Base(s, "LoginBase", DefaultLoginBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	cfg.lang, _ = vendorhttp.Setting(s, "Lang")
	if cfg.lang != "" && cfg.lang != "zh" && cfg.lang != "en" {
		return vendorhttp.Misconfigured(Code, "Lang %q must be zh or en", vendorhttp.Clean(cfg.lang, 16))
	}
	if cfg.fetchProfile, err = vendorhttp.Bool(s, "FetchProfile", true); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}

	in := &instance{cfg: cfg}
	if old := p.cur.Load(); old != nil {
		in.client = old.client
		if old.cfg.apiBase == cfg.apiBase && old.cfg.corpID == cfg.corpID && old.cfg.secret == cfg.secret {
			in.tokens = old.tokens
		}
	}
	if in.client == nil {
		in.client = vendorhttp.NewClient(p.timeout)
	}
	if in.tokens == nil {
		in.tokens = &tokenCache{now: p.now, timeout: p.timeout}
		in.tokens.fetch = func(ctx context.Context) (string, time.Duration, error) {
			return p.fetchToken(ctx, in.client, cfg)
		}
	}
	p.cur.Store(in)
	p.log.Debug("configured", "corp_id", cfg.corpID, "agent_id", cfg.agentID, "api_base", cfg.apiBase)
	return nil
}

// AuthorizeURL builds the in-client authorization URL for the vendor's
// client (User-Agent containing wxwork) and the QR login URL otherwise.
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
	esc := url.QueryEscape
	var u string
	if InClient(req.UserAgent) {
		// Documented order; built by hand (url.Values sorts keys).
		u = c.oauthBase + "/connect/oauth2/authorize?appid=" + esc(c.corpID) +
			"&redirect_uri=" + esc(req.RedirectURI) +
			"&response_type=code&scope=snsapi_base" +
			"&state=" + esc(req.State) +
			"&agentid=" + esc(c.agentID) +
			"#wechat_redirect"
	} else {
		u = c.loginBase + "/wwlogin/sso/login?login_type=CorpApp&appid=" + esc(c.corpID) +
			"&agentid=" + esc(c.agentID) +
			"&redirect_uri=" + esc(req.RedirectURI) +
			"&state=" + esc(req.State)
		if c.lang != "" {
			u += "&lang=" + c.lang
		}
	}
	return pluginsdk.AuthorizeResponse{URL: u}, nil
}

// InClient reports whether userAgent is the vendor's client (contains
// "wxwork", any case).
func InClient(userAgent string) bool {
	return strings.Contains(strings.ToLower(userAgent), clientUAToken)
}

// Exchange turns the callback's code into the member's userid.
func (p *Provider) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	in := p.cur.Load()
	if in == nil {
		return pluginsdk.Fail(pluginsdk.Misconfigured, "not configured"), nil
	}
	id, err := p.exchange(ctx, in, req.Query)
	return vendorhttp.Finish(Code, id, err)
}

func (p *Provider) exchange(ctx context.Context, in *instance, q map[string]string) (pluginsdk.Identity, error) {
	code := q["code"]
	if code == "" {
		if e := q["error"]; e != "" {
			return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Denied, "the vendor answered error %q", vendorhttp.Clean(e, 64))
		}
		// The vendor redirects with the state only when the user declines.
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Denied, "the callback carries no code (authorization declined)")
	}
	if !vendorhttp.ValidCode(code, 512) {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.InvalidCallback, "the callback's code is malformed")
	}

	// An ended context never reaches the vendor (a code is single-use).
	if err := ctx.Err(); err != nil {
		return pluginsdk.Identity{}, err
	}
	var ui struct {
		UserID string `json:"userid"` // also matches the legacy UserId
		OpenID string `json:"openid"`
	}
	st, err := in.call(ctx, p.log, "/cgi-bin/auth/getuserinfo", url.Values{"code": {code}}, &ui, code)
	if err != nil {
		return pluginsdk.Identity{}, err
	}
	switch st.ErrCode {
	case 0:
	case errInvalidCode:
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "getuserinfo: errcode 40029: the code is invalid, used or expired")
	case errInvalidToken, errExpiredToken:
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "getuserinfo: errcode %d: the access token was refused again after a refresh", st.ErrCode)
	default:
		return pluginsdk.Identity{}, apiFailure("getuserinfo", st, in.cfg.secret, code)
	}
	if ui.UserID == "" {
		if ui.OpenID != "" {
			return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Denied, "the user is not a member of the corp (no userid)")
		}
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "getuserinfo: the answer carries no userid")
	}
	if !vendorhttp.ValidSubject(ui.UserID) {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "getuserinfo: the userid is malformed")
	}
	id := pluginsdk.Identity{Subject: ui.UserID, AccountHint: ui.UserID}
	if in.cfg.fetchProfile {
		id.DisplayName = p.memberName(ctx, in, ui.UserID)
	}
	return id, nil
}

// memberName reads the member's name; any failure yields "".
func (p *Provider) memberName(ctx context.Context, in *instance, userID string) string {
	var m struct {
		Name string `json:"name"`
	}
	st, err := in.call(ctx, p.log, "/cgi-bin/user/get", url.Values{"userid": {userID}}, &m)
	switch {
	case err != nil:
		p.log.Debug("user/get failed; no display name", "error", errText(err))
		return ""
	case st.ErrCode != 0:
		p.log.Debug("user/get refused; no display name", "errcode", st.ErrCode)
		return ""
	}
	name := strings.TrimSpace(m.Name)
	if !vendorhttp.ValidSubject(name) {
		return ""
	}
	return name
}

// status is the errcode/errmsg pair of every API answer.
type status struct {
	ErrCode int    `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
}

// call GETs an API path with the corp access token and decodes the answer
// into out. On 40014/42001 the token is dropped, fetched again and the call
// retried once; the returned status is the final one. secrets are scrubbed
// from any message.
func (in *instance) call(ctx context.Context, log hclog.Logger, path string, q url.Values, out any, secrets ...string) (status, error) {
	for attempt := 0; ; attempt++ {
		tok, err := in.tokens.get(ctx)
		if err != nil {
			return status{}, err
		}
		q.Set("access_token", tok)
		resp, err := vendorhttp.Get(ctx, in.client, in.cfg.apiBase, path, q, nil)
		if err != nil {
			return status{}, wrapCall(path, err)
		}
		if !resp.OK() {
			return status{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor answered %s", path, resp.Describe())
		}
		var st status
		if err := vendorhttp.DecodeJSON(resp.Body, &st); err != nil {
			return status{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", path, err)
		}
		if (st.ErrCode == errInvalidToken || st.ErrCode == errExpiredToken) && attempt == 0 {
			log.Debug("access token refused; refreshing once", "path", path, "errcode", st.ErrCode)
			in.tokens.invalidate(tok)
			continue
		}
		if st.ErrCode == 0 {
			if err := vendorhttp.DecodeJSON(resp.Body, out); err != nil {
				return status{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", path, err)
			}
		}
		st.ErrMsg = vendorhttp.Clean(st.ErrMsg, 200, append(secrets, tok, in.cfg.secret)...)
		return st, nil
	}
}

// fetchToken calls gettoken.
func (p *Provider) fetchToken(ctx context.Context, client *http.Client, cfg config) (string, time.Duration, error) {
	const path = "/cgi-bin/gettoken"
	resp, err := vendorhttp.Get(ctx, client, cfg.apiBase, path, url.Values{"corpid": {cfg.corpID}, "corpsecret": {cfg.secret}}, nil)
	if err != nil {
		return "", 0, wrapCall(path, err)
	}
	if !resp.OK() {
		return "", 0, vendorhttp.Fail(pluginsdk.ExchangeFailed, "gettoken: the vendor answered %s", resp.Describe())
	}
	var t struct {
		status
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := vendorhttp.DecodeJSON(resp.Body, &t); err != nil {
		return "", 0, vendorhttp.Fail(pluginsdk.ExchangeFailed, "gettoken: %v", err)
	}
	if t.ErrCode != 0 {
		t.ErrMsg = vendorhttp.Clean(t.ErrMsg, 200, cfg.secret)
		p.log.Warn("gettoken refused", "errcode", t.ErrCode, "errmsg", t.ErrMsg)
		return "", 0, apiFailure("gettoken", t.status)
	}
	if t.AccessToken == "" || len(t.AccessToken) > 2048 {
		return "", 0, vendorhttp.Fail(pluginsdk.ExchangeFailed, "gettoken: the answer carries no usable access_token")
	}
	p.log.Debug("corp access token fetched", "expires_in", t.ExpiresIn)
	return t.AccessToken, tokenTTL(t.ExpiresIn), nil
}

// apiFailure maps a non-zero errcode: configuration errcodes are
// Misconfigured, the rest ExchangeFailed.
func apiFailure(call string, st status, secrets ...string) error {
	msg := vendorhttp.Clean(st.ErrMsg, 200, secrets...)
	if what, ok := configErrors[st.ErrCode]; ok {
		return vendorhttp.Fail(pluginsdk.Misconfigured, "%s: errcode %d (%s): %s", call, st.ErrCode, what, msg)
	}
	return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: errcode %d: %s", call, st.ErrCode, msg)
}

func wrapCall(path string, err error) error {
	if errors.Is(err, vendorhttp.ErrBodyTooLarge) {
		return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor's answer exceeds %d bytes", path, vendorhttp.MaxBodyBytes)
	}
	return err
}

func errText(err error) string {
	var pe *pluginsdk.ProviderError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}
