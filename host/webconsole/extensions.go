package webconsole

import (
	"fmt"
	"io/fs"
	"maps"
	"mime"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// KitVersion is the version of the console kit (/console-kit/kit.js) the
// console offers to the pages modules ship; a module's page built against
// kit 1.x runs on any console whose kit is 1.y with y >= x
// (docs/developers/frontend.md "Pages shipped by a module").
const KitVersion = "1.1"

// ExtPrefix is where the files of the modules' consoles are served:
// ExtPrefix + <module name, lower case> + "/" + <path inside Assets>.
const ExtPrefix = "/console-ext/"

// Source is one module's console (module.Module.Console).
type Source struct {
	Module  string
	Console *module.Console
}

// Extension is one module's entry of the extensions answer.
type Extension struct {
	Module string `json:"module"`
	// Pages maps a menu component to the URL of its ES module.
	Pages map[string]string `json:"pages"`
	// Texts: language → key → text.
	Texts map[string]map[string]string `json:"texts"`
	// MenuTitles: language → menu path → title.
	MenuTitles map[string]map[string]string `json:"menuTitles"`
}

// Extensions is the answer of GET /api/v1/sys/console/extensions.
type Extensions struct {
	Kit     string      `json:"kit"`
	Modules []Extension `json:"modules"`
}

// moduleSegment is what a module name with a console may be: one URL
// segment without escaping.
var moduleSegment = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Check validates the modules' consoles together: each one's own checks
// (module.Console.Check), a name usable as a URL segment, and no menu
// component given a page by two modules (the message names both).
func Check(srcs []Source) error {
	owner := map[string]string{}
	for _, s := range srcs {
		if s.Console == nil {
			continue
		}
		if !moduleSegment.MatchString(s.Module) {
			return fmt.Errorf("module %q: a module with a console needs a name of letters, digits, '.', '_' or '-' (it is a URL segment)", s.Module)
		}
		if err := s.Console.Check(s.Module); err != nil {
			return err
		}
		for _, comp := range slices.Sorted(maps.Keys(s.Console.Pages)) {
			if prev, dup := owner[comp]; dup {
				return fmt.Errorf("the modules %s and %s both give a console page for the menu component %q", prev, s.Module, comp)
			}
			owner[comp] = s.Module
		}
	}
	return nil
}

// Service holds the modules' console files (read once) and their listing.
type Service struct {
	list  Extensions
	files map[string]file
}

// NewService checks srcs (Check) and reads every file of their Assets.
func NewService(srcs []Source) (*Service, error) {
	if err := Check(srcs); err != nil {
		return nil, err
	}
	s := &Service{list: Extensions{Kit: KitVersion, Modules: []Extension{}}, files: map[string]file{}}
	for _, src := range srcs {
		c := src.Console
		if c == nil {
			continue
		}
		base := ExtPrefix + strings.ToLower(src.Module) + "/"
		if c.Assets != nil {
			err := fs.WalkDir(c.Assets, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				body, err := fs.ReadFile(c.Assets, p)
				if err != nil {
					return err
				}
				cache := NoCache
				if strings.HasPrefix(p, "assets/") {
					cache = Immutable
				}
				s.files[base+p] = file{body: body, ctype: contentType(p), cache: cache}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("module %s: Console.Assets: %w", src.Module, err)
			}
		}
		e := Extension{Module: src.Module, Pages: map[string]string{}, Texts: nonNil(c.Texts), MenuTitles: nonNil(c.MenuTitles)}
		for comp, p := range c.Pages {
			e.Pages[comp] = base + p
		}
		s.list.Modules = append(s.list.Modules, e)
	}
	return s, nil
}

func nonNil(m map[string]map[string]string) map[string]map[string]string {
	if m == nil {
		return map[string]map[string]string{}
	}
	return m
}

// contentTypes fix the types of the usual files of a build (the system's
// mime tables vary: some map .js to application/x-javascript).
var contentTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".mjs":   "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".json":  "application/json",
	".map":   "application/json",
	".woff2": "font/woff2",
}

func contentType(p string) string {
	ext := strings.ToLower(path.Ext(p))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// List is the extensions answer.
func (s *Service) List() Extensions { return s.list }

// Assets is the middleware serving the modules' files (GET and HEAD under
// ExtPrefix) from memory, with the console's CSP and cache rules and
// X-Content-Type-Options: nosniff. Only files are answered — no directory
// listing, and a path is looked up as it is, so ".." reaches nothing —;
// anything else passes on (a missing file ends in the 404 envelope).
func (s *Service) Assets() fiber.Handler {
	return func(c fiber.Ctx) error {
		m := c.Method()
		if m != fiber.MethodGet && m != fiber.MethodHead {
			return c.Next()
		}
		f, ok := s.files[c.Path()]
		if !ok {
			return c.Next()
		}
		h := &c.Response().Header
		h.Set(fiber.HeaderContentSecurityPolicy, CSP)
		h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		h.Set(fiber.HeaderCacheControl, f.cache)
		h.Set(fiber.HeaderContentType, f.ctype)
		return c.Send(f.body)
	}
}

// Routes registers GET /sys/console/extensions (signed in) on api.
func (s *Service) Routes(api *route.Group) {
	api.Group("/sys/console").Get("/extensions", route.Session, s.extensions).
		Doc("Console pages shipped by modules", nil, Extensions{})
}

func (s *Service) extensions(c fiber.Ctx) error {
	return envelope.OK(c, s.List())
}
