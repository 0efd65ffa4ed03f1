package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// NormalizeOrigin returns the serialized origin of s, the form a browser
// sends in its Origin header: lower-case scheme and host, the port only
// when it is not the scheme's default, no trailing slash
// ("HTTPS://App.Example.com:443/" gives "https://app.example.com"). s must
// be http or https with a host and nothing else: no user information, path,
// query or fragment (a lone trailing "/" is dropped), no wildcard, and an
// ASCII host (an internationalised name in its xn-- form).
func NormalizeOrigin(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "*" || strings.Contains(s, "*") {
		return "", errors.New("wildcards are refused; list each origin")
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		return "", errors.New("must not contain spaces, control characters or backslashes")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New("is not a valid URL")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", errors.New("must start with http:// or https://")
	case u.Opaque != "" || u.Host == "":
		return "", errors.New("has no host")
	case u.User != nil:
		return "", errors.New("must not carry user information")
	case u.Path != "" && u.Path != "/":
		return "", errors.New("must not have a path (an origin is scheme://host[:port])")
	case u.RawQuery != "" || u.ForceQuery:
		return "", errors.New("must not have a query")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", errors.New("must not have a fragment")
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil && strings.Contains(host, ":") {
		host = "[" + host + "]"
	} else if !hostName(host) {
		return "", errors.New("host must be a DNS name (letters, digits, '-', '.'; an internationalised name in its xn-- form) or an IP address")
	}
	port := u.Port()
	if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("has an empty port")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("has an invalid port %q", port)
		}
		if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
			port = ""
		} else {
			port = strconv.Itoa(n)
		}
	}
	out := scheme + "://" + host
	if port != "" {
		out += ":" + port
	}
	return out, nil
}

// hostName reports whether h is a lower-case ASCII host name.
func hostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for i := range len(h) {
		c := h[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' && c != '_' {
			return false
		}
	}
	return true
}

// validateCors checks Api:Cors:AllowedOrigins and replaces it with the
// serialized origins (NormalizeOrigin), blank entries and duplicates
// dropped.
func (c *Config) validateCors(p *problems) {
	const key = "Api:Cors:AllowedOrigins"
	in := c.API.Cors.AllowedOrigins
	if len(in) == 0 {
		return
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, raw := range in {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if strings.TrimSpace(raw) == "*" {
			p.add("%s:%d \"*\" is refused: the kernel always allows credentials (cookies, Authorization) to a listed origin, "+
				"and browsers refuse a wildcard together with credentials; list each origin of your browser app, for example https://admin.example.com", key, i)
			continue
		}
		o, err := NormalizeOrigin(raw)
		if err != nil {
			p.add("%s:%d %q is not an origin: %v (an origin is scheme://host[:port], for example https://admin.example.com or http://localhost:5173)", key, i, raw, err)
			continue
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	c.API.Cors.AllowedOrigins = out
}

// absoluteHTTPURL parses raw as an absolute http or https URL with a host
// (the shape CallbackBaseUrl and an absolute FrontendResultPath need).
func absoluteHTTPURL(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}

// validateFrontendResult checks Service:ExternalAuth:FrontendResultPath:
// a path of the backend's site ("/oauth/callback", a single leading "/")
// or an absolute http(s) URL of the browser app, which may live on another
// origin. Both may carry a query or a fragment (a hash router's
// "https://app.example.com/#/oauth/callback"): the callback appends its
// parameters after them. Production requires https for an absolute URL,
// whose query carries one-time tickets.
func (c *Config) validateFrontendResult(p *problems) {
	const key = "Service:ExternalAuth:FrontendResultPath"
	ea := &c.Service.ExternalAuth
	raw := strings.TrimSpace(ea.FrontendResultPath)
	ea.FrontendResultPath = raw
	if raw == "" {
		return // the service's default, /oauth/callback
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		p.add("%s %q must not contain spaces, control characters or backslashes", key, raw)
		return
	}
	if strings.HasPrefix(raw, "/") {
		if strings.HasPrefix(raw, "//") {
			p.add("%s %q starts with //, which browsers read as another host; give a path such as /oauth/callback or an absolute URL such as https://app.example.com/oauth/callback", key, raw)
		}
		return
	}
	shown := MaskConnectionString(raw)
	u, ok := absoluteHTTPURL(raw)
	switch {
	case !ok:
		p.add("%s %q must be a path starting with / (for example /oauth/callback) or an absolute http or https URL (for example https://app.example.com/oauth/callback)", key, shown)
	case u.User != nil:
		p.add("%s %q must not carry user information", key, shown)
	case c.IsProduction() && u.Scheme != "https":
		p.add("%s %q must be an https URL in %s: the redirect to it carries one-time login tickets", key, shown, c.Environment)
	}
}

// frontendOriginWarning names an absolute FrontendResultPath whose origin is
// neither the backend's (CallbackBaseUrl) nor listed in
// Api:Cors:AllowedOrigins: the page it names cannot call exchange unless a
// gateway serves the API on its origin.
func (c *Config) frontendOriginWarning() string {
	u, ok := absoluteHTTPURL(c.Service.ExternalAuth.FrontendResultPath)
	if !ok {
		return ""
	}
	origin, err := NormalizeOrigin(u.Scheme + "://" + u.Host)
	if err != nil {
		return ""
	}
	if b, ok := absoluteHTTPURL(c.Service.ExternalAuth.CallbackBaseURL); ok {
		if backend, err := NormalizeOrigin(b.Scheme + "://" + b.Host); err == nil && backend == origin {
			return ""
		}
	}
	for _, o := range c.API.Cors.AllowedOrigins {
		if n, err := NormalizeOrigin(o); err == nil && n == origin {
			return ""
		}
	}
	return fmt.Sprintf("Service:ExternalAuth:FrontendResultPath is on %s, which is neither the origin of CallbackBaseUrl nor listed in Api:Cors:AllowedOrigins: "+
		"the result page cannot call the API from there unless a gateway serves /api on that origin (docs/developers/frontend.md)", origin)
}
