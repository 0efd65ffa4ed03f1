package configcenter_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/hook"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const base = "/api/v1/sys/config"

type config struct {
	ID           int64   `json:"id"`
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
	ConfigKey    string  `json:"configKey"`
	ConfigValue  *string `json:"configValue"`
	Name         string  `json:"name"`
	GroupCode    *string `json:"groupCode"`
	Sort         int     `json:"sort"`
	Remark       *string `json:"remark"`
}

type page struct {
	Current int      `json:"current"`
	Size    int      `json:"size"`
	Total   int      `json:"total"`
	Pages   int      `json:"pages"`
	Items   []config `json:"items"`
}

type site struct {
	Title           *string `json:"title"`
	Subtitle        *string `json:"subtitle"`
	Copyright       *string `json:"copyright"`
	CopyrightURL    *string `json:"copyrightUrl"`
	Logo            *string `json:"logo"`
	CaptchaEnabled  bool    `json:"captchaEnabled"`
	SmsLoginEnabled bool    `json:"smsLoginEnabled"`
	// PasskeyPasswordless is the kernel's extension (the console's login page).
	PasskeyPasswordless bool `json:"passkeyPasswordless"`
}

func str(s string) *string { return &s }

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func getPage(t *testing.T, k *kerneltest.Kernel, tok, query string) page {
	t.Helper()
	var p page
	k.Do("GET", base+"/page?"+query, tok, nil).Expect(t, "page "+query, 200, 0).Decode(t, &p)
	return p
}

func getSite(t *testing.T, k *kerneltest.Kernel) site {
	t.Helper()
	var s site
	k.Do("GET", base+"/site", "", nil).Expect(t, "site", 200, 0).Decode(t, &s)
	return s
}

func value(t *testing.T, k *kerneltest.Kernel, tok, key string) *string {
	t.Helper()
	var v *string
	k.Do("GET", base+"/value/"+url.PathEscape(key), tok, nil).Expect(t, "value "+key, 200, 0).Decode(t, &v)
	return v
}

func add(t *testing.T, k *kerneltest.Kernel, tok string, body map[string]any) int64 {
	t.Helper()
	var id int64
	k.Do("POST", base, tok, body).Expect(t, fmt.Sprintf("add %v", body["configKey"]), 200, 0).Decode(t, &id)
	return id
}

func keys(items []config) []string {
	out := make([]string, len(items))
	for i, c := range items {
		out[i] = c.ConfigKey
	}
	return out
}

func TestPage(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	add(t, k, tok, map[string]any{"configKey": "biz.plain", "configValue": "x", "name": "no group", "sort": 1})
	add(t, k, tok, map[string]any{"configKey": "biz.grouped", "configValue": "y", "name": "其他分组", "groupCode": "biz", "sort": "2"})

	tests := []struct {
		name      string
		query     string
		wantTotal int
		wantKeys  []string // nil: not checked
	}{
		{"group exact", "GroupCode=sys", 5, nil},
		{"group is exact, not fuzzy", "GroupCode=sy", 0, nil},
		{"key fuzzy, case-insensitive", "ConfigKey=SECURITY.PASSWORD.REQUIRE", 4, []string{"sys.security.password.requireUpper", "sys.security.password.requireLower", "sys.security.password.requireDigit", "sys.security.password.requireSpecial"}},
		{"name fuzzy", "Name=分组", 1, []string{"biz.grouped"}},
		{"lowercase parameter names", "configkey=security.password.require&size=1", 4, []string{"sys.security.password.requireUpper"}},
		{"excluded groups keep rows without a group", "ExcludedGroupCodes=sys&ExcludedGroupCodes=security&ExcludedGroupCodes=upload&ExcludedGroupCodes=job&ExcludedGroupCodes=externalauth&ExcludedGroupCodes=realtime", 2, []string{"biz.plain", "biz.grouped"}},
		{"sort field desc", "GroupCode=sys&SortField=configKey&SortOrder=DESC", 5, []string{"sys.site.title", "sys.site.subtitle", "sys.site.logo", "sys.site.copyrightUrl", "sys.site.copyright"}},
		{"unknown sort field is ignored", "ConfigKey=security.session&SortField=nope;drop", 2, []string{"sys.security.session.accessMinutes", "sys.security.session.refreshMinutes"}},
		{"second page", "GroupCode=sys&Size=2&Current=3&SortField=configKey", 5, []string{"sys.site.title"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := getPage(t, k, tok, tt.query)
			if p.Total != tt.wantTotal {
				t.Fatalf("total = %d, want %d (%v)", p.Total, tt.wantTotal, keys(p.Items))
			}
			if tt.wantKeys != nil && fmt.Sprint(keys(p.Items)) != fmt.Sprint(tt.wantKeys) {
				t.Fatalf("keys = %v, want %v", keys(p.Items), tt.wantKeys)
			}
		})
	}

	p := getPage(t, k, tok, "GroupCode=sys&Size=2")
	if p.Current != 1 || p.Size != 2 || p.Pages != 3 || len(p.Items) != 2 {
		t.Fatalf("paging = %+v", p)
	}
	c := p.Items[0]
	if c.ID != 1 || c.ConfigKey != "sys.site.title" || deref(c.ConfigValue) != "AdminKernel" || deref(c.GroupCode) != "sys" || c.CreateTime == "" || c.IsDelete {
		t.Fatalf("first row = %+v", c)
	}
	k.Do("GET", base+"/page?Size=201", tok, nil).Expect(t, "page size above the maximum", 200, 48001)
	k.Do("GET", base+"/page?Current=x", tok, nil).Expect(t, "bad Current", 400, 48002)
}

