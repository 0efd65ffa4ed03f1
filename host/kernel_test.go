package host_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/password"
)

// load reads settings from dir with an explicit environment list.
func load(t *testing.T, dir, env string, environ ...string) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{ContentRoot: dir, Environment: env, Environ: environ})
	if err != nil {
		t.Fatalf("config.Load: %v", err)
	}
	return cfg
}

const testKey = "Service__Security__Jwt__SigningKey=test-signing-key-0123456789abcdef0123456789"

func start(t *testing.T, cfg *config.Config, opts ...func(*host.Options)) (*host.Kernel, string) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	o := host.Options{Config: cfg, LogOutput: logs}
	for _, f := range opts {
		f(&o)
	}
	k, err := host.New(context.Background(), o)
	if err != nil {
		t.Fatalf("host.New: %v\nlog:\n%s", err, logs)
	}
	t.Cleanup(func() { k.Close() })
	return k, logs.String()
}

var bannerPassword = regexp.MustCompile(`\|\s+password: (\S+)`)

func TestZeroConfigFirstAndSecondStart(t *testing.T) {
	dir := t.TempDir()
	cfg := load(t, dir, config.Development)

	k, log := start(t, cfg)
	if _, err := os.Stat(filepath.Join(dir, "data", "adminkernel.db")); err != nil {
		t.Fatalf("the embedded database was not created under data/: %v", err)
	}
	m := bannerPassword.FindAllStringSubmatch(log, -1)
	if len(m) != 1 {
		t.Fatalf("banner printed %d times, want once; log:\n%s", len(m), log)
	}
	plain := m[0][1]
	if len(plain) != 16 || strings.Trim(plain, password.Alphabet) != "" {
		t.Fatalf("banner password %q is not 16 characters from the allowed alphabet", plain)
	}
	if !strings.Contains(log, "+----") || !strings.Contains(log, "account:  superAdmin") {
		t.Fatalf("banner is not boxed or lacks the account:\n%s", log)
	}
	ctx := context.Background()
	admin, err := k.Ent().SysUser.Query().Where(sysuser.Account("superAdmin")).Only(ctx)
	if err != nil {
		t.Fatalf("super-admin missing: %v", err)
	}
	if !admin.IsSuperAdmin || admin.MustChangePassword || !admin.Enabled {
		t.Fatalf("super-admin flags: super=%v mustChange=%v enabled=%v", admin.IsSuperAdmin, admin.MustChangePassword, admin.Enabled)
	}
	if ok, err := password.New(600000).Verify(admin.PasswordHash, plain); !ok || err != nil {
		t.Fatalf("the banner password does not verify: %v", err)
	}
	if n, _ := password.IterationsOf(admin.PasswordHash); n != 600000 {
		t.Fatalf("hash iterations = %d, want the default 600000", n)
	}
	if n := k.Ent().SysRole.Query().CountX(ctx); n != 6 {
		t.Errorf("roles seeded = %d, want 6", n)
	}
	if n := k.Ent().SysConfig.Query().CountX(ctx); n != 43 { // host/seed configs: the keys something reads
		t.Errorf("config keys seeded = %d, want 43", n)
	}
	k.Close()

	// Second start: configured password, nothing printed, nothing changed.
	cfg2 := load(t, dir, config.Development, "Service__Seed__AdminPassword=Configured#Pass1")
	k2, log2 := start(t, cfg2)
	if bannerPassword.MatchString(log2) || strings.Contains(log2, "Configured#Pass1") {
		t.Fatalf("second start printed a password:\n%s", log2)
	}
	again, err := k2.Ent().SysUser.Query().Where(sysuser.Account("superAdmin")).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.PasswordHash != admin.PasswordHash || again.UpdateTime != nil && !again.UpdateTime.Equal(*admin.UpdateTime) {
		t.Fatal("the second start changed the super-admin")
	}
	if n := k2.Ent().SysUser.Query().CountX(ctx); n != 1 {
		t.Fatalf("users = %d after the second start, want 1", n)
	}
}

func TestConfiguredSeedPassword(t *testing.T) {
	dir := t.TempDir()
	k, log := start(t, load(t, dir, config.Development, "Service__Seed__AdminPassword=Configured#Pass1", "Service__Seed__AdminAccount=root"))
	if strings.Contains(log, "Configured#Pass1") || bannerPassword.MatchString(log) {
		t.Fatalf("a configured password was printed:\n%s", log)
	}
	u := k.Ent().SysUser.Query().OnlyX(context.Background())
	if u.Account != "root" {
		t.Fatalf("account = %q, want root", u.Account)
	}
	if ok, _ := password.New(600000).Verify(u.PasswordHash, "Configured#Pass1"); !ok {
		t.Fatal("the configured password does not verify")
	}
}

