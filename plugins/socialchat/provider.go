// Package socialchat is the social_chat identity provider: QR login of an
// open-platform website app of the social-chat vendor (WeChat Open Platform
// 网站应用), spoken to over plain HTTP as described in vendor-protocols.md §4.
//
// # Settings (keys case-insensitive)
//
//   - AppId (required): the website app's AppID (wx…).
//   - AppSecret (required): the website app's AppSecret. Never logged.
//   - OpenBase (optional, default https://open.weixin.qq.com): host of the
//     QR authorization page.
//   - ApiBase (optional, default https://api.weixin.qq.com): host of the
//     sns token and user-info calls.
//   - Lang (optional, cn or en): language of the QR page.
//
// # Flow
//
// The authorization URL is qrconnect with scope snsapi_login, parameters in
// the documented order and the #wechat_redirect fragment. The callback's
// code is redeemed at /sns/oauth2/access_token; /sns/userinfo is then read
// for the nickname (and for the unionid when the token answer lacks it).
// The vendor answers JSON as text/plain, and errors as HTTP 200 with
// errcode/errmsg. A callback with the state but no code means the user
// declined (kind Denied).
//
// Identity: Subject = unionid only — from the token answer, else from
// userinfo, else the login fails (ExchangeFailed: "unionid missing: bind the
// website app to an Open Platform account"); openid is never used as a
// fallback. DisplayName = nickname. AccountHint is empty (the vendor has no
// account name). No email or phone is available.
package socialchat

import (
	"context"
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
const Code = "social_chat"

// Default vendor hosts.
const (
	DefaultOpenBase = "https://open.weixin.qq.com"
	DefaultAPIBase  = "https://api.weixin.qq.com"
)

const (
	tokenPath    = "/sns/oauth2/access_token" //nolint:gosec // a URL path, not a credential
	userInfoPath = "/sns/userinfo"
)

// configErrors are errcodes caused by the settings.
var configErrors = map[int]string{
	40013: "invalid appid",
	40125: "invalid appsecret",
	40001: "invalid credential",
	41002: "appid missing",
	41004: "appsecret missing",
	40164: "the server's IP is not in the app's IP whitelist",
}

// codeErrors are errcodes refusing the code.
var codeErrors = map[int]string{
	40029: "the code is invalid or expired",
	40163: "the code has been used",
}

// Provider is the social_chat provider. It is safe for concurrent use.
type Provider struct {
	log     hclog.Logger
	timeout time.Duration
	cur     atomic.Pointer[instance]
}

var _ pluginsdk.Provider = (*Provider)(nil)

type config struct {
	appID, secret     string
	openBase, apiBase string
	lang              string
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
		DisplayName:     "Social Chat",
		Icon:            "ant-design:wechat-outlined",
		Brand:           "wechat",
		ProtocolVersion: pluginsdk.ProtocolVersion,
	}, nil
}

// Configure applies the settings (see the package doc). Invalid settings
// return a *pluginsdk.ProviderError of kind Misconfigured and keep the
// previous configuration.
func (p *Provider) Configure(_ context.Context, s pluginsdk.Settings) error {
	var cfg config
	cfg.appID = vendorhttp.First(s, "AppId")
	cfg.secret = vendorhttp.First(s, "AppSecret")
	switch {
	case cfg.appID == "" && cfg.secret == "":
		return vendorhttp.Misconfigured(Code, "AppId, AppSecret required")
	case cfg.appID == "":
		return vendorhttp.Misconfigured(Code, "AppId required")
	case cfg.secret == "":
		return vendorhttp.Misconfigured(Code, "AppSecret required")
	case strings.ContainsAny(cfg.appID, " \t\r\n&#?/"):
		return vendorhttp.Misconfigured(Code, "AppId contains invalid characters")
	}
	var err error
	if cfg.openBase, err = vendorhttp.Base(s, "OpenBase", DefaultOpenBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	if cfg.apiBase, err = vendorhttp.Base(s, "ApiBase", DefaultAPIBase); err != nil {
		return vendorhttp.Misconfigured(Code, "%v", err)
	}
	cfg.lang, _ = vendorhttp.Setting(s, "Lang")
	if cfg.lang != "" && cfg.lang != "cn" && cfg.lang != "en" {
		return vendorhttp.Misconfigured(Code, "Lang %q must be cn or en", vendorhttp.Clean(cfg.lang, 16))
	}
	in := &instance{cfg: cfg}
	if old := p.cur.Load(); old != nil {
		in.client = old.client
	} else {
		in.client = vendorhttp.NewClient(p.timeout)
	}
	p.cur.Store(in)
	p.log.Debug("configured", "app_id", cfg.appID, "api_base", cfg.apiBase)
	return nil
}

// AuthorizeURL builds the QR login URL (documented order, #wechat_redirect).
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
	u := c.openBase + "/connect/qrconnect?appid=" + url.QueryEscape(c.appID) +
		"&redirect_uri=" + url.QueryEscape(req.RedirectURI) +
		"&response_type=code&scope=snsapi_login" +
		"&state=" + url.QueryEscape(req.State)
	if c.lang != "" {
		u += "&lang=" + c.lang
	}
	return pluginsdk.AuthorizeResponse{URL: u + "#wechat_redirect"}, nil
}