func TestCRUD(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()

	id := add(t, k, tok, map[string]any{"configKey": "biz.order.prefix", "configValue": "SO", "name": "订单前缀", "groupCode": "biz", "sort": 3, "remark": "r"})
	var got config
	k.Do("GET", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "get", 200, 0).Decode(t, &got)
	if got.ConfigKey != "biz.order.prefix" || deref(got.ConfigValue) != "SO" || got.Name != "订单前缀" || deref(got.GroupCode) != "biz" ||
		got.Sort != 3 || deref(got.Remark) != "r" || got.CreateUserID == nil || *got.CreateUserID != 1 || got.UpdateTime != nil {
		t.Fatalf("added row = %+v", got)
	}
	if v := value(t, k, tok, "biz.order.prefix"); deref(v) != "SO" {
		t.Fatalf("value = %s", deref(v))
	}

	errs := []struct {
		name         string
		method, path string
		body         any
		status, code int
	}{
		{"add: key taken", "POST", base, map[string]any{"configKey": "sys.site.title", "name": "x"}, 200, 43005},
		{"add: key with a space", "POST", base, map[string]any{"configKey": "a b", "name": "x"}, 400, 48002},
		{"add: key too long", "POST", base, map[string]any{"configKey": strings.Repeat("a", 129), "name": "x"}, 400, 48002},
		{"add: no key", "POST", base, map[string]any{"name": "x"}, 400, 48002},
		{"add: no name", "POST", base, map[string]any{"configKey": "biz.noname"}, 400, 48002},
		{"add: sort not a number", "POST", base, map[string]any{"configKey": "biz.badsort", "name": "x", "sort": "abc"}, 400, 48002},
		{"add: empty body", "POST", base, nil, 400, 48002},
		{"get: missing", "GET", base + "/999999", nil, 200, 43004},
		{"get: id not a number", "GET", base + "/abc", nil, 400, 48002},
		{"update: missing", "PUT", base + "/999999", map[string]any{"name": "x"}, 200, 43004},
		{"update: no name", "PUT", fmt.Sprintf("%s/%d", base, id), map[string]any{"name": " "}, 400, 48002},
		{"delete: missing", "DELETE", base + "/999999", nil, 200, 43004},
		{"batch: not an array", "PUT", base + "/batch", map[string]any{"configKey": "sys.site.title"}, 400, 48002},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			k.Do(tt.method, tt.path, tok, tt.body).Expect(t, tt.name, tt.status, tt.code)
		})
	}

	// PUT ignores configKey and rewrites everything else.
	k.Do("PUT", fmt.Sprintf("%s/%d", base, id), tok, map[string]any{"configKey": "biz.renamed", "configValue": "PO", "name": "采购前缀", "sort": "7"}).Expect(t, "update", 200, 0)
	k.Do("GET", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "get after update", 200, 0).Decode(t, &got)
	if got.ConfigKey != "biz.order.prefix" || deref(got.ConfigValue) != "PO" || got.Name != "采购前缀" || got.GroupCode != nil ||
		got.Sort != 7 || got.Remark != nil || got.UpdateTime == nil || got.UpdateUserID == nil {
		t.Fatalf("updated row = %+v", got)
	}
	if v := value(t, k, tok, "biz.order.prefix"); deref(v) != "PO" {
		t.Fatalf("value after update = %s (stale cache?)", deref(v))
	}
	if v := value(t, k, tok, "biz.renamed"); v != nil {
		t.Fatalf("ignored key got a value %q", *v)
	}

	// Soft delete frees the key.
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "delete", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "delete twice", 200, 43004)
	k.Do("GET", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "get deleted", 200, 43004)
	if v := value(t, k, tok, "biz.order.prefix"); v != nil {
		t.Fatalf("value after delete = %q (stale cache?)", *v)
	}
	row := k.Ent().SysConfig.GetX(context.Background(), id)
	if !row.IsDelete || row.DeleteKey != id {
		t.Fatalf("deleted row is_delete=%v delete_key=%d", row.IsDelete, row.DeleteKey)
	}
	id2 := add(t, k, tok, map[string]any{"configKey": "biz.order.prefix", "configValue": "NEW", "name": "again"})
	if id2 == id {
		t.Fatal("re-created key reused the deleted id")
	}
	if v := value(t, k, tok, "biz.order.prefix"); deref(v) != "NEW" {
		t.Fatalf("value after re-create = %s", deref(v))
	}

	// A key without a value reads as null; an unknown key too.
	add(t, k, tok, map[string]any{"configKey": "biz.empty", "name": "no value"})
	if v := value(t, k, tok, "biz.empty"); v != nil {
		t.Fatalf("NULL value = %q", *v)
	}
	if v := value(t, k, tok, "no.such.key"); v != nil {
		t.Fatalf("unknown key = %q", *v)
	}
}

