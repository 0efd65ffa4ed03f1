package errcode

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

//go:embed locales/*.json
var localeFS embed.FS

// Languages lists the language packs shipped with the kernel.
var Languages = []string{"en-US", "zh-CN"}

// LanguagePack returns the frontend texts of one language pack, keyed by
// msgKey. The packs live in host/errcode/locales/<lang>.json.
func LanguagePack(lang string) (map[string]string, error) {
	b, err := localeFS.ReadFile(path.Join("locales", lang+".json"))
	if err != nil {
		return nil, fmt.Errorf("language pack %q: %w", lang, err)
	}
	pack := make(map[string]string)
	if err := json.Unmarshal(b, &pack); err != nil {
		return nil, fmt.Errorf("language pack %q: %w", lang, err)
	}
	return pack, nil
}

// MissingTexts returns, per language pack, the msgKeys of the catalog that
// the pack has no text for. Consumers call it in a test for their own packs
// merged with the kernel's.
func (c *Catalog) MissingTexts(packs map[string]map[string]string) map[string][]string {
	missing := make(map[string][]string)
	for lang, pack := range packs {
		for _, e := range c.entries {
			if strings.TrimSpace(pack[e.MsgKey]) == "" {
				missing[lang] = append(missing[lang], e.MsgKey)
			}
		}
	}
	return missing
}
