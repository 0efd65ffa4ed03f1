package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const accessKey = "sys.security.session.accessMinutes"

// sqliteEnv points the commands (through the environment) and a kernel at
// one SQLite file; the cache is the in-process one.
func sqliteEnv(t *testing.T) (dir string, environ []string) {
	t.Helper()
	dir = t.TempDir()
	for k, v := range map[string]string{
		"Service__Database__DbType":           "Sqlite",
		"Service__Database__ConnectionString": "Data Source=" + filepath.Join(dir, "ak.db"),
		"Service__Cache__Provider":            "",
	} {
		environ = append(environ, k+"="+v)
		t.Setenv(k, v)
	}
	return dir, environ
}

func stored(t *testing.T, k *kerneltest.Kernel, key string) string {
	t.Helper()
	r := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey(key), sysconfig.IsDelete(false)).OnlyX(context.Background())
	if r.ConfigValue == nil {
		return "<nil>"
	}
	return *r.ConfigValue
}

// TestConfigGetSetOnSqlite: get prints the value with its registry entry;
// set refuses what the config center refuses (nothing written) and writes
// the rest, saying when an in-process service sees it. The commands run in
// Production without a signing key (they only open the stores).
func TestConfigGetSetOnSqlite(t *testing.T) {
	dir, environ := sqliteEnv(t)
	k := kerneltest.Start(t, environ)
	ctx := context.Background()
	cli := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := run(t, ctx, host.Options{}, append(args, "--content-root", dir, "--environment", "Production")...)
		return out, err
	}

	out, err := cli("config", "get", accessKey)
	if err != nil {
		t.Fatalf("config get: %v", err)
	}
	for _, want := range []string{accessKey + ` = "120"`, `reads as: "120"`, "integer 1..1440", `default:  "120"`, "area:     security", "access-token lifetime"} {
		if !strings.Contains(out, want) {
			t.Errorf("config get output lacks %q:\n%s", want, out)
		}
	}

	refused := []struct {
		args []string
		want string
	}{
		{[]string{accessKey, "99999999999"}, "The value of " + accessKey + " is invalid: expected integer 1..1440. (error code 43012"},
		{[]string{"sys.security.captcha.enabled", "TRUE"}, "expected true or false"},
		{[]string{"sys.security.captcha.type", "slider"}, "expected one of char, path, math"},
		{[]string{"sys.security.session.idleMinutes", "30"}, "sys.security.session.idleMinutes is not a setting the kernel knows. (error code 43013"},
		{[]string{"sys.no.such.key", "1"}, "43013"},
		{[]string{"biz.x", "1"}, "is not a sys.* key"},
	}
	for _, tc := range refused {
		if out, err := cli(append([]string{"config", "set"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config set %v = %q, %v; want an error with %q", tc.args, out, err, tc.want)
		}
	}
	if v := stored(t, k, accessKey); v != "120" {
		t.Fatalf("a refused set wrote %s", v)
	}

	out, err = cli("config", "set", accessKey, "30")
	if err != nil {
		t.Fatalf("config set: %v", err)
	}
	if !strings.Contains(out, "written to the database") || !strings.Contains(out, "within 20m0s (Service:Cache:PermissionMinutes)") {
		t.Errorf("config set output = %q", out)
	}
	if v := stored(t, k, accessKey); v != "30" {
		t.Fatalf("stored %s after set, want 30", v)
	}
	if out, err = cli("config", "set", accessKey, "30"); err != nil || !strings.Contains(out, "nothing changed") {
		t.Errorf("repeated set = %q, %v", out, err)
	}
	// A registered key without a row: the command has no id source and
	// says so (after the validation: a bad value is still 43012).
	if _, err = cli("config", "set", "sys.externalauth.oidc.provisioning", "auto"); err == nil || !strings.Contains(err.Error(), "43012") {
		t.Errorf("set of an invalid value of a key without a row = %v", err)
	}
	if _, err = cli("config", "set", "sys.externalauth.oidc.provisioning", "provision"); err == nil || !strings.Contains(err.Error(), "has no row") {
		t.Errorf("set of a key without a row = %v", err)
	}
	k.Do("PUT", "/api/v1/sys/config/batch", k.Admin(), []map[string]any{{"configKey": "sys.externalauth.oidc.provisioning", "configValue": "deny"}}).
		Expect(t, "create through the API", 200, 0)
	if _, err = cli("config", "set", "sys.externalauth.oidc.provisioning", "provision"); err != nil {
		t.Fatal(err)
	}
	if v := stored(t, k, "sys.externalauth.oidc.provisioning"); v != "provision" {
		t.Fatalf("provisioning = %s", v)
	}
	out, err = cli("config", "get", "sys.security.nothing")
	if err != nil || !strings.Contains(out, "unknown: no registry entry") {
		t.Errorf("get of an unknown sys.* key = %q, %v", out, err)
	}
	out, err = cli("config", "get", "biz.free")
	if err != nil || !strings.Contains(out, "the consumer's free string") {
		t.Errorf("get of a free key = %q, %v", out, err)
	}
	// The service that was running reads the new value after a restart.
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	k = kerneltest.Start(t, environ)
	if n, _ := k.Settings().Int(ctx, accessKey); n != 30 {
		t.Fatalf("after a restart %s reads %d, want 30", accessKey, n)
	}
	if strings.Contains(k.Log(), "99999999999") {
		t.Error("a refused value reached the log")
	}
}
