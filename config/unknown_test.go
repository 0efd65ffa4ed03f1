package config

import (
	"errors"
	"strings"
	"testing"
)

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		environ []string
		want    []string // the unknown-key messages, in order
	}{
		{
			name:  "misspelled key in a file",
			files: map[string]string{"appsettings.json": `{"Service": {"Http": {"ListenAdress": "http://:8080"}}}`},
			want:  []string{"Service:Http:ListenAdress (from appsettings.json) is not a setting; did you mean Service:Http:ListenAddress?"},
		},
		{
			name:  "setting at the wrong level",
			files: map[string]string{"appsettings.Development.json": `{"service": {"listenAddress": "http://:8080"}}`},
			want:  []string{"Service:listenAddress (from appsettings.Development.json) is not a setting; did you mean Service:Http:ListenAddress?"},
		},
		{
			name:    "environment variables, any case",
			environ: []string{"SERVICE__DATABASE__DBTYP=MySql", "Api__MaxPageSise=10"},
			want: []string{
				"Api:MaxPageSise (from environment) is not a setting; did you mean Api:MaxPageSize?",
				"Service:Database:DBTYP (from environment) is not a setting; did you mean Service:Database:DbType?",
			},
		},
		{
			name:    "inside array elements, by index",
			environ: []string{"Service__ExternalAuth__Oidc__0__ClientSecrt=x", "Service__ExternalAuth__Oidc__0__Authority=https://id"},
			files:   map[string]string{"appsettings.json": `{"Service": {"Security": {"Jwt": {"SigningKeys": [{"Kid": "a", "Key": "b"}]}}}}`},
			want: []string{
				"Service:Security:Jwt:SigningKeys:0:Kid (from appsettings.json) is not a setting; did you mean Service:Security:Jwt:SigningKeys:0:Id?",
				"Service:ExternalAuth:Oidc:0:ClientSecrt (from environment) is not a setting; did you mean Service:ExternalAuth:Oidc:0:ClientSecret?",
			},
		},
		{
			name:    "an array entry that is not an index",
			environ: []string{"Service__Http__TrustedProxies__first=10.0.0.1"},
			want:    []string{"Service:Http:TrustedProxies:first (from environment) is not a setting; it is ignored"},
		},
		{
			name:    "nothing close",
			environ: []string{"Service__Frobnicator=1"},
			want:    []string{"Service:Frobnicator (from environment) is not a setting; it is ignored"},
		},
		{
			name:  "several equally close settings are all named",
			files: map[string]string{"appsettings.json": `{"Service": {"Enabled": true}}`},
			want: []string{"Service:Enabled (from appsettings.json) is not a setting; did you mean " +
				"Service:Database:SqlLog:Enabled, Service:Cache:Redis:Tls:Enabled or Service:Security:Captcha:Enabled?"},
		},
		{
			name: "map settings hold free keys; other top-level sections are not ours",
			files: map[string]string{"appsettings.json": `{"AllowedHosts": "*", "Logging": {"LogLevel": {"Microsoft.AspNetCore": "Warning"}},
				"Service": {"ExternalAuth": {"EnterpriseChat": {"CorpId": "c"}, "Plugins": {"acme": {"AnyKey": "v"}},
				"PluginSha256": {"acme": "00"}}}}`},
			environ: []string{"PATH=/bin", "Servce__Http__ListenAddress=x", "Service__ExternalAuth__Plugins__acme__Tenant=t"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(LoadOptions{ContentRoot: writeFiles(t, tt.files), Environment: Development, Environ: tt.environ})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range c.unknown {
				got = append(got, u.message())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("unknown keys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			// Development: warnings, not problems.
			if !equal(c.Warnings(), tt.want) {
				t.Errorf("Warnings = %q, want %q", c.Warnings(), tt.want)
			}
		})
	}
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// TestUnknownKeysRefusedInProduction: in Production an unknown key is a
// problem of Validate (Service, Api, Logging) and of the maintenance
// commands' subsets (Logging), not a warning; in Development and Staging
// Validate accepts them.
func TestUnknownKeysRefusedInProduction(t *testing.T) {
	environ := []string{
		"Service__Security__Jwt__SigningKey=" + strings.Repeat("k", 32),
		"Service__Http__ListenAdress=http://:1",
		"Api__Cors__AllowedOrigin=https://a",
		"Logging__Formt=json",
	}
	wantAll := []string{
		"Api:Cors:AllowedOrigin (from environment) is not a setting; did you mean Api:Cors:AllowedOrigins?",
		"Service:Http:ListenAdress (from environment) is not a setting; did you mean Service:Http:ListenAddress?",
		"Logging:Formt (from environment) is not a setting; did you mean Logging:Format?",
	}
	for _, env := range []string{Development, Staging, Production} {
		t.Run(env, func(t *testing.T) {
			c, err := Load(LoadOptions{ContentRoot: t.TempDir(), Environment: env, Environ: environ})
			if err != nil {
				t.Fatal(err)
			}
			checks := []struct {
				name     string
				validate func() error
				want     []string
			}{
				{"Validate", c.Clone().Validate, wantAll},
				{"ValidateDatabase", c.Clone().ValidateDatabase, wantAll[2:]},
				{"ValidateStores", c.Clone().ValidateStores, wantAll[2:]},
			}
			for _, ch := range checks {
				err := ch.validate()
				if env != Production {
					if err != nil {
						t.Errorf("%s in %s: %v", ch.name, env, err)
					}
					continue
				}
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("%s in Production = %v, want a *ValidationError", ch.name, err)
				}
				if !equal(ve.Problems, ch.want) {
					t.Errorf("%s problems:\n%s\nwant:\n%s", ch.name, strings.Join(ve.Problems, "\n"), strings.Join(ch.want, "\n"))
				}
			}
			if env == Production {
				if w := c.Warnings(); len(w) != 0 {
					t.Errorf("Production warnings = %q, want none (they are problems there)", w)
				}
			} else if !equal(c.Warnings(), []string{wantAll[0], wantAll[2], wantAll[1]}) {
				// Load's order: the keys of a source sorted.
				t.Errorf("%s warnings = %q", env, c.Warnings())
			}
		})
	}
}

func TestHTTPSListenAddressWarns(t *testing.T) {
	for _, env := range []string{Development, Production} {
		c := validConfig()
		c.Environment = env
		c.Service.HTTP.ListenAddress = "https://0.0.0.0:5443"
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: an https ListenAddress is refused: %v", env, err)
		}
		w := c.Warnings()
		if len(w) != 1 || !strings.Contains(w[0], "serves plain HTTP") || !strings.Contains(w[0], "TLS must terminate in front of it") {
			t.Errorf("%s warnings = %q, want the TLS warning", env, w)
		}
		if c.ListenHostPort() != "0.0.0.0:5443" {
			t.Errorf("ListenHostPort = %q", c.ListenHostPort())
		}
	}
	c := validConfig()
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("http ListenAddress warnings = %q, want none", w)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"listenadress", "listenaddress", 1},
		{"kitten", "sitting", 3}, {"dbtyp", "dbtype", 1}, {"数据", "数据库", 1},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestUnknownKeysReportedWithTypeErrors: a value of the wrong type stops
// Load; in Production the unknown keys are reported with it, all at once
// (and only once: Validate's pass over the rest reports them, not Load).
func TestUnknownKeysReportedWithTypeErrors(t *testing.T) {
	environ := []string{"Service__Database__SlowSqlMillis=soon", "Service__Database__DbTyp=MySql",
		// Otherwise its absence is a third problem of Production.
		"Service__Security__Jwt__SigningKey=" + strings.Repeat("k", 64)}
	_, err := Load(LoadOptions{ContentRoot: t.TempDir(), Environment: Production, Environ: environ})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 2 ||
		!strings.Contains(ve.Problems[0], "Service:Database:SlowSqlMillis") ||
		ve.Problems[1] != "Service:Database:DbTyp (from environment) is not a setting; did you mean Service:Database:DbType?" {
		t.Fatalf("Load = %v, want the type error and the unknown key", err)
	}
	_, err = Load(LoadOptions{ContentRoot: t.TempDir(), Environment: Development, Environ: environ})
	if !errors.As(err, &ve) || len(ve.Problems) != 1 {
		t.Fatalf("Development Load = %v, want the type error alone (unknown keys are warnings there)", err)
	}
}
