package configcenter

import (
	"cmp"
	"slices"
	"strings"

	"github.com/adminkernel/kernel/host/sysconfig"
)

// SchemaEntry describes one config key the kernel (or a consumer module)
// reads, for the console's typed editors (GET /sys/config/schema). It is
// the settings registry (host/sysconfig) as data: the config center
// validates every write against the same entries (43012, 43013).
type SchemaEntry struct {
	// Key is the config key, or a family pattern with one "*" segment
	// standing for a code of [A-Za-z0-9_-]{1,64}
	// ("sys.externalauth.*.enabled").
	Key string `json:"key"`
	// Kind is one of string, bool, int, enum, url, idList.
	Kind string `json:"kind"`
	// Min and Max bound an int.
	Min *int64 `json:"min,omitempty"`
	Max *int64 `json:"max,omitempty"`
	// Values are an enum's values.
	Values []string `json:"values,omitempty"`
	// MaxLen bounds a string or url in characters (0: none).
	MaxLen int `json:"maxLen"`
	// Optional: an int may be blank.
	Optional bool `json:"optional"`
	// Default is what readers get when the key is missing or blank.
	Default string `json:"default"`
	// Group is the config group of the key's seeded row.
	Group string `json:"group"`
	// Expected describes the accepted values (43012's "expected" argument).
	Expected    string `json:"expected"`
	Description string `json:"description"`
}

var kindNames = map[sysconfig.Kind]string{
	sysconfig.KindString: "string",
	sysconfig.KindBool:   "bool",
	sysconfig.KindInt:    "int",
	sysconfig.KindEnum:   "enum",
	sysconfig.KindURL:    "url",
	sysconfig.KindIDList: "idList",
}

// schema lists the registry's writable entries (planned areas, which the
// config center refuses, are left out), sorted by group, then key.
func schema(reg *sysconfig.Registry) []SchemaEntry {
	out := []SchemaEntry{}
	if reg == nil {
		return out
	}
	for _, e := range reg.Entries() {
		s := SchemaEntry{
			Key: e.Key, Kind: kindNames[e.Kind], MaxLen: e.MaxLen, Optional: e.Optional,
			Default: e.Default, Group: e.Area, Expected: e.Expected(), Description: e.Description,
			Values: e.Values,
		}
		if e.Kind == sysconfig.KindInt {
			minV, maxV := e.Min, e.Max
			s.Min, s.Max = &minV, &maxV
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b SchemaEntry) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Key, b.Key))
	})
	return out
}
