package config

import (
	"net"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxPasskeyDisplayName bounds Service:Security:Passkey:RpDisplayName.
const maxPasskeyDisplayName = 64

// validatePasskey checks Service:Security:Passkey like CallbackBaseUrl and
// the CORS origins are checked: RpId a bare host name (no scheme, port or
// path; an IP address is not a valid RP id), every origin a serialized
// origin (NormalizeOrigin, which also normalises the list) that is https —
// http only for loopback hosts, which browsers treat as secure contexts —
// and whose host is RpId or a name below it (WebAuthn refuses anything
// else). Origins without RpId is a problem outside Development; RpId
// without Origins too.
func (c *Config) validatePasskey(p *problems) {
	const key = "Service:Security:Passkey"
	pk := &c.Service.Security.Passkey
	pk.RpID = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(pk.RpID), "."))
	pk.RpDisplayName = strings.TrimSpace(pk.RpDisplayName)
	if n := utf8.RuneCountInString(pk.RpDisplayName); n > maxPasskeyDisplayName {
		p.add("%s:RpDisplayName has %d characters; at most %d", key, n, maxPasskeyDisplayName)
	}
	rpOK := true
	if pk.RpID != "" {
		switch {
		case strings.ContainsAny(pk.RpID, ":/@?#") || !hostName(pk.RpID):
			p.add("%s:RpId %q must be a host name such as example.com or localhost (no scheme, port or path)", key, pk.RpID)
			rpOK = false
		case net.ParseIP(pk.RpID) != nil:
			p.add("%s:RpId %q is an IP address; WebAuthn needs a host name (localhost for local development)", key, pk.RpID)
			rpOK = false
		}
	}
	out := make([]string, 0, len(pk.Origins))
	seen := make(map[string]bool, len(pk.Origins))
	rpID := pk.RpID
	if rpID == "" && c.IsDevelopment() {
		rpID = DevPasskeyRpID
	}
	for i, raw := range pk.Origins {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		o, err := NormalizeOrigin(raw)
		if err != nil {
			p.add("%s:Origins:%d %q is not an origin: %v (an origin is scheme://host[:port], for example https://admin.example.com or http://localhost:5100)", key, i, raw, err)
			continue
		}
		u, _ := url.Parse(o)
		host := u.Hostname()
		if u.Scheme != "https" && !loopbackHost(host) {
			p.add("%s:Origins:%d %q must be https (http is accepted for localhost and loopback addresses only: browsers offer WebAuthn to secure contexts)", key, i, o)
			continue
		}
		if rpOK && rpID != "" && host != rpID && !strings.HasSuffix(host, "."+rpID) {
			p.add("%s:Origins:%d %q is not on the relying party %q: an origin's host must be RpId or a name below it", key, i, o, rpID)
			continue
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	pk.Origins = out
	switch {
	case pk.RpID != "" && len(pk.Origins) == 0:
		p.add("%s:Origins is empty: list the origins of the browser app (for example https://admin.example.com) when RpId is set", key)
	case pk.RpID == "" && len(pk.Origins) > 0 && !c.IsDevelopment():
		p.add("%s:Origins is set without %s:RpId; set RpId (the site's host name) to turn passkeys on in %s", key, key, c.Environment)
	}
}

// loopbackHost: localhost, a name under .localhost, or a loopback address.
func loopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
