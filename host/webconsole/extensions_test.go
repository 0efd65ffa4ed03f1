package webconsole_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/webconsole"
)

func shopConsole() *module.Console {
	return &module.Console{
		Assets: fstest.MapFS{
			"dashboard.js":          {Data: []byte("export default {}")},
			"dashboard.css":         {Data: []byte(".x{}")},
			"logo.svg":              {Data: []byte("<svg/>")},
			"img/box.png":           {Data: []byte("\x89PNG")},
			"assets/chunk-abc12.js": {Data: []byte("export const a = 1")},
		},
		Pages:      map[string]string{"shop/dashboard/index": "dashboard.js"},
		Texts:      map[string]map[string]string{"en-US": {"shop.title": "Shop"}, "zh-CN": {"shop.title": "商店"}},
		MenuTitles: map[string]map[string]string{"en-US": {"/shop/dashboard": "Dashboard"}},
	}
}

func extApp(t *testing.T) *fiber.App {
	t.Helper()
	s, err := webconsole.NewService([]webconsole.Source{{Module: "Shop", Console: shopConsole()}})
	if err != nil {
		t.Fatal(err)
	}
	a := fiber.New()
	a.Use(s.Assets())
	a.Use(func(c fiber.Ctx) error { return c.Status(http.StatusNotFound).SendString("next") })
	return a
}

func TestExtensionAssets(t *testing.T) {
	a := extApp(t)
	cases := []struct {
		name, method, path string
		status             int
		body, cache, ctype string
	}{
		{"a page module", "GET", "/console-ext/shop/dashboard.js", 200, "export default {}", webconsole.NoCache, "text/javascript; charset=utf-8"},
		{"HEAD of a page module", "HEAD", "/console-ext/shop/dashboard.js", 200, "", webconsole.NoCache, "text/javascript; charset=utf-8"},
		{"a stylesheet", "GET", "/console-ext/shop/dashboard.css", 200, ".x{}", webconsole.NoCache, "text/css; charset=utf-8"},
		{"an svg", "GET", "/console-ext/shop/logo.svg", 200, "<svg/>", webconsole.NoCache, "image/svg+xml"},
		{"a png in a folder", "GET", "/console-ext/shop/img/box.png", 200, "\x89PNG", webconsole.NoCache, "image/png"},
		{"a hashed chunk is immutable", "GET", "/console-ext/shop/assets/chunk-abc12.js", 200, "export const a = 1", webconsole.Immutable, "text/javascript; charset=utf-8"},
		{"a missing file passes on", "GET", "/console-ext/shop/nothing.js", 404, "next", "", ""},
		{"the module's folder is no listing", "GET", "/console-ext/shop/", 404, "next", "", ""},
		{"a subfolder is no listing", "GET", "/console-ext/shop/img", 404, "next", "", ""},
		{"the module name is lower case", "GET", "/console-ext/Shop/dashboard.js", 404, "next", "", ""},
		{"an unknown module", "GET", "/console-ext/other/dashboard.js", 404, "next", "", ""},
		{"traversal", "GET", "/console-ext/shop/../../etc/passwd", 404, "next", "", ""},
		{"encoded traversal", "GET", "/console-ext/shop/%2e%2e/%2e%2e/go.mod", 404, "next", "", ""},
		{"traversal to another module's file", "GET", "/console-ext/other/../shop/x/../../../host.go", 404, "next", "", ""},
		{"other methods pass on", "POST", "/console-ext/shop/dashboard.js", 404, "next", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := a.Test(httptest.NewRequestWithContext(t.Context(), tc.method, tc.path, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || string(b) != tc.body {
				t.Fatalf("%s %s = %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, b, tc.status, tc.body)
			}
			if tc.status != 200 {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type = %q, want %q", got, tc.ctype)
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control = %q, want %q", got, tc.cache)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Security-Policy") != webconsole.CSP {
				t.Errorf("headers = %v", resp.Header)
			}
		})
	}
}

func TestExtensionListing(t *testing.T) {
	s, err := webconsole.NewService([]webconsole.Source{{Module: "Audit"}, {Module: "Shop", Console: shopConsole()}})
	if err != nil {
		t.Fatal(err)
	}
	l := s.List()
	if l.Kit != webconsole.KitVersion || len(l.Modules) != 1 {
		t.Fatalf("list = %+v", l)
	}
	e := l.Modules[0]
	if e.Module != "Shop" || e.Pages["shop/dashboard/index"] != "/console-ext/shop/dashboard.js" || e.Texts["zh-CN"]["shop.title"] != "商店" ||
		e.MenuTitles["en-US"]["/shop/dashboard"] != "Dashboard" || e.MenuTitles["zh-CN"] != nil {
		t.Fatalf("extension = %+v", e)
	}
}

func TestExtensionChecks(t *testing.T) {
	withPages := func(pages map[string]string) *module.Console {
		c := shopConsole()
		c.Pages = pages
		return c
	}
	cases := []struct {
		name string
		srcs []webconsole.Source
		want string
	}{
		{"one component, two modules", []webconsole.Source{{Module: "Shop", Console: shopConsole()}, {Module: "Audit"}, {Module: "Sales", Console: shopConsole()}},
			`the modules Shop and Sales both give a console page for the menu component "shop/dashboard/index"`},
		{"a missing page file", []webconsole.Source{{Module: "Shop", Console: withPages(map[string]string{"shop/x/index": "x.js"})}},
			`module Shop: Console.Pages["shop/x/index"] = "x.js": no such file in Console.Assets`},
		{"a folder as the page", []webconsole.Source{{Module: "Shop", Console: withPages(map[string]string{"shop/x/index": "img"})}},
			`module Shop: Console.Pages["shop/x/index"] = "img": no such file in Console.Assets`},
		{"a path outside", []webconsole.Source{{Module: "Shop", Console: withPages(map[string]string{"shop/x/index": "../x.js"})}},
			`module Shop: Console.Pages["shop/x/index"] = "../x.js" is not a clean relative path inside Assets`},
		{"an absolute path", []webconsole.Source{{Module: "Shop", Console: withPages(map[string]string{"shop/x/index": "/dashboard.js"})}},
			`is not a clean relative path inside Assets`},
		{"an empty component", []webconsole.Source{{Module: "Shop", Console: withPages(map[string]string{" ": "dashboard.js"})}},
			`module Shop: Console.Pages has an empty menu component`},
		{"pages without assets", []webconsole.Source{{Module: "Shop", Console: &module.Console{Pages: map[string]string{"a": "a.js"}}}},
			`module Shop: Console.Pages without Console.Assets`},
		{"an unknown language", []webconsole.Source{{Module: "Shop", Console: &module.Console{Texts: map[string]map[string]string{"fr-FR": {}}}}},
			`module Shop: Console.Texts has the language "fr-FR"`},
		{"a name that is no URL segment", []webconsole.Source{{Module: "My Shop", Console: &module.Console{}}},
			`a module with a console needs a name of letters`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := webconsole.Check(tc.srcs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want %q", err, tc.want)
			}
			if _, err := webconsole.NewService(tc.srcs); err == nil {
				t.Fatal("NewService accepted what Check refuses")
			}
		})
	}
	if err := webconsole.Check([]webconsole.Source{{Module: "Shop", Console: shopConsole()}, {Module: "Audit"}}); err != nil {
		t.Fatal(err)
	}
}
