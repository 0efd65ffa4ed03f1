package seed

import (
	"testing"

	"github.com/adminkernel/kernel/host/sysconfig"
)

// TestSeededConfigsMatchTheRegistry: every seeded key is a registered key
// of a built area, seeded with the registry's default; every registered
// key of a built area is seeded (families — per provider code — are not
// required to be).
func TestSeededConfigsMatchTheRegistry(t *testing.T) {
	reg, err := sysconfig.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	seeded := map[string]bool{}
	ids := map[int64]string{}
	for _, c := range configs {
		if seeded[c.key] {
			t.Errorf("%s is seeded twice", c.key)
		}
		seeded[c.key] = true
		if prev, dup := ids[c.id]; dup {
			t.Errorf("id %d is used by %s and %s", c.id, prev, c.key)
		}
		ids[c.id] = c.key
		e, ok := reg.Lookup(c.key)
		switch {
		case !ok:
			t.Errorf("seeded key %s is not in the registry", c.key)
		case c.value != e.Default:
			t.Errorf("seeded %s = %q, the registry's default is %q", c.key, c.value, e.Default)
		case c.group != e.Area:
			t.Errorf("seeded %s in group %q, the registry's area is %q", c.key, c.group, e.Area)
		}
	}
	for _, e := range reg.Entries() {
		if e.IsFamily() {
			continue
		}
		if !seeded[e.Key] {
			t.Errorf("registered key %s (area %s) is not seeded", e.Key, e.Area)
		}
	}
}