func TestAccess(t *testing.T) {
	k := kerneltest.Start(t, nil)
	k.User("reader", "Reader#Pass1", "GET:/api/v1/sys/config/page", "GET:/api/v1/sys/config/value/{key}")
	tok := k.Login("reader", "Reader#Pass1").AccessToken
	tests := []struct {
		name, method, path string
		token              string
		body               any
		status, code       int
	}{
		{"site is anonymous", "GET", base + "/site", "", nil, 200, 0},
		{"page needs a token", "GET", base + "/page", "", nil, 401, 40006},
		{"batch needs a token", "PUT", base + "/batch", "", []any{}, 401, 40006},
		{"granted page", "GET", base + "/page", tok, nil, 200, 0},
		{"granted value", "GET", base + "/value/sys.site.title", tok, nil, 200, 0},
		{"detail not granted", "GET", base + "/1", tok, nil, 403, 41001},
		{"add not granted", "POST", base, tok, map[string]any{"configKey": "x.y", "name": "x"}, 403, 41001},
		{"update not granted", "PUT", base + "/1", tok, map[string]any{"name": "x"}, 403, 41001},
		{"batch not granted", "PUT", base + "/batch", tok, []any{}, 403, 41001},
		{"delete not granted", "DELETE", base + "/1", tok, nil, 403, 41001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k.Do(tt.method, tt.path, tt.token, tt.body).Expect(t, tt.name, tt.status, tt.code)
		})
	}
}

