package module

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// ConsoleLanguages are the languages of Console.Texts and Console.MenuTitles
// (the console's).
var ConsoleLanguages = []string{"en-US", "zh-CN"}

// Console is what a module ships to the web console: pages the console
// loads at run time (no console rebuild), their texts and the translations
// of the module's menu titles. The kernel serves Assets at
// /console-ext/<module name, lower case>/<path> and lists the module at
// GET /api/v1/sys/console/extensions (host/webconsole; the pages use the
// console kit, docs/developers/frontend.md "Pages shipped by a module").
type Console struct {
	// Assets are the module's built files (an embed.FS of its dist/ folder,
	// fs.Sub'd to it): ES modules, stylesheets, images.
	Assets fs.FS
	// Pages maps a menu component (seed.Menu.Component of one of the
	// module's menu entries, e.g. "inventory/dashboard/index") to the path
	// inside Assets of an ES module whose default export is the page's Vue
	// component.
	Pages map[string]string
	// Texts are the module's UI texts by language ("en-US", "zh-CN") and
	// key, merged into the console's texts for the kit's useI18n/t (a key
	// the console already has keeps the console's text).
	Texts map[string]map[string]string
	// MenuTitles translate the module's seeded menu titles: by language,
	// then menu path (seed.Menu.Path, or the component for an entry
	// without one) to the title shown in that language.
	MenuTitles map[string]map[string]string
}

// Check validates the console of module name: every page file exists in
// Assets as a clean relative path, components are non-empty, and the
// languages are the console's.
func (c *Console) Check(name string) error {
	if c == nil {
		return nil
	}
	if len(c.Pages) > 0 && c.Assets == nil {
		return fmt.Errorf("module %s: Console.Pages without Console.Assets", name)
	}
	for _, comp := range slices.Sorted(maps.Keys(c.Pages)) {
		file := c.Pages[comp]
		if strings.TrimSpace(comp) == "" {
			return fmt.Errorf("module %s: Console.Pages has an empty menu component", name)
		}
		if !fs.ValidPath(file) || file == "." || path.Clean(file) != file {
			return fmt.Errorf("module %s: Console.Pages[%q] = %q is not a clean relative path inside Assets", name, comp, file)
		}
		st, err := fs.Stat(c.Assets, file)
		if err != nil || st.IsDir() {
			return fmt.Errorf("module %s: Console.Pages[%q] = %q: no such file in Console.Assets", name, comp, file)
		}
	}
	for what, m := range map[string]map[string]map[string]string{"Texts": c.Texts, "MenuTitles": c.MenuTitles} {
		for lang := range m {
			if !isConsoleLanguage(lang) {
				return fmt.Errorf("module %s: Console.%s has the language %q (the console's are %s)", name, what, lang, strings.Join(ConsoleLanguages, ", "))
			}
		}
	}
	return nil
}

func isConsoleLanguage(l string) bool { return slices.Contains(ConsoleLanguages, l) }
