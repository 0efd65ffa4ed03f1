package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
	"github.com/adminkernel/kernel/internal/vendortest"
)

// installPlugin puts the SDK's test plugin (a well-behaved provider that
// wants ClientId and ClientSecret) into dir as adminkernel-provider-code.
func installPlugin(t *testing.T, dir, code string) {
	t.Helper()
	vendortest.Install(t, dir, code, vendortest.TestPlugin)
}

// installScript puts an executable that is no plugin at all into dir as
// adminkernel-provider-code: launching it would fail, so a row that is
// not "not launched" shows it was not launched.
func installScript(t *testing.T, dir, code string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "adminkernel-provider-"+code), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil { //nolint:gosec // must be executable
		t.Fatal(err)
	}
}

// providerRows runs adminkernel providers --json with args in a fresh
// content root and returns the rows and the command's error.
func providerRows(t *testing.T, args ...string) ([]cli.ProviderRow, error) {
	t.Helper()
	out, stderr, err := run(t, context.Background(), host.Options{}, append([]string{"providers", "--json", "--content-root", t.TempDir()}, args...)...)
	var rows []cli.ProviderRow
	if jerr := json.Unmarshal([]byte(out), &rows); jerr != nil {
		t.Fatalf("providers output %q is not JSON (%v); stderr %q; error %v", out, jerr, stderr, err)
	}
	return rows, err
}

func rowOf(rows []cli.ProviderRow, code string) (cli.ProviderRow, bool) {
	for _, r := range rows {
		if r.Code == code {
			return r, true
		}
	}
	return cli.ProviderRow{}, false
}

