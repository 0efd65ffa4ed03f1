package inventory_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/examples/inventory"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/webconsole"
)

// The module ships its stock dashboard to the console: listed by the
// extensions endpoint with its texts and menu titles, its built ES module
// served under /console-ext/inventory/, and the list it reads gated by the
// permission of its menu button.
func TestConsolePage(t *testing.T) {
	k := kerneltest.Start(t, nil, inventory.Module())
	admin := k.Admin()
	var ext webconsole.Extensions
	k.Do("GET", "/api/v1/sys/console/extensions", admin, nil).Expect(t, "the extensions", 200, 0).Decode(t, &ext)
	if len(ext.Modules) != 1 || ext.Modules[0].Module != "Inventory" {
		t.Fatalf("extensions = %+v", ext)
	}
	e := ext.Modules[0]
	url := e.Pages[inventory.ComponentDashboard]
	if url != "/console-ext/inventory/dashboard.js" {
		t.Fatalf("page URL = %q", url)
	}
	for _, lang := range []string{"en-US", "zh-CN"} {
		if e.Texts[lang]["inventory.dashboard.title"] == "" || e.MenuTitles[lang]["/inventory/dashboard"] == "" || len(e.Texts[lang]) != len(e.Texts["en-US"]) {
			t.Fatalf("%s texts or titles missing: %v %v", lang, e.Texts[lang], e.MenuTitles[lang])
		}
	}

	resp, err := k.App().Test(httptest.NewRequestWithContext(t.Context(), "GET", url, nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("GET %s = %d %v", url, resp.StatusCode, resp.Header)
	}
	// Built against the kit: Vue, Element Plus and the kit from its URLs.
	for _, imp := range []string{`from "/console-kit/vue.js"`, `from "/console-kit/element-plus.js"`, `from "/console-kit/kit.js"`} {
		if !strings.Contains(string(body), imp) {
			t.Fatalf("the page does not import %s", imp)
		}
	}

	var items []struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Stock int    `json:"stock"`
	}
	k.Do("GET", "/api/v1/inventory/items", admin, nil).Expect(t, "the stock list", 200, 0).Decode(t, &items)
	if len(items) != 3 || items[0].Name != "Widget" || items[0].Stock != 12 {
		t.Fatalf("items = %+v", items)
	}
	k.User("clerk", "Clerk-pass-1")
	clerk := k.Login("clerk", "Clerk-pass-1").AccessToken
	k.Do("GET", "/api/v1/inventory/items", clerk, nil).Expect(t, "the list without its permission", 403, 41001)
	k.User("viewer", "Viewer-pass-1", "GET:/api/v1/inventory/items")
	k.Do("GET", "/api/v1/inventory/items", k.Login("viewer", "Viewer-pass-1").AccessToken, nil).Expect(t, "the list with its permission", 200, 0)
}
