//go:build !unit

package host_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/webconsole"
)

func shopModule(name string) host.Module {
	return host.Module{Name: name, Console: &module.Console{
		Assets:     fstest.MapFS{"dashboard.js": {Data: []byte("export default {}")}, "logo.svg": {Data: []byte("<svg/>")}},
		Pages:      map[string]string{"shop/dashboard/index": "dashboard.js"},
		Texts:      map[string]map[string]string{"en-US": {"shop.title": "Shop"}, "zh-CN": {"shop.title": "商店"}},
		MenuTitles: map[string]map[string]string{"en-US": {"/shop/dashboard": "Dashboard"}, "zh-CN": {"/shop/dashboard": "看板"}},
	}}
}

// A signed-in caller reads the modules' console pages; the files are
// served same-origin under /console-ext/<module>/.
func TestConsoleExtensions(t *testing.T) {
	k := kerneltest.Start(t, nil, shopModule("Shop"), host.Module{Name: "Audit"})
	k.Do("GET", "/api/v1/sys/console/extensions", "", nil).Expect(t, "the extensions anonymously", 401, 40006)
	var got webconsole.Extensions
	k.Do("GET", "/api/v1/sys/console/extensions", k.Admin(), nil).Expect(t, "the extensions", 200, 0).Decode(t, &got)
	if got.Kit != webconsole.KitVersion || len(got.Modules) != 1 {
		t.Fatalf("extensions = %+v", got)
	}
	e := got.Modules[0]
	if e.Module != "Shop" || e.Pages["shop/dashboard/index"] != "/console-ext/shop/dashboard.js" ||
		e.Texts["zh-CN"]["shop.title"] != "商店" || e.MenuTitles["en-US"]["/shop/dashboard"] != "Dashboard" {
		t.Fatalf("extension = %+v", e)
	}
	resp, body := rawGet(t, k, "GET", "/console-ext/shop/dashboard.js")
	if resp.StatusCode != 200 || body != "export default {}" || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != webconsole.NoCache {
		t.Fatalf("GET the page module = %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := rawGet(t, k, "GET", "/console-ext/shop/logo.svg"); resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("GET an svg = %v", resp.Header)
	}
	k.Do("GET", "/console-ext/shop/missing.js", "", nil).Expect(t, "a missing file", 404, 48003)
	k.Do("GET", "/console-ext/shop/", "", nil).Expect(t, "the module's folder", 404, 48003)
	k.Do("GET", "/console-ext/shop", "", nil).Expect(t, "the module's folder without its slash", 404, 48003)
	k.Do("GET", "/console-ext/shop/../../go.mod", "", nil).Expect(t, "traversal", 404, 48003)
	k.Do("GET", "/console-ext/shop/%2e%2e/%2e%2e/go.mod", "", nil).Expect(t, "encoded traversal", 404, 48003)
}

// A disabled module's pages are neither listed nor served; without the
// console there is no listing.
func TestConsoleExtensionsDisabled(t *testing.T) {
	k := kerneltest.Start(t, []string{"Api__DisabledModules__0=shop"}, shopModule("Shop"))
	var got webconsole.Extensions
	k.Do("GET", "/api/v1/sys/console/extensions", k.Admin(), nil).Expect(t, "the extensions", 200, 0).Decode(t, &got)
	if len(got.Modules) != 0 {
		t.Fatalf("extensions of a disabled module = %+v", got)
	}
	k.Do("GET", "/console-ext/shop/dashboard.js", "", nil).Expect(t, "a disabled module's file", 404, 48003)

	k2 := kerneltest.Start(t, []string{"Api__DisabledModules__0=Console"}, shopModule("Shop"))
	k2.Do("GET", "/api/v1/sys/console/extensions", k2.Admin(), nil).Expect(t, "the extensions without the console", 404, 48003)
	k2.Do("GET", "/console-ext/shop/dashboard.js", "", nil).Expect(t, "a file without the console", 404, 48003)
}

// Composition refuses one menu component given a page by two modules
// (naming both) and a page file missing from the module's assets.
func TestConsoleExtensionsRefused(t *testing.T) {
	missing := shopModule("Shop")
	missing.Console.Pages = map[string]string{"shop/dashboard/index": "nothing.js"}
	tests := []struct {
		name    string
		modules []host.Module
		want    string
	}{
		{"one component, two modules", []host.Module{shopModule("Shop"), {Name: "Audit"}, shopModule("Sales")},
			`the modules Shop and Sales both give a console page for the menu component "shop/dashboard/index"`},
		{"a missing page file", []host.Module{missing},
			`module Shop: Console.Pages["shop/dashboard/index"] = "nothing.js": no such file in Console.Assets`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := host.Options{Config: load(t, t.TempDir(), config.Development), Modules: tc.modules, LogOutput: io.Discard}
			if _, err := host.Catalog(opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Catalog error = %v, want %q", err, tc.want)
			}
			if _, err := host.New(context.Background(), opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error = %v, want %q", err, tc.want)
			}
		})
	}
}
