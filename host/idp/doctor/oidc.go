package doctor

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/adminkernel/kernel/config"
)

// oidc checks a built-in OpenID Connect provider: its settings, its host,
// the discovery document (with the exact issuer) and the key set.
func (r *run) oidc(ctx context.Context, o *config.OIDCProvider) {
	authority := strings.TrimRight(o.Authority, "/")
	args := map[string]string{"section": "Service:ExternalAuth:Oidc (" + o.Code + ")", "authority": o.Authority}
	var missing []string
	if o.Authority == "" {
		missing = append(missing, "Authority")
	}
	if o.ClientID == "" {
		missing = append(missing, "ClientId")
	}
	if len(missing) > 0 {
		args["keys"] = strings.Join(missing, ", ")
		r.add(check("settings", Fail, "doctor.settings.missing", args))
		return
	}
	args["keys"] = "Authority, ClientId"
	r.add(check("settings", OK, "doctor.settings.ok", args))
	if !r.hostChecks(ctx, authority) {
		return
	}
	disc := authority + "/.well-known/openid-configuration"
	p := r.call(ctx, http.MethodGet, disc, nil, http.Header{"Accept": {"application/json"}})
	dargs := map[string]string{"url": disc}
	var doc struct {
		Issuer   string `json:"issuer"`
		Auth     string `json:"authorization_endpoint"`
		Token    string `json:"token_endpoint"`
		JWKSURI  string `json:"jwks_uri"`
		Response []any  `json:"response_types_supported"`
	}
	switch {
	case p.err != "":
		dargs["error"] = p.err
	case p.status != http.StatusOK:
		dargs["error"] = "HTTP " + strconv.Itoa(p.status)
	case json.Unmarshal(p.body, &doc) != nil:
		dargs["error"] = "not a JSON object"
	case !absHTTP(doc.Auth) || !absHTTP(doc.Token):
		dargs["error"] = "no absolute authorization_endpoint or token_endpoint"
	case !absHTTP(doc.JWKSURI):
		dargs["error"] = "no absolute jwks_uri"
	}
	if dargs["error"] != "" {
		r.add(check("discovery", Fail, "doctor.oidc.discoveryFail", dargs))
		return
	}
	r.add(check("discovery", OK, "doctor.oidc.discoveryOk", dargs))
	iargs := map[string]string{"issuer": clip(doc.Issuer), "authority": authority}
	if doc.Issuer != authority {
		r.add(check("issuer", Fail, "doctor.oidc.issuerMismatch", iargs))
	} else {
		r.add(check("issuer", OK, "doctor.oidc.issuerOk", iargs))
	}
	kargs := map[string]string{"url": clip(doc.JWKSURI)}
	kp := r.call(ctx, http.MethodGet, doc.JWKSURI, nil, http.Header{"Accept": {"application/json"}})
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
		} `json:"keys"`
	}
	switch {
	case kp.err != "":
		kargs["error"] = kp.err
	case kp.status != http.StatusOK:
		kargs["error"] = "HTTP " + strconv.Itoa(kp.status)
	case json.Unmarshal(kp.body, &set) != nil:
		kargs["error"] = "not a JSON key set"
	case len(set.Keys) == 0:
		kargs["error"] = "the key set holds no key"
	}
	if kargs["error"] != "" {
		r.add(check("jwks", Fail, "doctor.oidc.jwksFail", kargs))
		return
	}
	kargs["count"] = strconv.Itoa(len(set.Keys))
	r.add(check("jwks", OK, "doctor.oidc.jwksOk", kargs))
}

func absHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// clip bounds a value the vendor sent (it is shown as it is).
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
