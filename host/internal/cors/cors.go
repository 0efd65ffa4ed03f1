// Package cors answers the CORS protocol for the browser apps listed in
// Api:Cors:AllowedOrigins (docs/developers/frontend.md, docs/design/security.md "CORS").
//
// Every answer carries Vary: Origin. An answer to a listed origin carries
//
//	Access-Control-Allow-Origin: <the request's Origin>
//	Access-Control-Allow-Credentials: true
//	Access-Control-Expose-Headers: X-Request-ID, Retry-After, Content-Disposition
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered here with 204 and never reaches the router or the rate limiter;
// from a listed origin it adds the fixed methods, request headers and
// Max-Age of the API (the Allow* constants), and Vary names the request
// headers a preflight depends on. An unlisted origin gets no CORS header
// at all (its preflight a bare 204: the browser blocks), and its other
// requests are processed as any request without CORS.
//
// The headers are set before the rest of the chain runs, so answers the
// central error handler writes (401, 404, 429, 500) carry them too.
// Origins are compared exactly, ignoring ASCII case; the header values are
// built once and the origin is looked up in a map through a stack buffer:
// the middleware allocates nothing per request.
package cors

import (
	"fmt"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
)

// Header values of the policy.
const (
	AllowMethods  = "GET, POST, PUT, PATCH, DELETE"
	AllowHeaders  = "Authorization, Content-Type, Accept-Language, X-Request-ID, X-Smart-CSRF, X-Smart-Reauth-Retried"
	ExposeHeaders = "X-Request-ID, Retry-After, Content-Disposition"
	MaxAge        = "600"
	// VaryPreflight is the Vary of a preflight answer; other answers vary
	// by Origin only.
	VaryPreflight = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
)

// maxOriginLen bounds an Origin worth looking up: scheme, a host name of
// at most 253 characters and a port. A longer one is not listed.
const maxOriginLen = 300

// Header names in fasthttp's canonical form and the values, pre-built so
// that setting them copies bytes and nothing else.
var (
	keyOrigin        = []byte(fiber.HeaderOrigin)
	keyRequestMethod = []byte(fiber.HeaderAccessControlRequestMethod)
	keyVary          = []byte(fiber.HeaderVary)
	keyAllowOrigin   = []byte(fiber.HeaderAccessControlAllowOrigin)
	keyAllowCreds    = []byte(fiber.HeaderAccessControlAllowCredentials)
	keyExpose        = []byte(fiber.HeaderAccessControlExposeHeaders)
	keyAllowMethods  = []byte(fiber.HeaderAccessControlAllowMethods)
	keyAllowHeaders  = []byte(fiber.HeaderAccessControlAllowHeaders)
	keyMaxAge        = []byte(fiber.HeaderAccessControlMaxAge)
	valTrue          = []byte("true")
	valExpose        = []byte(ExposeHeaders)
	valAllowMethods  = []byte(AllowMethods)
	valAllowHeaders  = []byte(AllowHeaders)
	valMaxAge        = []byte(MaxAge)
	valVary          = []byte(fiber.HeaderOrigin)
	valVaryPreflight = []byte(VaryPreflight)
)

// Matcher tells listed origins from the rest.
type Matcher struct {
	origins map[string]struct{} // lower-case
}

// NewMatcher returns the matcher of origins, each normalised as
// config.NormalizeOrigin does for Api:Cors:AllowedOrigins (which Validate
// has done already): an entry that is not an origin, the wildcard among
// them, is an error. Credentials are always allowed, and browsers refuse
// "*" together with them.
func NewMatcher(origins []string) (*Matcher, error) {
	m := &Matcher{origins: make(map[string]struct{}, len(origins))}
	for _, o := range origins {
		n, err := config.NormalizeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("cors: %q: %w", o, err)
		}
		if len(n) > maxOriginLen {
			return nil, fmt.Errorf("cors: %q is longer than %d characters", o, maxOriginLen)
		}
		m.origins[n] = struct{}{} // lower case already
	}
	return m, nil
}

// Listed reports whether origin (an Origin header's value) is listed,
// ignoring ASCII case.
func (m *Matcher) Listed(origin []byte) bool {
	if len(origin) == 0 || len(origin) > maxOriginLen {
		return false
	}
	var buf [maxOriginLen]byte
	_, ok := m.origins[string(lower(buf[:0], origin))]
	return ok
}

// Len is the number of listed origins.
func (m *Matcher) Len() int { return len(m.origins) }

// lower appends s to dst with ASCII letters in lower case.
func lower(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// New returns the middleware for the origins (see NewMatcher). With no
// origin it passes every request on untouched: no CORS header, no Vary.
func New(origins []string) (fiber.Handler, error) {
	m, err := NewMatcher(origins)
	if err != nil {
		return nil, err
	}
	if m.Len() == 0 {
		return func(c fiber.Ctx) error { return c.Next() }, nil
	}
	return m.middleware, nil
}

func (m *Matcher) middleware(c fiber.Ctx) error {
	req := &c.Request().Header
	h := &c.Response().Header
	origin := req.PeekBytes(keyOrigin)
	preflight := len(origin) > 0 && req.IsOptions() && len(req.PeekBytes(keyRequestMethod)) > 0
	if preflight {
		h.SetCanonical(keyVary, valVaryPreflight)
	} else {
		h.SetCanonical(keyVary, valVary)
	}
	listed := m.Listed(origin)
	if listed {
		h.SetCanonical(keyAllowOrigin, origin)
		h.SetCanonical(keyAllowCreds, valTrue)
		h.SetCanonical(keyExpose, valExpose)
	}
	if !preflight {
		return c.Next()
	}
	if listed {
		h.SetCanonical(keyAllowMethods, valAllowMethods)
		h.SetCanonical(keyAllowHeaders, valAllowHeaders)
		h.SetCanonical(keyMaxAge, valMaxAge)
	}
	c.Status(fiber.StatusNoContent)
	return nil
}