// Exchange redeems the code and resolves the unionid.
func (p *Provider) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	in := p.cur.Load()
	if in == nil {
		return pluginsdk.Fail(pluginsdk.Misconfigured, "not configured"), nil
	}
	id, err := p.exchange(ctx, in, req.Query)
	return vendorhttp.Finish(Code, id, err)
}

type status struct {
	ErrCode int    `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
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
	c := in.cfg

	var tok struct {
		status
		AccessToken string `json:"access_token"`
		OpenID      string `json:"openid"`
		UnionID     string `json:"unionid"`
		Scope       string `json:"scope"`
	}
	err := in.get(ctx, tokenPath, url.Values{"appid": {c.appID}, "secret": {c.secret}, "code": {code}, "grant_type": {"authorization_code"}}, &tok)
	if err != nil {
		return pluginsdk.Identity{}, err
	}
	if tok.ErrCode != 0 {
		msg := vendorhttp.Clean(tok.ErrMsg, 200, c.secret, code)
		if what, ok := codeErrors[tok.ErrCode]; ok {
			return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "access_token: errcode %d (%s): %s", tok.ErrCode, what, msg)
		}
		if what, ok := configErrors[tok.ErrCode]; ok {
			return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.Misconfigured, "access_token: errcode %d (%s): %s", tok.ErrCode, what, msg)
		}
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "access_token: errcode %d: %s", tok.ErrCode, msg)
	}
	if tok.AccessToken == "" || tok.OpenID == "" || len(tok.AccessToken) > 4096 {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "access_token: the answer carries no access_token or openid")
	}

	// userinfo: the nickname, and the unionid when the token answer lacks it.
	var ui struct {
		status
		OpenID   string `json:"openid"`
		UnionID  string `json:"unionid"`
		Nickname string `json:"nickname"`
	}
	uerr := in.get(ctx, userInfoPath, url.Values{"access_token": {tok.AccessToken}, "openid": {tok.OpenID}}, &ui)
	switch {
	case uerr == nil && ui.ErrCode != 0:
		uerr = vendorhttp.Fail(pluginsdk.ExchangeFailed, "userinfo: errcode %d: %s", ui.ErrCode, vendorhttp.Clean(ui.ErrMsg, 200, c.secret, code, tok.AccessToken))
	case uerr == nil && ui.OpenID != "" && ui.OpenID != tok.OpenID:
		uerr = vendorhttp.Fail(pluginsdk.ExchangeFailed, "userinfo: the answer is for another openid")
	case uerr == nil && tok.UnionID != "" && ui.UnionID != "" && ui.UnionID != tok.UnionID:
		uerr = vendorhttp.Fail(pluginsdk.ExchangeFailed, "userinfo: the unionid differs from the token answer's")
	}
	unionID := tok.UnionID
	if unionID == "" {
		if uerr != nil {
			return pluginsdk.Identity{}, uerr
		}
		unionID = ui.UnionID
	} else if uerr != nil {
		// The subject is known; the profile is optional.
		p.log.Debug("userinfo failed; no display name", "error", errText(uerr))
	}
	if unionID == "" {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "unionid missing: bind the website app to an Open Platform account (openid is not used as a fallback)")
	}
	if !vendorhttp.ValidSubject(unionID) {
		return pluginsdk.Identity{}, vendorhttp.Fail(pluginsdk.ExchangeFailed, "the unionid is malformed")
	}
	id := pluginsdk.Identity{Subject: unionID}
	if uerr == nil {
		if nick := strings.TrimSpace(ui.Nickname); vendorhttp.ValidSubject(nick) {
			id.DisplayName = nick
		}
	}
	return id, nil
}

// get calls an sns API and decodes its answer (any Content-Type) into out.
func (in *instance) get(ctx context.Context, path string, q url.Values, out any) error {
	resp, err := vendorhttp.Get(ctx, in.client, in.cfg.apiBase, path, q, nil)
	if err != nil {
		if errors.Is(err, vendorhttp.ErrBodyTooLarge) {
			return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor's answer exceeds %d bytes", path, vendorhttp.MaxBodyBytes)
		}
		return err
	}
	if !resp.OK() {
		return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: the vendor answered %s", path, resp.Describe())
	}
	if err := vendorhttp.DecodeJSON(resp.Body, out); err != nil {
		return vendorhttp.Fail(pluginsdk.ExchangeFailed, "%s: %v", path, err)
	}
	return nil
}

func errText(err error) string {
	var pe *pluginsdk.ProviderError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}
