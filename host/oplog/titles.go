package oplog

import (
	"strings"
	"sync"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
)

// TitleKeyPrefix starts the msgKey of an operation-log title: "op." plus
// the route's permission code, e.g. "op.POST:/api/v1/sys/user". A kernel
// route whose key has a text in the language packs is logged under its key
// (so the log shows one language, whatever the reader's); any other route
// (a consumer's without texts in the kernel's packs) under its title.
const TitleKeyPrefix = "op."

// TitleKey is the msgKey of r's operation-log title.
func TitleKey(r route.Route) string { return TitleKeyPrefix + r.PermissionCode() }

// titlePacks are the kernel's language packs, read once.
var titlePacks = sync.OnceValue(func() map[string]map[string]string {
	packs := make(map[string]map[string]string, len(errcode.Languages))
	for _, lang := range errcode.Languages {
		if p, err := errcode.LanguagePack(lang); err == nil {
			packs[lang] = p
		}
	}
	return packs
})

// storedTitle is what a row of r records as its title: the title key when
// the packs have a text for it, else the route's title, else
// "METHOD template".
func storedTitle(r route.Route) string {
	if key := TitleKey(r); titlePacks()["en-US"][key] != "" {
		return key
	}
	if r.Title != "" {
		return r.Title
	}
	return r.Method + " " + r.Path
}

// displayTitle is the title of a stored row in lang and, when the row was
// logged under a title key, that key.
func displayTitle(stored, lang string) (string, *string) {
	if !strings.HasPrefix(stored, TitleKeyPrefix) {
		return stored, nil
	}
	packs := titlePacks()
	text := packs[lang][stored]
	if text == "" {
		text = packs["en-US"][stored]
	}
	if text == "" {
		return stored, nil
	}
	key := stored
	return text, &key
}

// titleKeysMatching lists the title keys whose text in any language pack
// contains s, case-insensitively (the Title filter finds rows logged under
// a key by the words people read).
func titleKeysMatching(s string) []string {
	s = strings.ToLower(s)
	seen := map[string]bool{}
	var keys []string
	for _, pack := range titlePacks() {
		for k, v := range pack {
			if strings.HasPrefix(k, TitleKeyPrefix) && !seen[k] && strings.Contains(strings.ToLower(v), s) {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}
