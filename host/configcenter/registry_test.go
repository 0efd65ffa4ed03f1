package configcenter_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kconfig "github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	settings "github.com/adminkernel/kernel/host/sysconfig"
)

const accessKey = "sys.security.session.accessMinutes"

// storedValue reads a live row's value straight from the database.
func storedValue(t *testing.T, k *kerneltest.Kernel, key string) *string {
	t.Helper()
	rows := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey(key), sysconfig.IsDelete(false)).AllX(context.Background())
	if len(rows) == 0 {
		return nil
	}
	return rows[0].ConfigValue
}

func expectRefused(t *testing.T, r kerneltest.Reply, what string, code errcode.Code, key string) {
	t.Helper()
	r.ExpectCode(t, what, code)
	if r.Args["key"] != key {
		t.Errorf("%s: args = %v, want key %s", what, r.Args, key)
	}
	if code == errcode.ConfigValueInvalid && r.Args["expected"] == nil {
		t.Errorf("%s: args = %v, want expected", what, r.Args)
	}
}

// TestOutOfRangeValueIsRefused: the example — an access lifetime
// of 99999999999 minutes — is refused by update, batch and create, and
// nothing is written; tokens keep their lifetime.
func TestOutOfRangeValueIsRefused(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	ctx := context.Background()
	row := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey(accessKey), sysconfig.IsDelete(false)).OnlyX(ctx)

	r := k.Do("PUT", fmt.Sprintf("%s/%d", base, row.ID), tok, map[string]any{"configValue": "99999999999", "name": row.Name, "groupCode": "security"})
	expectRefused(t, r, "update", errcode.ConfigValueInvalid, accessKey)
	if r.Args["expected"] != "integer 1..1440" {
		t.Errorf("expected = %v", r.Args["expected"])
	}
	expectRefused(t, k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": accessKey, "configValue": "99999999999"}}),
		"batch", errcode.ConfigValueInvalid, accessKey)
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, row.ID), tok, nil).Expect(t, "delete", 200, 0)
	expectRefused(t, k.Do("POST", base, tok, map[string]any{"configKey": accessKey, "configValue": "0", "name": "access"}),
		"create", errcode.ConfigValueInvalid, accessKey)
	if v := storedValue(t, k, accessKey); v != nil {
		t.Fatalf("a refused create wrote %s", *v)
	}
	// A valid value is accepted on every path.
	id := add(t, k, tok, map[string]any{"configKey": accessKey, "configValue": "30", "name": "access"})
	k.Do("PUT", fmt.Sprintf("%s/%d", base, id), tok, map[string]any{"configValue": "45", "name": "access"}).Expect(t, "update", 200, 0)
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": accessKey, "configValue": "60"}}).Expect(t, "batch", 200, 0)
	var out struct {
		ExpiresAt time.Time `json:"expiresAt"`
	}
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword}).
		Expect(t, "login", 200, 0).Decode(t, &out)
	if d := time.Until(out.ExpiresAt); d < 55*time.Minute || d > 61*time.Minute {
		t.Fatalf("access token expires in %v, want 60 minutes", d)
	}
}