func TestBatchUpdatesOnlyExistingValues(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	ctx := context.Background()
	gone := add(t, k, tok, map[string]any{"configKey": "biz.gone", "configValue": "old", "name": "gone"})
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, gone), tok, nil).Expect(t, "delete", 200, 0)
	before := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey("sys.site.subtitle")).OnlyX(ctx)
	count := k.Ent().SysConfig.Query().CountX(ctx)
	_ = value(t, k, tok, "sys.site.subtitle") // cached before the change

	body := []map[string]any{
		{"configKey": "sys.site.subtitle", "configValue": "副标题", "name": "hacked", "groupCode": "evil", "sort": 99},
		{"configKey": "sys.security.password.expireDays", "configValue": nil},
		{"configKey": "no.such.key", "configValue": "x"},
		{"configKey": "biz.gone", "configValue": "new"},
		{"configKey": "bad key!", "configValue": "x"},
		{"configKey": "sys.security.rateLimit.windowSeconds", "configValue": "10"},
		{"configKey": "sys.security.rateLimit.windowSeconds", "configValue": "30"},
		// Registered, without a row: created (a deviation, docs/reference/compatibility.md).
		{"configKey": "sys.externalauth.oidc.provisioning", "configValue": "provision"},
	}
	k.Do("PUT", base+"/batch", tok, body).Expect(t, "batch", 200, 0)
	k.Do("PUT", base+"/batch", tok, []any{}).Expect(t, "empty batch", 200, 0)

	after := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey("sys.site.subtitle")).OnlyX(ctx)
	if deref(after.ConfigValue) != "副标题" || after.Name != before.Name || deref(after.GroupCode) != deref(before.GroupCode) || after.Sort != before.Sort {
		t.Fatalf("subtitle row after batch = %+v, before %+v", after, before)
	}
	if after.UpdateUserID == nil || *after.UpdateUserID != 1 {
		t.Fatalf("update user = %v", after.UpdateUserID)
	}
	if n := k.Ent().SysConfig.Query().CountX(ctx); n != count+1 {
		t.Fatalf("rows = %d after batch, want %d (only the registered key is created)", n, count+1)
	}
	created := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey("sys.externalauth.oidc.provisioning")).OnlyX(ctx)
	if deref(created.GroupCode) != "externalauth" || created.Name != created.ConfigKey || created.CreateUserID == nil || *created.CreateUserID != 1 {
		t.Fatalf("created row = %+v", created)
	}
	if v := value(t, k, tok, "no.such.key"); v != nil {
		t.Fatalf("unknown key got %q", *v)
	}
	if v := k.Ent().SysConfig.GetX(ctx, gone).ConfigValue; deref(v) != "old" {
		t.Fatalf("deleted row changed to %s", deref(v))
	}
	for key, want := range map[string]*string{
		"sys.site.subtitle":                    str("副标题"),
		"sys.security.password.expireDays":     nil,
		"sys.security.rateLimit.windowSeconds": str("30"),
		"sys.externalauth.oidc.provisioning":   str("provision"),
		"biz.gone":                             nil,
	} {
		if got := value(t, k, tok, key); deref(got) != deref(want) {
			t.Errorf("value %s = %s, want %s", key, deref(got), deref(want))
		}
	}
}

func TestBatchIsOneTransaction(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	// Make the second update of the batch fail inside the transaction.
	k.Ent().SysConfig.Use(func(next ent.Mutator) ent.Mutator {
		return hook.SysConfigFunc(func(ctx context.Context, m *ent.SysConfigMutation) (ent.Value, error) {
			if v, ok := m.ConfigValue(); ok && v == "boom" {
				return nil, errors.New("boom")
			}
			return next.Mutate(ctx, m)
		})
	})
	_ = getSite(t, k)
	k.Do("PUT", base+"/batch", tok, []map[string]any{
		{"configKey": "sys.site.title", "configValue": "X"},
		{"configKey": "sys.site.subtitle", "configValue": "boom"},
	}).Expect(t, "failing batch", 500, 50000)
	if v := value(t, k, tok, "sys.site.title"); deref(v) != "AdminKernel" {
		t.Fatalf("title = %s after a failed batch: the first update was not rolled back", deref(v))
	}
	k.Do("PUT", base+"/batch", tok, `[{"configKey":"sys.site.title","configValue":"X"},{"configKey":"sys.site.logo","configValue":7}]`).
		Expect(t, "batch with a malformed element", 400, 48002)
	if s := getSite(t, k); deref(s.Title) != "AdminKernel" {
		t.Fatalf("site title = %s after rejected batches", deref(s.Title))
	}
}

// TestCaptchaSwitchTakesEffectOnNextLogin: the runtime switch is read by the
// login through the shared settings service.
func TestCaptchaSwitchTakesEffectOnNextLogin(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	login := map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword}
	if getSite(t, k).CaptchaEnabled {
		t.Fatal("captcha on by default")
	}
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "sys.security.captcha.enabled", "configValue": "true"}}).Expect(t, "captcha on", 200, 0)
	k.Do("POST", "/api/v1/auth/login", "", login).Expect(t, "login without captcha", 200, 40002)
	if !getSite(t, k).CaptchaEnabled {
		t.Fatal("site info still says captcha off")
	}
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "sys.security.captcha.enabled", "configValue": "false"}}).Expect(t, "captcha off", 200, 0)
	k.Do("POST", "/api/v1/auth/login", "", login).Expect(t, "login after captcha off", 200, 0)
	if getSite(t, k).CaptchaEnabled {
		t.Fatal("site info still says captcha on")
	}
}

func TestCaptchaSettingForcesSiteFlag(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Security__Captcha__Enabled=true"})
	if s := getSite(t, k); !s.CaptchaEnabled {
		t.Fatalf("site = %+v, want captchaEnabled from Service:Security:Captcha:Enabled", s)
	}
}