func TestProductionTables(t *testing.T) {
	t.Run("without tables the start fails naming both ways out", func(t *testing.T) {
		dir := t.TempDir()
		_, err := host.New(context.Background(), host.Options{Config: load(t, dir, config.Production, testKey), LogOutput: io.Discard})
		if err == nil {
			t.Fatal("Production started without tables")
		}
		for _, want := range []string{"EnableCodeFirstInProduction", "migrate --print"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	})
	t.Run("EnableCodeFirstInProduction creates them", func(t *testing.T) {
		dir := t.TempDir()
		k, _ := start(t, load(t, dir, config.Production, testKey, "Service__Database__EnableCodeFirstInProduction=true"))
		if n := k.Ent().SysUser.Query().CountX(context.Background()); n != 1 {
			t.Fatalf("users = %d, want the seeded super-admin", n)
		}
	})
}

func TestSQLServerRefused(t *testing.T) {
	_, err := host.New(context.Background(), host.Options{
		Config:    load(t, t.TempDir(), config.Development, "Service__Database__DbType=SqlServer"),
		LogOutput: io.Discard,
	})
	if err == nil || !strings.Contains(err.Error(), "SQL Server") {
		t.Fatalf("SqlServer error = %v, want a refusal naming SQL Server", err)
	}
}

type envelope struct {
	Code   int             `json:"code"`
	MsgKey string          `json:"msgKey"`
	Data   json.RawMessage `json:"data"`
}

func get(t *testing.T, k *host.Kernel, path string) (int, []byte) {
	t.Helper()
	resp, err := k.App().Test(httptest.NewRequest(http.MethodGet, path, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestErrorCodesEndpoint(t *testing.T) {
	dir := t.TempDir()
	k, _ := start(t, load(t, dir, config.Development))
	status, body := get(t, k, "/api/v1/meta/error-codes")
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || status != 200 || env.Code != 0 || env.MsgKey != "common.success" {
		t.Fatalf("GET error-codes = %d %s (%v)", status, body, err)
	}
	var entries []struct {
		Code   int    `json:"code"`
		Name   string `json:"name"`
		MsgKey string `json:"msgKey"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal(env.Data, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(k.Catalog().Entries()) || entries[0].Code != 0 {
		t.Fatalf("endpoint lists %d entries, catalog %d", len(entries), len(k.Catalog().Entries()))
	}
	found := false
	for _, e := range entries {
		if e.Code == 40014 {
			found = e.Name == "OAuthStateInvalid" && e.MsgKey == "error.auth.oauthStateInvalid" && e.Source == "ErrorCode"
		}
	}
	if !found {
		t.Fatal("40014 missing or wrong in the endpoint's catalog")
	}

	k2, _ := start(t, load(t, t.TempDir(), config.Development, "Api__DisabledModules__0=meta"))
	if status, body := get(t, k2, "/api/v1/meta/error-codes"); status != 404 || !strings.Contains(string(body), `"code":48003`) {
		t.Fatalf("disabled Meta answered %d %s, want 404 with 48003", status, body)
	}
}

func TestHealth(t *testing.T) {
	k, _ := start(t, load(t, t.TempDir(), config.Development))
	for _, path := range []string{"/health", "/health/ready"} {
		status, body := get(t, k, path)
		if status != 200 || !strings.Contains(string(body), `"status":"Healthy"`) {
			t.Fatalf("GET %s = %d %s", path, status, body)
		}
	}
	_, ready := get(t, k, "/health/ready")
	for _, check := range []string{`"name":"db"`, `"name":"cache"`} {
		if !strings.Contains(string(ready), check) {
			t.Errorf("ready body lacks %s: %s", check, ready)
		}
	}
	// With the database gone, liveness stays 200 and readiness turns 503.
	k.Close()
	if status, _ := get(t, k, "/health"); status != 200 {
		t.Fatalf("/health = %d with the database closed, want 200", status)
	}
	status, body := get(t, k, "/health/ready")
	if status != 503 || !strings.Contains(string(body), `"status":"Unhealthy"`) {
		t.Fatalf("/health/ready = %d %s with the database closed, want 503", status, body)
	}
}

func TestProtectedRoutesFailClosed(t *testing.T) {
	k, _ := start(t, load(t, t.TempDir(), config.Development))
	status, body := get(t, k, "/api/v1/nope")
	if status != 404 || !strings.Contains(string(body), `"msgKey":"error.request.notFound"`) {
		t.Fatalf("unknown route = %d %s", status, body)
	}
}

// Composition refuses two modules with one name (compared as
// Api:DisabledModules compares them), naming both.
func TestDuplicateModuleNameRefused(t *testing.T) {
	tests := []struct {
		name    string
		modules []host.Module
		want    string
	}{
		{"two application modules", []host.Module{{Name: "Shop"}, {Name: "Audit"}, {Name: "shop "}},
			`the module "Shop" (Options.Modules[0]) and the module "shop " (Options.Modules[2]) have one name`},
		{"an application module named like a built-in one", []host.Module{{Name: "USER"}},
			`the built-in module "User" and the module "USER" (Options.Modules[0]) have one name`},
		{"an application module named like the login area", []host.Module{{Name: "auth"}},
			`the built-in module "Auth" and the module "auth" (Options.Modules[0]) have one name`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := host.Options{Config: load(t, t.TempDir(), config.Development), Modules: tc.modules, LogOutput: io.Discard}
			if _, err := host.Catalog(opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Catalog error = %v, want %q", err, tc.want)
			}
			if _, err := host.New(context.Background(), opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error = %v, want %q", err, tc.want)
			}
		})
	}
}