// TestBatchIsAllOrNothing: one unknown sys.* key, or one invalid value,
// refuses the whole batch; nothing is written, valid entries included.
func TestBatchIsAllOrNothing(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	for _, tc := range []struct {
		name string
		bad  map[string]any
		code errcode.Code
		key  string
	}{
		{"unknown sys key", map[string]any{"configKey": "sys.security.session.idleMinutes", "configValue": "5"}, errcode.ConfigKeyUnknown, "sys.security.session.idleMinutes"},
		{"captcha type not offered", map[string]any{"configKey": "sys.security.captcha.type", "configValue": "slider"}, errcode.ConfigValueInvalid, "sys.security.captcha.type"},
		{"sys key in capitals", map[string]any{"configKey": "SYS.site.title", "configValue": "x"}, errcode.ConfigKeyUnknown, "SYS.site.title"},
		{"sys key the pattern refuses", map[string]any{"configKey": "sys.site.title!", "configValue": "x"}, errcode.ConfigKeyUnknown, "sys.site.title!"},
		{"invalid value", map[string]any{"configKey": "sys.security.rateLimit.windowSeconds", "configValue": "0"}, errcode.ConfigValueInvalid, "sys.security.rateLimit.windowSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []map[string]any{
				{"configKey": "sys.site.title", "configValue": "Changed"},
				{"configKey": "biz.free", "configValue": "x"},
				tc.bad,
				{"configKey": "sys.security.captcha.enabled", "configValue": "true"},
			}
			expectRefused(t, k.Do("PUT", base+"/batch", tok, body), "batch", tc.code, tc.key)
			if v := storedValue(t, k, "sys.site.title"); deref(v) != "AdminKernel" {
				t.Errorf("title = %s after a refused batch", deref(v))
			}
			if v := storedValue(t, k, "sys.security.captcha.enabled"); deref(v) != "false" {
				t.Errorf("captcha = %s after a refused batch", deref(v))
			}
			if getSite(t, k).CaptchaEnabled {
				t.Error("the site info sees a refused batch")
			}
		})
	}
	// Unknown keys outside sys.* are still ignored (the contract's rule).
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "biz.nobody", "configValue": "x"}, {"configKey": "sys.site.title", "configValue": "Changed"}}).
		Expect(t, "batch with a free unknown key", 200, 0)
	if v := storedValue(t, k, "biz.nobody"); v != nil {
		t.Errorf("an unknown free key was created: %s", *v)
	}
	if deref(getSite(t, k).Title) != "Changed" {
		t.Error("the valid batch was not applied")
	}
}

// TestConsumerKeys: a key outside sys.* that nobody registered is the
// consumer's free string; a module's registered key is validated and read
// with its default.
func TestConsumerKeys(t *testing.T) {
	k := kerneltest.Start(t, nil, host.Module{Name: "Biz", Settings: []settings.Entry{
		{Key: "biz.retries", Kind: settings.KindInt, Min: 0, Max: 9, Default: "3", Area: "biz"},
	}})
	tok := k.Admin()
	ctx := context.Background()
	id := add(t, k, tok, map[string]any{"configKey": "biz.x", "configValue": "any ✓ text, even 99999999999", "name": "free"})
	k.Do("PUT", fmt.Sprintf("%s/%d", base, id), tok, map[string]any{"configValue": "TRUE", "name": "free"}).Expect(t, "update free", 200, 0)
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "biz.x", "configValue": ""}}).Expect(t, "batch free", 200, 0)
	if v := value(t, k, tok, "biz.x"); deref(v) != "" {
		t.Fatalf("biz.x = %s", deref(v))
	}

	if n, _ := k.Settings().Int(ctx, "biz.retries"); n != 3 {
		t.Fatalf("unset biz.retries reads %d, want the registered default 3", n)
	}
	expectRefused(t, k.Do("POST", base, tok, map[string]any{"configKey": "biz.retries", "configValue": "10", "name": "retries"}),
		"create out of range", errcode.ConfigValueInvalid, "biz.retries")
	add(t, k, tok, map[string]any{"configKey": "biz.retries", "configValue": "7", "name": "retries"})
	if n, _ := k.Settings().Int(ctx, "biz.retries"); n != 7 {
		t.Fatalf("biz.retries reads %d, want 7", n)
	}
}