func TestSiteInfoRefreshesOnChange(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	ctx := context.Background()
	s := getSite(t, k)
	if deref(s.Title) != "AdminKernel" || deref(s.Subtitle) != "" || deref(s.Copyright) != "AdminKernel" || s.CaptchaEnabled || s.SmsLoginEnabled || s.PasskeyPasswordless {
		t.Fatalf("default site = %+v", s)
	}

	steps := []struct {
		name   string
		change func()
		check  func(site) bool
	}{
		{"batch title", func() {
			k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "sys.site.title", "configValue": "新站点"}}).Expect(t, "batch", 200, 0)
		}, func(s site) bool { return deref(s.Title) == "新站点" }},
		{"batch sms login", func() {
			k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "sys.security.smsLogin.enabled", "configValue": "true"}}).Expect(t, "batch", 200, 0)
		}, func(s site) bool { return s.SmsLoginEnabled }},
		{"batch passwordless passkey login", func() {
			k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "sys.security.passkey.passwordless", "configValue": "true"}}).Expect(t, "batch", 200, 0)
		}, func(s site) bool { return s.PasskeyPasswordless }},
		{"update copyright by id", func() {
			k.Do("PUT", base+"/19", tok, map[string]any{"configValue": "© Me", "name": "版权信息", "groupCode": "sys"}).Expect(t, "update", 200, 0)
		}, func(s site) bool { return deref(s.Copyright) == "© Me" }},
		{"delete logo", func() {
			k.Do("DELETE", base+"/26", tok, nil).Expect(t, "delete", 200, 0)
		}, func(s site) bool { return s.Logo == nil }},
		{"add logo again", func() {
			add(t, k, tok, map[string]any{"configKey": "sys.site.logo", "configValue": "/logo.png", "name": "站点Logo", "groupCode": "sys"})
		}, func(s site) bool { return deref(s.Logo) == "/logo.png" }},
		{"out-of-band edit, then Changed", func() {
			k.Ent().SysConfig.Update().Where(sysconfig.ConfigKey("sys.site.subtitle")).SetConfigValue("oob").ExecX(ctx)
			if got := getSite(t, k); deref(got.Subtitle) == "oob" {
				t.Fatal("site info not served from the cache")
			}
			if err := k.Settings().Changed(ctx, "sys.site.subtitle"); err != nil {
				t.Fatal(err)
			}
		}, func(s site) bool { return deref(s.Subtitle) == "oob" }},
		{"out-of-band edit, then flush all", func() {
			k.Ent().SysConfig.Update().Where(sysconfig.ConfigKey("sys.site.subtitle")).SetConfigValue("flushed").ExecX(ctx)
			n, err := k.Settings().ChangedAll(ctx)
			if err != nil || n == 0 {
				t.Fatalf("ChangedAll = %d, %v", n, err)
			}
		}, func(s site) bool { return deref(s.Subtitle) == "flushed" }},
	}
	for _, st := range steps {
		getSite(t, k) // the entry is cached before each change
		st.change()
		if got := getSite(t, k); !st.check(got) {
			t.Fatalf("%s: site = %+v", st.name, got)
		}
	}
}

// TestSettingsSeeChanges: a change through the config center is what every
// other reader of d.Settings (the external-login service, the rate limiter)
// sees on the next call.
func TestSettingsSeeChanges(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	ctx := context.Background()
	const key = "sys.externalauth.oidc.enabled"
	sw := k.Settings().Switch(key) // the per-request reader (rate limiter)
	if on, err := k.Settings().Bool(ctx, key); err != nil || !on || !sw(ctx) {
		t.Fatalf("%s = %v, %v; switch %v", key, on, err, sw(ctx))
	}
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": key, "configValue": "false"}}).Expect(t, "switch off", 200, 0)
	if on, _ := k.Settings().Bool(ctx, key); on {
		t.Fatal("settings service still reads the provider as enabled")
	}
	if sw(ctx) {
		t.Fatal("the switch reader still reads the provider as enabled")
	}
	// An unregistered key reads as blank (false, 0) with a WARN.
	if k.Settings().Switch("sys.no.such.key")(ctx) || k.Settings().Number("sys.no.such.key")(ctx) != 0 {
		t.Fatal("an unregistered key does not read as blank")
	}
	const limit = "sys.security.rateLimit.permitPerWindow"
	num := k.Settings().Number(limit)
	for _, tc := range []struct {
		value *string // nil: NULL, the registry's default
		want  int
	}{{str("1234"), 1234}, {nil, 300}} {
		k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": limit, "configValue": tc.value}}).Expect(t, "set "+limit, 200, 0)
		if got := num(ctx); got != tc.want {
			t.Errorf("%s = %s: Number reads %d, want %d", limit, deref(tc.value), got, tc.want)
		}
		if got, _ := k.Settings().Int(ctx, limit); got != tc.want {
			t.Errorf("%s = %s: Int reads %d, want %d", limit, deref(tc.value), got, tc.want)
		}
	}
	id := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey(key), sysconfig.IsDelete(false)).OnlyIDX(ctx)
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "delete", 200, 0)
	if _, ok, _ := k.Settings().Value(ctx, key); ok {
		t.Fatal("settings service still reads a deleted key")
	}
}

