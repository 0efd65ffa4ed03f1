package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
)

// TestConfigRefusesWhatServeRefuses runs `config` and `serve` on the same
// settings: each problem fails both, with the same list of problems (the
// one config.Validate), and `config` still prints the settings.
func TestConfigRefusesWhatServeRefuses(t *testing.T) {
	tests := []struct {
		name    string
		file    string   // appsettings.json, optional
		environ []string // on top of a valid Production setup
		want    []string // the problems, exactly
	}{
		{
			name:    "trusted proxy with a /33 prefix",
			environ: []string{"Service__Http__TrustedProxies__0=10.0.0.0/33"},
			want:    []string{`Service:Http:TrustedProxies:0 "10.0.0.0/33" is not an IP address or CIDR block (for example 10.0.0.0/8 or 192.0.2.7)`},
		},
		{
			name:    "malformed plugin pin",
			environ: []string{"Service__ExternalAuth__PluginSha256__acme=not-a-sum"},
			want:    []string{`Service:ExternalAuth:PluginSha256:acme "not-a-sum" is not a SHA-256 pin: want 64 hexadecimal digits (sha256sum of the plugin binary)`},
		},
		{
			name:    "SqlServer",
			environ: []string{"Service__Database__DbType=SqlServer"},
			want: []string{"Service:Database:DbType SqlServer is refused: the kernel has no tested SQL Server path " +
				"(ent, its data layer, has no SQL Server dialect); valid values: Sqlite, MySql, PostgreSQL"},
		},
		{
			name: "misspelled keys",
			file: `{"Service": {"Http": {"ListenAdress": "http://0.0.0.0:8080"}}, "Logging": {"LogLevels": {"Default": "Debug"}}}`,
			want: []string{
				"Service:Http:ListenAdress (from appsettings.json) is not a setting; did you mean Service:Http:ListenAddress?",
				"Logging:LogLevels (from appsettings.json) is not a setting; did you mean Logging:LogLevel?",
			},
		},
		{
			name: "all problems together",
			file: `{"Service": {"Securty": {}}}`,
			environ: []string{
				"Service__Http__TrustedProxies__0=10.0.0.0/33",
				"Service__Database__DbType=sqlserver",
				"Service__Security__Jwt__SigningKey=",
			},
			want: []string{
				"Service:Securty (from appsettings.json) is not a setting; did you mean Service:Security?",
				`Service:Http:TrustedProxies:0 "10.0.0.0/33" is not an IP address or CIDR block (for example 10.0.0.0/8 or 192.0.2.7)`,
				"Service:Database:DbType SqlServer is refused: the kernel has no tested SQL Server path " +
					"(ent, its data layer, has no SQL Server dialect); valid values: Sqlite, MySql, PostgreSQL",
				"Service:Security:Jwt:SigningKey is required in Production (or the key ring SigningKeys)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.file != "" {
				write(t, filepath.Join(dir, "appsettings.json"), tt.file)
			}
			t.Setenv("ADMINKERNEL_ENVIRONMENT", "Production")
			t.Setenv("Service__Security__Jwt__SigningKey", signingKey)
			t.Setenv("Service__Http__ListenAddress", "http://127.0.0.1:0")
			for _, kv := range tt.environ {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			out, _, cfgErr := run(t, ctx, host.Options{}, "config", "--content-root", dir)
			var settings map[string]any
			if err := json.Unmarshal([]byte(out), &settings); err != nil || settings["Environment"] != "Production" {
				t.Errorf("config did not print the settings (%v):\n%s", err, out)
			}
			_, _, serveErr := run(t, ctx, host.Options{}, "serve", "--content-root", dir)
			for cmd, err := range map[string]error{"config": cfgErr, "serve": serveErr} {
				var ve *config.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("%s = %v, want the settings refused", cmd, err)
				}
				if strings.Join(ve.Problems, "\n") != strings.Join(tt.want, "\n") {
					t.Errorf("%s problems:\n%s\nwant:\n%s", cmd, strings.Join(ve.Problems, "\n"), strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}

// TestConfigAndErrorsOffline: Production without a signing key and with an
// unreachable PostgreSQL server. `config` prints the settings and fails on
// the missing key alone (it opens nothing); `errors` prints the catalog and
// succeeds (it reads no settings at all).
func TestConfigAndErrorsOffline(t *testing.T) {
	dir := t.TempDir()
	// Settings that would break anything reading them: errors must not.
	write(t, filepath.Join(dir, "appsettings.json"), `{"Service": {"Database": {"DbType": "PostgreSQL",
		"ConnectionString": "Host=127.0.0.1;Port=1;Database=nowhere;Username=u;Password=Db#Secret-9"}}}`)
	t.Setenv("ADMINKERNEL_ENVIRONMENT", "Production")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	out, _, err := run(t, ctx, host.Options{}, "config", "--content-root", dir)
	var ve *config.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || !strings.Contains(ve.Problems[0], "Service:Security:Jwt:SigningKey is required in Production") {
		t.Fatalf("config = %v, want exactly the missing signing key", err)
	}
	if !strings.Contains(out, `"DbType": "PostgreSQL"`) || !strings.Contains(out, "Port=1") || strings.Contains(out, "Db#Secret-9") {
		t.Fatalf("config printed:\n%s", out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("config took %s: it must not try to reach the database", d)
	}

	out, _, err = run(t, ctx, host.Options{}, "errors", "--content-root", dir, "--environment", "Production")
	if err != nil {
		t.Fatalf("errors: %v", err)
	}
	if !strings.Contains(out, "40001") || !strings.Contains(out, "PasswordWrong") {
		t.Fatalf("errors output lacks the catalog:\n%s", out)
	}
	// A settings file errors does not read may even be malformed.
	write(t, filepath.Join(dir, "appsettings.json"), `{"Service": `)
	if _, _, err := run(t, ctx, host.Options{}, "errors", "--content-root", dir, "--json"); err != nil {
		t.Fatalf("errors with a malformed settings file: %v", err)
	}
}

// TestConfigPrintsWarnings: outside Production a misspelled key is a
// warning: `config` succeeds and prints it on standard error (serve logs
// the same list: host's TestServeLogsTheSettingsWarnings).
func TestConfigPrintsWarnings(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "appsettings.json"), `{"Api": {"MaxPageSise": 50}}`)
	_, errOut, err := run(t, context.Background(), host.Options{}, "config", "--content-root", dir, "--environment", "Development")
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	want := "warning: Api:MaxPageSise (from appsettings.json) is not a setting; did you mean Api:MaxPageSize?"
	if !strings.Contains(errOut, want) {
		t.Fatalf("config stderr lacks %q:\n%s", want, errOut)
	}
}

// TestMigrateReportsAMisspelledLoggingKey: commands other than serve and
// config log the warnings too (Development), and refuse the key in
// Production.
func TestMigrateReportsAMisspelledLoggingKey(t *testing.T) {
	t.Setenv("Logging__Formt", "json")
	t.Setenv("Service__Security__Jwt__SigningKey", signingKey)
	want := "Logging:Formt (from environment) is not a setting; did you mean Logging:Format?"
	dir := t.TempDir()
	ddl, errOut, err := run(t, context.Background(), host.Options{}, "migrate", "--print", "--content-root", dir, "--environment", "Development")
	if err != nil || !strings.Contains(ddl, "sys_user") {
		t.Fatalf("migrate --print in Development: %v", err)
	}
	if !strings.Contains(errOut, "[WARN]") || !strings.Contains(errOut, want) {
		t.Fatalf("migrate did not warn %q:\n%s", want, errOut)
	}
	_, _, err = run(t, context.Background(), host.Options{}, "migrate", "--print", "--content-root", dir, "--environment", "Production")
	var ve *config.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0] != want {
		t.Fatalf("migrate --print in Production = %v, want the refusal of the key", err)
	}
}
