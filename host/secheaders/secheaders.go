// Package secheaders sets the baseline security headers on every answer of
// the kernel, errors, 404s and health included: it runs first in the chain
// and sets them before the rest runs, so the central error handler's answer
// carries them too. A handler that sets one of them itself (an external
// login redirect, a download) keeps its own value.
//
//   - X-Content-Type-Options: nosniff
//   - X-Frame-Options: DENY and Content-Security-Policy: frame-ancestors
//     'none' (the kernel serves no HTML; nothing of it is to be framed)
//   - Referrer-Policy: no-referrer
//   - Cache-Control: no-store on answers to requests carrying an
//     Authorization header and on every answer under the auth prefix
//     (/api/v1/auth...: tokens, tickets, captchas)
//   - Strict-Transport-Security: max-age=31536000 when the public base URL
//     is https
//
// The values are constants and the checks compare bytes in place: the
// middleware allocates nothing per request.
package secheaders

import (
	"bytes"

	"github.com/gofiber/fiber/v3"
)

// Header values.
const (
	NoSniff        = "nosniff"
	FrameDeny      = "DENY"
	FrameAncestors = "frame-ancestors 'none'"
	NoReferrer     = "no-referrer"
	NoStore        = "no-store"
	HSTS           = "max-age=31536000"
)

// Options configure the middleware.
type Options struct {
	// HSTS adds Strict-Transport-Security (the public base URL is https).
	HSTS bool
	// AuthPrefix is the path prefix whose answers are never cached
	// (for example /api/v1/auth); empty: none.
	AuthPrefix string
}

// New returns the middleware.
func New(o Options) fiber.Handler {
	prefix := []byte(o.AuthPrefix)
	hsts := o.HSTS
	return func(c fiber.Ctx) error {
		h := &c.Response().Header
		h.Set(fiber.HeaderXContentTypeOptions, NoSniff)
		h.Set(fiber.HeaderXFrameOptions, FrameDeny)
		h.Set(fiber.HeaderContentSecurityPolicy, FrameAncestors)
		h.Set(fiber.HeaderReferrerPolicy, NoReferrer)
		if hsts {
			h.Set(fiber.HeaderStrictTransportSecurity, HSTS)
		}
		req := &c.Request().Header
		if len(req.Peek(fiber.HeaderAuthorization)) > 0 || under(c.Request().URI().Path(), prefix) {
			h.Set(fiber.HeaderCacheControl, NoStore)
		}
		return c.Next()
	}
}

// under reports whether path starts with prefix, ignoring ASCII case (the
// router matches paths case-insensitively).
func under(path, prefix []byte) bool {
	return len(prefix) > 0 && len(path) >= len(prefix) && bytes.EqualFold(path[:len(prefix)], prefix)
}