func TestChangeEvents(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	var mu sync.Mutex
	var got []events.ConfigChanged
	cancel := k.Events().Subscribe(func(e events.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e, ok := e.(events.ConfigChanged); ok && strings.HasPrefix(e.Key, "ev.") {
			got = append(got, e)
		}
	})
	defer cancel()
	id := add(t, k, tok, map[string]any{"configKey": "ev.one", "configValue": "1", "name": "e"})
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "ev.one", "configValue": "1"}}).Expect(t, "unchanged batch", 200, 0)
	k.Do("PUT", base+"/batch", tok, []map[string]any{{"configKey": "ev.one", "configValue": "2"}}).Expect(t, "batch", 200, 0)
	k.Do("DELETE", fmt.Sprintf("%s/%d", base, id), tok, nil).Expect(t, "delete", 200, 0)
	// Delivery is asynchronous: wait for the three events, then unsubscribe.
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	for deadline := time.Now().Add(5 * time.Second); count() < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	k.Do("POST", base, tok, map[string]any{"configKey": "ev.two", "name": "e"}).Expect(t, "add after cancel", 200, 0)
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	want := "[{ev.one} {ev.one} {ev.one}]" // add, changing batch, delete
	if fmt.Sprint(got) != want {
		t.Fatalf("events = %v, want %s", got, want)
	}
}

// TestOnEveryDialect: add, page and batch on each real database.
func TestOnEveryDialect(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			cfg := dbtest.Config(t, dialect)
			k := kerneltest.Start(t, []string{
				"Service__Database__DbType=" + dialect,
				"Service__Database__ConnectionString=" + string(cfg.Service.Database.ConnectionString),
			})
			tok := k.Admin()
			add(t, k, tok, map[string]any{"configKey": "Biz.Mixed_Case-1", "configValue": "v", "name": "混合", "groupCode": "biz"})
			add(t, k, tok, map[string]any{"configKey": "biz.null", "name": "null group"})
			k.Do("POST", base, tok, map[string]any{"configKey": "Biz.Mixed_Case-1", "name": "dup"}).Expect(t, "duplicate", 200, 43005)

			if p := getPage(t, k, tok, "ConfigKey=mixed_case&Name=混"); p.Total != 1 || p.Items[0].ConfigKey != "Biz.Mixed_Case-1" {
				t.Fatalf("fuzzy page = %+v", p)
			}
			if p := getPage(t, k, tok, "ConfigKey=%25"); p.Total != 0 {
				t.Fatalf("%% must be literal in a fuzzy filter: %v", keys(p.Items))
			}
			if p := getPage(t, k, tok, "ExcludedGroupCodes=sys&ExcludedGroupCodes=security&ExcludedGroupCodes=upload&ExcludedGroupCodes=job&ExcludedGroupCodes=externalauth&ExcludedGroupCodes=realtime&SortField=configKey"); fmt.Sprint(keys(p.Items)) != "[Biz.Mixed_Case-1 biz.null]" {
				t.Fatalf("other groups = %v", keys(p.Items))
			}
			k.Do("PUT", base+"/batch", tok, []map[string]any{
				{"configKey": "Biz.Mixed_Case-1", "configValue": "w"},
				{"configKey": "biz.mixed_case-1", "configValue": "other case"},
				{"configKey": "sys.site.title", "configValue": "站点"},
			}).Expect(t, "batch", 200, 0)
			if v := value(t, k, tok, "Biz.Mixed_Case-1"); deref(v) != "w" {
				t.Fatalf("value = %s", deref(v))
			}
			if s := getSite(t, k); deref(s.Title) != "站点" {
				t.Fatalf("site = %+v", s)
			}
		})
	}
}