// TestModuleCannotRegisterSysKeys: a module's entry in the kernel's
// namespace stops composition with a message naming the key.
func TestModuleCannotRegisterSysKeys(t *testing.T) {
	cfg, err := kconfig.Load(kconfig.LoadOptions{ContentRoot: t.TempDir(), Environment: kconfig.Development,
		Environ: kerneltest.BackendEnviron(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	k, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: io.Discard, Modules: []host.Module{{
		Name: "Biz", Settings: []settings.Entry{{Key: "sys.biz.retries", Kind: settings.KindInt, Max: 9, Default: "3"}},
	}}})
	if err == nil {
		_ = k.Close()
		t.Fatal("a module registered a sys.* key")
	}
	if !strings.Contains(err.Error(), "sys.biz.retries") {
		t.Fatalf("error = %v, want it to name the key", err)
	}
}

// TestBoolAndEnumValues: boolean keys take exactly "true" or "false"; enum
// keys exactly one of their values.
func TestBoolAndEnumValues(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	const boolKey = "sys.security.captcha.enabled"
	for _, v := range []string{"TRUE", "True", "1", "0", "yes", "on", "", " true"} {
		expectRefused(t, k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": boolKey, "configValue": v}}),
			"bool "+v, errcode.ConfigValueInvalid, boolKey)
	}
	for _, v := range []string{"true", "false"} {
		k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": boolKey, "configValue": v}}).Expect(t, "bool "+v, 200, 0)
		if got := getSite(t, k).CaptchaEnabled; got != (v == "true") {
			t.Fatalf("captcha %s reads %v", v, got)
		}
	}
	const enumKey = "sys.externalauth.oidc.provisioning"
	for _, v := range []string{"auto", "", "deny "} {
		expectRefused(t, k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": enumKey, "configValue": v}}),
			"enum "+v, errcode.ConfigValueInvalid, enumKey)
	}
	// any letter case: the specification spells them Deny and Provision
	for _, v := range []string{"provision", "deny", "Provision", "DENY"} {
		k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": enumKey, "configValue": v}}).Expect(t, "enum "+v, 200, 0)
		if got := value(t, k, tok, enumKey); deref(got) != v {
			t.Fatalf("%s = %s, want %s", enumKey, deref(got), v)
		}
	}
	// captcha.type is seeded: a second row of it is refused.
	k.Do("POST", base, tok, map[string]any{"configKey": "sys.security.captcha.type", "configValue": "char", "name": "type"}).
		ExpectCode(t, "captcha.type", errcode.ConfigKeyExists)
}

// TestInvalidStoredValueReadsAsDefault: a value written around the config
// center (by hand in SQL, or by an older release) reads as the registry's
// default, with one WARN however often it is read.
func TestInvalidStoredValueReadsAsDefault(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	if err := k.Settings().Set(ctx, accessKey, "99999999999"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if n, err := k.Settings().Int(ctx, accessKey); err != nil || n != 120 {
			t.Fatalf("%s reads %d, %v; want the default 120", accessKey, n, err)
		}
	}
	var out struct {
		ExpiresAt time.Time `json:"expiresAt"`
	}
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword}).
		Expect(t, "login", 200, 0).Decode(t, &out)
	if d := time.Until(out.ExpiresAt); d > 121*time.Minute || d < 115*time.Minute {
		t.Fatalf("access token expires in %v, want 120 minutes", d)
	}
	if n := strings.Count(k.Log(), "a config value is invalid"); n != 1 {
		t.Fatalf("%d WARNs about the invalid value, want 1:\n%s", n, k.Log())
	}
	if err := k.Settings().Set(ctx, "sys.security.password.requireDigit", "maybe"); err != nil {
		t.Fatal(err)
	}
	if on, _ := k.Settings().Bool(ctx, "sys.security.password.requireDigit"); !on {
		t.Fatal("an invalid boolean does not read as its default (true)")
	}
	// A provider's enabled switch fails closed (the entry's OnInvalid).
	if err := k.Settings().Set(ctx, "sys.externalauth.oidc.enabled", "off"); err != nil {
		t.Fatal(err)
	}
	if on, _ := k.Settings().Bool(ctx, "sys.externalauth.oidc.enabled"); on {
		t.Fatal("an invalid provider switch reads as on")
	}
}

// TestPageListsOnlyRegisteredRows: a fresh database lists only keys some
// area reads.
func TestPageListsOnlyRegisteredRows(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	reg := k.Settings().Registry()
	for _, c := range getPage(t, k, tok, "Size=200").Items {
		if _, ok := reg.Lookup(c.ConfigKey); !ok {
			t.Errorf("the page lists %s, which no built area reads", c.ConfigKey)
		}
	}
}

