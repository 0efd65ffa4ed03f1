//go:build !unit

package configcenter_test

import (
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/kerneltest"
	settings "github.com/adminkernel/kernel/host/sysconfig"
)

type schemaEntry struct {
	Key         string   `json:"key"`
	Kind        string   `json:"kind"`
	Min         *int64   `json:"min"`
	Max         *int64   `json:"max"`
	Values      []string `json:"values"`
	MaxLen      int      `json:"maxLen"`
	Optional    bool     `json:"optional"`
	Default     string   `json:"default"`
	Group       string   `json:"group"`
	Expected    string   `json:"expected"`
	Description string   `json:"description"`
}

// TestSchema: GET /sys/config/schema is the settings registry as data —
// the kinds, ranges and enum values the config center validates writes
// against (the console's typed editors), a consumer module's keys
// included; it is gated by the config page's query code.
func TestSchema(t *testing.T) {
	k := kerneltest.Start(t, nil, host.Module{Name: "Biz", Settings: []settings.Entry{
		{Key: "biz.mode", Kind: settings.KindEnum, Values: []string{"a", "b"}, Default: "a", Area: "biz", Description: "biz mode"},
	}})
	var got []schemaEntry
	k.Do("GET", base+"/schema", k.Admin(), nil).Expect(t, "schema", 200, 0).Decode(t, &got)
	byKey := map[string]schemaEntry{}
	for i, e := range got {
		byKey[e.Key] = e
		if i > 0 && (got[i-1].Group > e.Group || got[i-1].Group == e.Group && got[i-1].Key >= e.Key) {
			t.Errorf("not sorted by group, then key: %s/%s before %s/%s", got[i-1].Group, got[i-1].Key, e.Group, e.Key)
		}
	}
	i64 := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	tests := []struct {
		key, kind, group, def string
		min, max              int64
		values                int
		maxLen                int
		optional              bool
	}{
		{"sys.security.session.accessMinutes", "int", "security", "120", 1, 1440, 0, 0, false},
		{"sys.security.captcha.enabled", "bool", "security", "false", -1, -1, 0, 0, false},
		{"sys.site.title", "string", "sys", "AdminKernel", -1, -1, 0, 128, false},
		{"sys.site.logo", "url", "sys", "", -1, -1, 0, 2048, false},
		{"sys.externalauth.*.provisioning", "enum", "externalauth", "deny", -1, -1, 2, 0, false},
		{"sys.externalauth.*.defaultRoleIds", "idList", "externalauth", "", -1, -1, 0, 0, false},
		{"sys.externalauth.*.defaultOrgId", "int", "externalauth", "", 1, 1<<53 - 1, 0, 0, true},
		{"sys.upload.maxSizeMb", "int", "upload", "20", 1, 10240, 0, 0, false},
		{"sys.job.logRetentionDays", "int", "job", "30", 1, 3650, 0, 0, false},
		{"biz.mode", "enum", "biz", "a", -1, -1, 2, 0, false},
	}
	for _, tt := range tests {
		e, ok := byKey[tt.key]
		if !ok {
			t.Errorf("%s missing from the schema", tt.key)
			continue
		}
		if e.Kind != tt.kind || e.Group != tt.group || e.Default != tt.def || i64(e.Min) != tt.min || i64(e.Max) != tt.max ||
			len(e.Values) != tt.values || e.MaxLen != tt.maxLen || e.Optional != tt.optional || e.Expected == "" || e.Description == "" {
			t.Errorf("%s = %+v", tt.key, e)
		}
	}
	if e := byKey["sys.security.captcha.type"]; len(e.Values) != 3 {
		t.Errorf("sys.security.captcha.type offers %v, want char, path and math", e.Values)
	}

	// The page's query code grants it; no token or no code is refused.
	k.User("reader", "Reader#Pass1", "GET:/api/v1/sys/config/schema")
	reader := k.Login("reader", "Reader#Pass1").AccessToken
	k.Do("GET", base+"/schema", reader, nil).Expect(t, "granted schema", 200, 0)
	k.User("nobody", "Nobody#Pass1", "GET:/api/v1/sys/config/page")
	nobody := k.Login("nobody", "Nobody#Pass1").AccessToken
	k.Do("GET", base+"/schema", nobody, nil).Expect(t, "schema without its code", 403, 41001)
	k.Do("GET", base+"/schema", "", nil).Expect(t, "schema without a token", 401, 40006)
}
