package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// unknownKey is a key a settings source gave below Service, Api or Logging
// that is not a setting: a misspelling, or a setting at the wrong level.
// Load drops it and remembers it; Validate reports it.
type unknownKey struct {
	// path is the key as written, its parents in their canonical spelling:
	// Service:Http:ListenAdress.
	path []string
	// source is the file (appsettings.json, ...) or "environment".
	source string
	// suggest are the settings it most likely means (may be empty).
	suggest []string
}

// section is the top-level section the key is in (Service, Api, Logging).
func (u unknownKey) section() string { return u.path[0] }

// message is what Validate reports: "Service:Http:ListenAdress (from
// appsettings.json) is not a setting; did you mean
// Service:Http:ListenAddress?".
func (u unknownKey) message() string {
	msg := fmt.Sprintf("%s (from %s) is not a setting", strings.Join(u.path, ":"), u.source)
	switch len(u.suggest) {
	case 0:
		return msg + "; it is ignored"
	case 1:
		return msg + "; did you mean " + u.suggest[0] + "?"
	}
	last := len(u.suggest) - 1
	return msg + "; did you mean " + strings.Join(u.suggest[:last], ", ") + " or " + u.suggest[last] + "?"
}

// record remembers the unknown key below the struct or array at path.
// Unknown top-level keys of the files are not recorded: a settings file
// may carry sections for other programs (environment variables outside
// the sections never reach here, see envKey).
func (m *merger) record(path []string, key string) {
	if len(path) == 0 {
		return
	}
	full := append(slices.Clone(path), key)
	m.unknown = append(m.unknown, unknownKey{path: full, source: m.source, suggest: suggestions(full)})
}

// setting is one path of the typed tree; array elements are "*".
type setting struct {
	path []string
}

// settingPaths lists every path of the typed tree, struct-valued and
// map-valued settings included (their contents are not settings names),
// array elements as "*".
var settingPaths = func() []setting {
	var out []setting
	var walk func(t reflect.Type, path []string)
	walk = func(t reflect.Type, path []string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			if t == secretType {
				return
			}
			for i := range t.NumField() {
				f := t.Field(i)
				name := settingName(f)
				if name == "" {
					continue
				}
				p := append(slices.Clone(path), name)
				out = append(out, setting{path: p})
				walk(f.Type, p)
			}
		case reflect.Slice:
			walk(t.Elem(), append(slices.Clone(path), "*"))
		}
	}
	walk(configType, nil)
	return out
}()

// suggestions names the settings an unknown key most likely means: those
// whose last name is closest by edit distance (ignoring case; at most 1
// edit for names up to 4 characters, 2 up to 8, 3 beyond), the ones
// sharing the longest leading path with the key first. Ties are all
// returned (at most three).
func suggestions(unknown []string) []string {
	leaf := strings.ToLower(unknown[len(unknown)-1])
	limit := 3
	switch n := len([]rune(leaf)); {
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	type candidate struct {
		path   []string
		dist   int
		shared int
	}
	var best []candidate
	for _, s := range settingPaths {
		if s.path[0] != unknown[0] && !strings.EqualFold(s.path[0], unknown[0]) {
			continue // suggest within the section the key was given in
		}
		d := editDistance(leaf, strings.ToLower(s.path[len(s.path)-1]))
		if d > limit {
			continue
		}
		c := candidate{path: concrete(s.path, unknown), dist: d, shared: sharedPrefix(s.path, unknown)}
		switch {
		case len(best) == 0 || c.dist < best[0].dist || (c.dist == best[0].dist && c.shared > best[0].shared):
			best = []candidate{c}
		case c.dist == best[0].dist && c.shared == best[0].shared:
			best = append(best, c)
		}
	}
	if len(best) > 3 {
		best = best[:3]
	}
	out := make([]string, 0, len(best))
	for _, c := range best {
		out = append(out, strings.Join(c.path, ":"))
	}
	return out
}

// concrete writes the array indexes ("*") of a setting's path: those of
// the unknown key where its path has an index at that level, else 0.
func concrete(path, unknown []string) []string {
	out := slices.Clone(path)
	for i, p := range out {
		if p != "*" {
			continue
		}
		out[i] = "0"
		if i < len(unknown) {
			if _, err := strconv.Atoi(unknown[i]); err == nil {
				out[i] = unknown[i]
			}
		}
	}
	return out
}

// sharedPrefix counts the leading levels of the setting's parent path
// that the unknown key's parent path shares ("*" matches an index).
func sharedPrefix(path, unknown []string) int {
	n := 0
	for i := 0; i < len(path)-1 && i < len(unknown)-1; i++ {
		if path[i] == "*" {
			if _, err := strconv.Atoi(unknown[i]); err != nil {
				break
			}
		} else if !strings.EqualFold(path[i], unknown[i]) {
			break
		}
		n++
	}
	return n
}

// editDistance is the Levenshtein distance of a and b (in runes).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// unknownProblems reports the unknown keys of the given sections: as
// problems in Production, else (Development, Staging) left to Warnings.
func (c *Config) unknownProblems(p *problems, sections ...string) {
	if !c.IsProduction() {
		return
	}
	for _, u := range c.unknown {
		if slices.Contains(sections, u.section()) {
			p.add("%s", u.message())
		}
	}
}
