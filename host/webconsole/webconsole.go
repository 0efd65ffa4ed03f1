// Package webconsole serves the embedded web console (module name
// "Console"; Api:DisabledModules containing it leaves it out) at /:
//
//   - a file of the build (GET or HEAD) is answered from memory; hashed
//     files under assets/ carry Cache-Control: public, max-age=31536000,
//     immutable, anything else no-cache;
//   - any other GET or HEAD of a page path — not /api..., /health...,
//     /openapi..., /swagger..., /hub..., /assets/..., nor a path whose last
//     segment has a file extension — is the history-mode fallback: index.html with
//     Cache-Control: no-cache;
//   - everything else passes on, so unknown API paths keep their 404
//     envelope and other methods their 405.
//
// With the console come the pages business modules ship (module.Console,
// extensions.go): their files under /console-ext/<module>/ (never the
// history-mode fallback) and their listing at
// GET /api/v1/sys/console/extensions. The console kit the pages import
// (/console-kit/*.js) is part of the console's build.
//
// Every answer of the console carries the console's strict CSP (CSP).
// Files are read once at start; a request allocates nothing beyond what
// Fiber does to send a body.
package webconsole

import (
	"io/fs"
	"mime"
	"path"
	"strings"

	"github.com/gofiber/fiber/v3"
)

// ModuleName is what Api:DisabledModules refers to.
const ModuleName = "Console"

// CSP is the console's Content-Security-Policy. Scripts only from the
// kernel's origin (no inline script, no eval); styles from the origin
// ('unsafe-inline' is not needed: Element Plus ships a stylesheet, and
// style attributes set through the CSSOM are not governed by CSP); images
// from the origin, data: (captcha SVGs arrive as markup and are shown as
// data: URLs) and https: (a site logo from sys/config/site); fetches to the
// origin only; no frames, objects or base rewriting; forms post only to
// the origin.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

// Cache-Control values.
const (
	Immutable = "public, max-age=31536000, immutable"
	NoCache   = "no-cache"
)

type file struct {
	body  []byte
	ctype string
	cache string
}

// Handler is the middleware serving files (fsys: index.html at its root).
// It fails when fsys has no index.html.
func Handler(fsys fs.FS) (fiber.Handler, error) {
	files := map[string]file{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		cache := NoCache
		if strings.HasPrefix(p, "assets/") {
			cache = Immutable
		}
		files["/"+p] = file{body: body, ctype: ctype, cache: cache}
		return nil
	})
	if err != nil {
		return nil, err
	}
	index, ok := files["/index.html"]
	if !ok {
		return nil, fs.ErrNotExist
	}
	index.cache = NoCache
	files["/index.html"] = index
	return func(c fiber.Ctx) error {
		m := c.Method()
		if m != fiber.MethodGet && m != fiber.MethodHead {
			return c.Next()
		}
		p := c.Path()
		f, ok := files[p]
		if !ok {
			if !Fallback(p) {
				return c.Next()
			}
			f = index
		}
		h := &c.Response().Header
		h.Set(fiber.HeaderContentSecurityPolicy, CSP)
		h.Set(fiber.HeaderCacheControl, f.cache)
		h.Set(fiber.HeaderContentType, f.ctype)
		return c.Send(f.body)
	}, nil
}

// reserved are the path prefixes of the kernel itself: never the console.
var reserved = []string{"/api", "/health", "/openapi", "/swagger", "/hub", "/console-ext/"}

// Fallback reports whether a GET of p that matches no file is a page of
// the app (answered with index.html).
func Fallback(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	lower := strings.ToLower(p)
	for _, r := range reserved {
		if strings.HasPrefix(lower, r) {
			return false
		}
	}
	if strings.HasPrefix(lower, "/assets/") {
		return false // a missing hashed file is a 404, not a page
	}
	return !strings.Contains(path.Base(p), ".")
}
