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
	// FileCSP is the Content-Security-Policy of every file answer (files,
	// spreadsheets): nothing of a file runs, loads or frames (an HTML file
	// opened directly is a sandboxed, script-less document).
	FileCSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'"
)

// Options configure the middleware.
type Options struct {
	// HSTS adds Strict-Transport-Security (the public base URL is https).
	HSTS bool
	// AuthPrefix is the path prefix whose answers are never cached
	// (for example /api/v1/auth); empty: none.
	AuthPrefix string
}

// Pre-built header names and values (canonical form), so that setting
// them copies bytes and nothing else.
var (
	keyNoSniff        = []byte(fiber.HeaderXContentTypeOptions)
	keyFrame          = []byte(fiber.HeaderXFrameOptions)
	keyCSP            = []byte(fiber.HeaderContentSecurityPolicy)
	keyReferrer       = []byte(fiber.HeaderReferrerPolicy)
	keyHSTS           = []byte(fiber.HeaderStrictTransportSecurity)
	keyCacheControl   = []byte(fiber.HeaderCacheControl)
	keyAuthorization  = []byte(fiber.HeaderAuthorization)
	valNoSniff        = []byte(NoSniff)
	valFrameDeny      = []byte(FrameDeny)
	valFrameAncestors = []byte(FrameAncestors)
	valNoReferrer     = []byte(NoReferrer)
	valNoStore        = []byte(NoStore)
	valHSTS           = []byte(HSTS)
)

// New returns the middleware.
func New(o Options) fiber.Handler {
	prefix := []byte(o.AuthPrefix)
	hsts := o.HSTS
	return func(c fiber.Ctx) error {
		h := &c.Response().Header
		h.SetCanonical(keyNoSniff, valNoSniff)
		h.SetCanonical(keyFrame, valFrameDeny)
		h.SetCanonical(keyCSP, valFrameAncestors)
		h.SetCanonical(keyReferrer, valNoReferrer)
		if hsts {
			h.SetCanonical(keyHSTS, valHSTS)
		}
		req := c.Request()
		if len(req.Header.PeekBytes(keyAuthorization)) > 0 || under(req.URI().Path(), prefix) {
			h.SetCanonical(keyCacheControl, valNoStore)
		}
		return c.Next()
	}
}

// under reports whether path starts with prefix, ignoring ASCII case (the
// router matches paths case-insensitively).
func under(path, prefix []byte) bool {
	return len(prefix) > 0 && len(path) >= len(prefix) && bytes.EqualFold(path[:len(prefix)], prefix)
}
