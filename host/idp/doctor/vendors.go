package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// hostSetting is a vendor host a bundled plugin calls, with the settings
// key that overrides it.
type hostSetting struct {
	key, def string
}

// vendor is what the kernel knows of a bundled vendor plugin: its required
// settings, its hosts, its harmless credentials check, and what to
// register with the vendor.
type vendor struct {
	name     string
	required []string
	hosts    []hostSetting
	// apiHost is the index in hosts of the host the credentials check
	// calls.
	apiHost int
	// credentials runs the credentials check against the API base.
	credentials func(ctx context.Context, r *run, s settings, api string) Check
	// registerKey is the redirect check's message (what to register).
	registerKey string
	// defaultPortOnly: the vendor accepts callbacks on the default ports
	// only.
	defaultPortOnly bool
}

// probeCode is the authorization code sent by the checks that prove the
// credentials with a code exchange: the vendor refuses the code after it
// accepted the client (nothing is issued).
const probeCode = "adminkernel-doctor-probe"

var vendors = map[string]*vendor{
	"enterprise_chat": {
		name:     "WeCom",
		required: []string{"CorpId", "AgentId", "CorpSecret"},
		hosts: []hostSetting{
			{"ApiBase", "https://qyapi.weixin.qq.com"},
			{"OAuthBase", "https://open.weixin.qq.com"},
			{"LoginBase", "https://login.work.weixin.qq.com"},
		},
		credentials: weComCredentials,
		registerKey: "doctor.redirect.weCom",
	},
	"team_chat": {
		name:     "DingTalk",
		required: []string{"ClientId", "ClientSecret"},
		hosts: []hostSetting{
			{"ApiBase", "https://api.dingtalk.com"},
			{"LoginBase", "https://login.dingtalk.com"},
		},
		credentials: dingTalkCredentials,
		registerKey: "doctor.redirect.dingTalk",
	},
	"code_host": {
		name:     "GitHub",
		required: []string{"ClientId", "ClientSecret"},
		hosts: []hostSetting{
			{"WebBase", "https://github.com"},
			{"ApiBase", "https://api.github.com"},
		},
		credentials: gitHubCredentials,
		registerKey: "doctor.redirect.gitHub",
	},
	"social_chat": {
		name:     "WeChat",
		required: []string{"AppId", "AppSecret"},
		hosts: []hostSetting{
			{"ApiBase", "https://api.weixin.qq.com"},
			{"OpenBase", "https://open.weixin.qq.com"},
		},
		credentials:     weChatCredentials,
		registerKey:     "doctor.redirect.weChat",
		defaultPortOnly: true,
	},
}

// settings reads a section case-insensitively, as the plugins do.
type settings map[string]string

