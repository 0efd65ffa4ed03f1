package oplog_test

import (
	"net/http/httptest"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/xuri/excelize/v2"

	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/oplog"
)

// TestEveryLoggedRouteHasATitleInBothLanguages: every route the operation
// log records has a title text under its key in both language packs, and
// the packs hold no title key of a route that no longer exists.
func TestEveryLoggedRouteHasATitleInBothLanguages(t *testing.T) {
	k := kerneltest.Start(t, nil)
	packs := map[string]map[string]string{}
	for _, lang := range errcode.Languages {
		p, err := errcode.LanguagePack(lang)
		if err != nil {
			t.Fatal(err)
		}
		packs[lang] = p
	}
	live := map[string]bool{}
	for _, r := range k.Routes() {
		if !oplog.Logged(r) {
			continue
		}
		key := oplog.TitleKey(r)
		live[key] = true
		for lang, p := range packs {
			if strings.TrimSpace(p[key]) == "" {
				t.Errorf("%s: no %s text for %q (%s)", lang, lang, key, r.Title)
			}
		}
	}
	if len(live) < 50 {
		t.Fatalf("only %d logged routes: is the route table complete?", len(live))
	}
	for lang, p := range packs {
		for key := range p {
			if strings.HasPrefix(key, oplog.TitleKeyPrefix) && !live[key] {
				t.Errorf("%s: %q names no logged route", lang, key)
			}
		}
	}
}

// TestTitlesInTheReadersLanguage: a kernel route is logged under its
// title key; the page answers the key and the text of the language the
// reader asks for, the Title filter finds the row by the words of either
// language, and the export carries the text.
func TestTitlesInTheReadersLanguage(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Logging__OpLog__Sync=true"})
	admin := k.Admin()
	k.Do("POST", "/api/v1/sys/cache/flush-dict", admin, nil).Expect(t, "flush", 200, 0)

	type item struct {
		Title    string  `json:"title"`
		TitleKey *string `json:"titleKey"`
		Path     string  `json:"path"`
	}
	page := func(lang, query string) []item {
		t.Helper()
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/api/v1/sys/log/op/page?Path=flush-dict&"+query, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		if lang != "" {
			req.Header.Set("Accept-Language", lang)
		}
		var p struct {
			Items []item `json:"items"`
		}
		k.Send(req).Expect(t, "page "+lang+" "+query, 200, 0).Decode(t, &p)
		return p.Items
	}
	const key = "op.POST:/api/v1/sys/cache/flush-dict"
	cases := []struct{ lang, query, want string }{
		{"en-US,en;q=0.9", "", "Clear the dictionary cache"},
		{"zh-CN,zh;q=0.9", "", "清空字典缓存"},
		{"", "", "清空字典缓存"},
		{"en", "Title=" + url.QueryEscape("字典缓存"), "Clear the dictionary cache"},
		{"en", "Title=" + url.QueryEscape("DICTIONARY cache"), "Clear the dictionary cache"},
	}
	for _, c := range cases {
		items := page(c.lang, c.query)
		if len(items) != 1 || items[0].Title != c.want || items[0].TitleKey == nil || *items[0].TitleKey != key {
			t.Errorf("%q %q: %+v", c.lang, c.query, items)
		}
	}
	if items := page("en", "Title=nothing-like-it"); len(items) != 0 {
		t.Errorf("Title filter matched %+v", items)
	}
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/api/v1/sys/log/op/export?Path=flush-dict&columns=Title,Path", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	f, err := excelize.OpenReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sheet, err := f.GetRows("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	if len(sheet) != 2 || sheet[1][0] != "清空字典缓存" {
		t.Errorf("export rows = %v", sheet)
	}
	rows := opRows(t, k)
	if len(rows) == 0 || rows[0].Title != key {
		t.Fatalf("stored title: %+v", rows)
	}
}