// TestSeederRevivesRetiredRows: a database whose rows of then unbuilt
// areas an older release soft-deleted (the captcha type with a value an
// administrator had changed, the MFA, upload and job keys) gets them back
// on the next start, under their ids, with the default value (the retired
// value never had an effect); an administrator's own row is left alone, and
// a third start changes nothing.
func TestSeederRevivesRetiredRows(t *testing.T) {
	dir := t.TempDir()
	env := []string{
		"Service__Database__DbType=Sqlite",
		"Service__Database__ConnectionString=Data Source=" + filepath.Join(dir, "ak.db"),
	}
	k := kerneltest.Start(t, env)
	ctx := context.Background()
	retired := map[int64]string{21: "image", 23: "true", 11: "99", 12: ".exe", 27: "45", 28: "ops@example.com"}
	for id, v := range retired {
		k.Ent().SysConfig.UpdateOneID(id).SetIsDelete(true).SetDeleteKey(id).SetConfigValue(v).ExecX(ctx)
	}
	k.Ent().SysConfig.Create().SetID(5000).SetConfigKey("biz.verification.mode").SetConfigValue("char").SetName("mine").ExecX(ctx)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{21: "char", 23: "false", 11: "20", 12: ".jpg,.png,.pdf,.xlsx,.docx,.zip", 27: "30", 28: ""}
	for start := 2; start <= 3; start++ {
		k = kerneltest.Start(t, env)
		for id, v := range want {
			if r := k.Ent().SysConfig.GetX(ctx, id); r.IsDelete || r.DeleteKey != 0 || deref(r.ConfigValue) != v {
				t.Errorf("start %d: row %d (%s): deleted %v, value %s; want live with %q", start, id, r.ConfigKey, r.IsDelete, deref(r.ConfigValue), v)
			}
		}
		if r := k.Ent().SysConfig.GetX(ctx, 5000); r.IsDelete || deref(r.ConfigValue) != "char" {
			t.Errorf("start %d: an administrator's own row changed", start)
		}
		if n := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey("sys.security.captcha.type")).CountX(ctx); n != 1 {
			t.Errorf("start %d: %d rows of sys.security.captcha.type, want 1", start, n)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSeederRevivesBuiltKeys: the TOTP keys, retired by releases that had
// no TOTP, come back under their ids with the default value (the value the
// retired row kept never had an effect and must not switch TOTP on).
func TestSeederRevivesBuiltKeys(t *testing.T) {
	dir := t.TempDir()
	env := []string{
		"Service__Database__DbType=Sqlite",
		"Service__Database__ConnectionString=Data Source=" + filepath.Join(dir, "ak.db"),
	}
	k := kerneltest.Start(t, env)
	ctx := context.Background()
	// As retireConfigs left them, one with an administrator's value.
	k.Ent().SysConfig.Update().Where(sysconfig.ID(29)).SetIsDelete(true).SetDeleteKey(29).SetConfigValue("true").ExecX(ctx)
	k.Ent().SysConfig.Update().Where(sysconfig.ID(30)).SetIsDelete(true).SetDeleteKey(30).ExecX(ctx)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	k = kerneltest.Start(t, env)
	for _, id := range []int64{29, 30} {
		r := k.Ent().SysConfig.GetX(ctx, id)
		if r.IsDelete || r.DeleteKey != 0 || deref(r.ConfigValue) != "false" {
			t.Errorf("row %d (%s) after the restart: deleted %v, delete key %d, value %s", id, r.ConfigKey, r.IsDelete, r.DeleteKey, deref(r.ConfigValue))
		}
	}
	if on, err := k.Settings().Bool(ctx, "sys.security.totp.enabled"); err != nil || on {
		t.Fatalf("sys.security.totp.enabled = %v, %v after the revival", on, err)
	}
}