func (s settings) get(key string) string {
	for k, v := range s {
		if strings.EqualFold(k, key) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// bases returns the vendor hosts the plugin will call, in order; code_host's
// API defaults to WebBase + /api/v3 when only WebBase is set (GitHub
// Enterprise), as the plugin does.
func (v *vendor) bases(s settings) []string {
	out := make([]string, len(v.hosts))
	for i, h := range v.hosts {
		out[i] = strings.TrimRight(s.get(h.key), "/")
		if out[i] == "" {
			out[i] = h.def
		}
	}
	if v.name == "GitHub" && s.get("ApiBase") == "" && s.get("WebBase") != "" {
		out[1] = strings.TrimRight(s.get("WebBase"), "/") + "/api/v3"
	}
	return out
}

func (r *run) vendor(ctx context.Context, v *vendor, t Target) {
	s := settings(t.Settings)
	args := map[string]string{"section": t.Section, "vendor": v.name}
	if !anyValue(s) {
		r.add(check("settings", Fail, "doctor.settings.empty", args))
		return
	}
	var missing []string
	for _, k := range v.required {
		if s.get(k) == "" {
			missing = append(missing, k)
		}
	}
	for _, h := range v.hosts {
		if raw := s.get(h.key); raw != "" {
			if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
				args["key"] = h.key
				r.add(check("settings", Fail, "doctor.settings.badUrl", args))
				return
			}
		}
	}
	if len(missing) > 0 {
		args["keys"] = strings.Join(missing, ", ")
		r.add(check("settings", Fail, "doctor.settings.missing", args))
		return
	}
	args["keys"] = strings.Join(v.required, ", ")
	r.add(check("settings", OK, "doctor.settings.ok", args))

	bases := v.bases(s)
	answered := map[string]bool{}
	for _, b := range bases {
		if _, seen := answered[b]; seen {
			continue
		}
		answered[b] = r.hostChecks(ctx, b)
	}
	api := bases[v.apiHost]
	if !answered[api] {
		r.add(check("credentials", Warn, "doctor.credentials.skipped", map[string]string{"vendor": v.name}))
		return
	}
	r.add(v.credentials(ctx, r, s, api))
}

func anyValue(s settings) bool {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// call makes one vendor call and reads at most 64 KiB of its answer.
func (r *run) call(ctx context.Context, method, u string, body []byte, hdr http.Header) probe {
	cctx, cancel := context.WithTimeout(ctx, r.d.timeout())
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, method, u, rd)
	if err != nil {
		return probe{err: "the URL is not usable"}
	}
	req.Header.Set("User-Agent", "adminkernel-doctor")
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return probe{err: netReason(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return probe{status: resp.StatusCode, err: netReason(err)}
	}
	return probe{status: resp.StatusCode, body: b}
}

// credCheck builds the credentials check.
func credCheck(res Result, key, vendor, detail, what string) Check {
	return check("credentials", res, key, map[string]string{"vendor": vendor, "detail": detail, "check": what})
}

// unexpected describes an answer the check cannot read.
func unexpected(p probe) string {
	if p.err != "" {
		return p.err
	}
	return "HTTP " + strconv.Itoa(p.status)
}

func weComCredentials(ctx context.Context, r *run, s settings, api string) Check {
	const what = "gettoken"
	q := url.Values{"corpid": {s.get("CorpId")}, "corpsecret": {s.get("CorpSecret")}}
	p := r.call(ctx, http.MethodGet, api+"/cgi-bin/gettoken?"+q.Encode(), nil, nil)
	var a struct {
		Errcode     *int   `json:"errcode"`
		AccessToken string `json:"access_token"`
	}
	if p.err != "" || p.status != http.StatusOK || json.Unmarshal(p.body, &a) != nil || a.Errcode == nil {
		return credCheck(Fail, "doctor.credentials.unexpected", "WeCom", unexpected(p), what)
	}
	switch *a.Errcode {
	case 0:
		if a.AccessToken == "" {
			return credCheck(Fail, "doctor.credentials.unexpected", "WeCom", "no access_token", what)
		}
		return credCheck(OK, "doctor.credentials.ok", "WeCom", "", what)
	case 40013, 41002:
		return credCheck(Fail, "doctor.credentials.refused", "WeCom", "errcode "+strconv.Itoa(*a.Errcode)+": CorpId", what)
	case 40001, 40091, 41004:
		return credCheck(Fail, "doctor.credentials.refused", "WeCom", "errcode "+strconv.Itoa(*a.Errcode)+": CorpSecret", what)
	case 60020:
		return credCheck(Fail, "doctor.credentials.ipNotTrusted", "WeCom", "errcode 60020", what)
	default:
		return credCheck(Fail, "doctor.credentials.unexpected", "WeCom", "errcode "+strconv.Itoa(*a.Errcode), what)
	}
}

// dingTalkCredentials asks for the app access token (POST
// /v1.0/oauth2/accessToken): issued for a valid app key and secret.
func dingTalkCredentials(ctx context.Context, r *run, s settings, api string) Check {
	const what = "oauth2/accessToken"
	body, _ := json.Marshal(map[string]string{"appKey": s.get("ClientId"), "appSecret": s.get("ClientSecret")})
	p := r.call(ctx, http.MethodPost, api+"/v1.0/oauth2/accessToken", body, http.Header{"Content-Type": {"application/json"}})
	var a struct {
		AccessToken string `json:"accessToken"`
		Code        string `json:"code"`
	}
	if p.err != "" || json.Unmarshal(p.body, &a) != nil {
		return credCheck(Fail, "doctor.credentials.unexpected", "DingTalk", unexpected(p), what)
	}
	switch {
	case p.status == http.StatusOK && a.AccessToken != "":
		return credCheck(OK, "doctor.credentials.ok", "DingTalk", "", what)
	case p.status >= 400 && p.status < 500 && a.Code != "":
		return credCheck(Fail, "doctor.credentials.refused", "DingTalk", safeCode(a.Code), what)
	default:
		return credCheck(Fail, "doctor.credentials.unexpected", "DingTalk", unexpected(p), what)
	}
}

// gitHubCredentials exchanges a code that does not exist: GitHub answers
// incorrect_client_credentials for a wrong client and
// bad_verification_code for the right one.
func gitHubCredentials(ctx context.Context, r *run, s settings, web string) Check {
	const what = "login/oauth/access_token"
	form := url.Values{"client_id": {s.get("ClientId")}, "client_secret": {s.get("ClientSecret")}, "code": {probeCode}}
	p := r.call(ctx, http.MethodPost, web+"/login/oauth/access_token", []byte(form.Encode()), http.Header{
		"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"},
	})
	var a struct {
		Error string `json:"error"`
	}
	if p.err != "" || p.status != http.StatusOK || json.Unmarshal(p.body, &a) != nil {
		return credCheck(Fail, "doctor.credentials.unexpected", "GitHub", unexpected(p), what)
	}
	switch a.Error {
	case "bad_verification_code", "redirect_uri_mismatch":
		return credCheck(OK, "doctor.credentials.ok", "GitHub", "", what)
	case "incorrect_client_credentials":
		return credCheck(Fail, "doctor.credentials.refused", "GitHub", a.Error, what)
	case "":
		return credCheck(Fail, "doctor.credentials.unexpected", "GitHub", "no error for a made-up code", what)
	default:
		return credCheck(Fail, "doctor.credentials.unexpected", "GitHub", safeCode(a.Error), what)
	}
}

// weChatCredentials exchanges a code that does not exist: WeChat checks
// the app id (40013) and secret (40125) before the code (40029).
func weChatCredentials(ctx context.Context, r *run, s settings, api string) Check {
	const what = "sns/oauth2/access_token"
	q := url.Values{"appid": {s.get("AppId")}, "secret": {s.get("AppSecret")}, "code": {probeCode}, "grant_type": {"authorization_code"}}
	p := r.call(ctx, http.MethodGet, api+"/sns/oauth2/access_token?"+q.Encode(), nil, nil)
	var a struct {
		Errcode *int `json:"errcode"`
	}
	if p.err != "" || p.status != http.StatusOK || json.Unmarshal(p.body, &a) != nil || a.Errcode == nil {
		return credCheck(Fail, "doctor.credentials.unexpected", "WeChat", unexpected(p), what)
	}
	switch *a.Errcode {
	case 40029, 40163:
		return credCheck(OK, "doctor.credentials.ok", "WeChat", "", what)
	case 40013:
		return credCheck(Fail, "doctor.credentials.refused", "WeChat", "errcode 40013: AppId", what)
	case 40125, 40001:
		return credCheck(Fail, "doctor.credentials.refused", "WeChat", "errcode "+strconv.Itoa(*a.Errcode)+": AppSecret", what)
	default:
		return credCheck(Fail, "doctor.credentials.unexpected", "WeChat", "errcode "+strconv.Itoa(*a.Errcode), what)
	}
}

// safeCode keeps a vendor's error code only when it looks like one (a
// short identifier), never its free text.
func safeCode(c string) string {
	if len(c) > 80 {
		return "an error code"
	}
	for _, r := range c {
		switch {
		case r == '.', r == '_', r == '-', r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		default:
			return "an error code"
		}
	}
	return c
}