// providers --no-launch reads only the settings and the plugin folder: in
// Production without a signing key and with a database nobody answers,
// where serve's validation fails, it lists the providers.
func TestProvidersNoLaunchNeedsNoSecretsNorDatabase(t *testing.T) {
	dir := t.TempDir()
	installScript(t, dir, "enterprise_chat")
	installScript(t, dir, "acme")
	for k, v := range map[string]string{
		"Service__Database__DbType":                       "PostgreSQL",
		"Service__Database__ConnectionString":             "Host=127.0.0.1;Port=1;Database=nowhere;Username=u;Password=p",
		"Service__ExternalAuth__PluginDir":                dir,
		"Service__ExternalAuth__CallbackBaseUrl":          "https://admin.example.com",
		"Service__ExternalAuth__Plugins__acme__ClientId":  "acme-client",
		"Service__ExternalAuth__Plugins__ghost__ClientId": "ghost-client",
	} {
		t.Setenv(k, v)
	}
	// The precondition: the whole validation refuses these settings.
	cfg, err := config.Load(config.LoadOptions{ContentRoot: t.TempDir(), Environment: config.Production, Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "SigningKey") {
		t.Fatalf("Validate() = %v; the test needs settings serve refuses for the signing key", err)
	}

	rows, err := providerRows(t, "--environment", "Production", "--no-launch")
	if err != nil {
		t.Fatalf("providers --no-launch = %v", err)
	}
	want := map[string]struct{ status, detail string }{
		"enterprise_chat": {"unconfigured", "no settings: Service:ExternalAuth:EnterpriseChat (or Service:ExternalAuth:Plugins:enterprise_chat) is empty"},
		"acme":            {"found", ""},
		"ghost":           {"missing", "Service:ExternalAuth:Plugins:ghost is set, but the plugin folder " + dir + " has no plugin binary adminkernel-provider-ghost"},
	}
	if len(rows) != len(want) {
		t.Errorf("rows = %+v, want %d", rows, len(want))
	}
	for code, w := range want {
		r, ok := rowOf(rows, code)
		if !ok || r.Status != w.status || r.Detail != w.detail || r.Source != "plugin" {
			t.Errorf("row %s = %+v (found %v), want status %q, detail %q", code, r, ok, w.status, w.detail)
		}
	}
	// --check fails for the missing ghost only.
	_, err = providerRows(t, "--environment", "Production", "--no-launch", "--check")
	if err == nil || !strings.Contains(err.Error(), "ghost") || strings.Contains(err.Error(), "enterprise_chat") || strings.Contains(err.Error(), "acme") {
		t.Errorf("providers --no-launch --check = %v, want a failure naming ghost only", err)
	}
}

// providers --check passes when every configured provider is ready and
// nothing is missing or skipped; unconfigured plugins do not count.
func TestProvidersCheck(t *testing.T) {
	tests := []struct {
		name    string
		files   func(t *testing.T, dir string)
		env     map[string]string
		dir     string // PluginDir; "" = the folder files wrote to
		rows    map[string]string
		failing string // "" = --check passes; else the error names it
	}{
		{
			name:  "unconfigured plugins are not started and do not fail",
			files: func(t *testing.T, dir string) { installScript(t, dir, "team_chat"); installScript(t, dir, "code_host") },
			rows:  map[string]string{"team_chat": "unconfigured", "code_host": "unconfigured"},
		},
		{
			name:  "a configured plugin is launched and ready",
			files: func(t *testing.T, dir string) { installPlugin(t, dir, "acme"); installScript(t, dir, "team_chat") },
			env: map[string]string{
				"Service__ExternalAuth__Plugins__acme__ClientId":     "acme-client",
				"Service__ExternalAuth__Plugins__acme__ClientSecret": "acme-secret",
			},
			rows: map[string]string{"acme": "ready", "team_chat": "unconfigured"},
		},
		{
			name:    "a configured plugin that refuses its settings is misconfigured",
			files:   func(t *testing.T, dir string) { installPlugin(t, dir, "acme") },
			env:     map[string]string{"Service__ExternalAuth__Plugins__acme__ClientId": "acme-client"},
			rows:    map[string]string{"acme": "misconfigured"},
			failing: "acme",
		},
		{
			name:    "a configured vendor without its binary is missing",
			files:   func(t *testing.T, dir string) { installScript(t, dir, "code_host") },
			env:     map[string]string{"Service__ExternalAuth__EnterpriseChat__CorpId": "corp"},
			rows:    map[string]string{"enterprise_chat": "missing", "code_host": "unconfigured"},
			failing: "enterprise_chat",
		},
		{
			name:    "an explicit plugin folder that does not exist",
			dir:     filepath.Join(os.TempDir(), "adminkernel-no-such-plugin-folder"),
			rows:    map[string]string{"": "missing"},
			failing: "adminkernel-no-such-plugin-folder",
		},
		{
			name: "a skipped file",
			files: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "README"), "not a plugin")
			},
			rows:    map[string]string{"": "skipped"},
			failing: "README",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = t.TempDir()
			}
			if tt.files != nil {
				tt.files(t, dir)
			}
			t.Setenv("Service__ExternalAuth__PluginDir", dir)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			for _, mode := range [][]string{nil, {"--no-launch"}} {
				rows, err := providerRows(t, append([]string{"--environment", "Development", "--check"}, mode...)...)
				for code, st := range tt.rows {
					if mode != nil && (st == "ready" || st == "misconfigured") {
						st = "found"
					}
					if r, ok := rowOf(rows, code); !ok || r.Status != st {
						t.Errorf("%v: row %q = %+v, want %s (rows %+v)", mode, code, r, st, rows)
					}
				}
				if len(rows) != len(tt.rows) {
					t.Errorf("%v: rows %+v, want %d", mode, rows, len(tt.rows))
				}
				// Without launching, a plugin cannot say it refuses its settings.
				wantFail := tt.failing != "" && (mode == nil || tt.rows[tt.failing] != "misconfigured")
				switch {
				case !wantFail && err != nil:
					t.Errorf("%v: --check = %v, want success", mode, err)
				case wantFail && (err == nil || !strings.Contains(err.Error(), tt.failing)):
					t.Errorf("%v: --check = %v, want a failure naming %q", mode, err, tt.failing)
				}
			}
		})
	}
}
