package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeFiles writes name → content into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string
		environment string
		environ     []string
		check       func(t *testing.T, c *Config)
	}{
		{
			name: "missing files give the defaults",
			check: func(t *testing.T, c *Config) {
				want := Defaults()
				want.ContentRoot = c.ContentRoot
				if !reflect.DeepEqual(*c, want) {
					t.Errorf("got %+v\nwant %+v", *c, want)
				}
			},
		},
		{
			name: "file, then environment file, then variables",
			files: map[string]string{
				"appsettings.json": `{"Service": {"Database": {"DbType": "MySql", "SlowSqlMillis": 100, "MaxOpenConns": 7}},
					"Logging": {"LogLevel": {"Default": "Warning"}}}`,
				"appsettings.Development.json": `{"Service": {"Database": {"DbType": "PostgreSQL", "SlowSqlMillis": 150}}}`,
			},
			environment: "Development",
			environ:     []string{"Service__Database__SlowSqlMillis=200"},
			check: func(t *testing.T, c *Config) {
				db := c.Service.Database
				if db.DbType != "PostgreSQL" || db.SlowSQLMillis != 200 || db.MaxOpenConns != 7 {
					t.Errorf("database = %+v, want PostgreSQL from the environment file, 200 from the variable, 7 from the file", db)
				}
				if got := c.Logging.LogLevel["Default"]; got != "Warning" {
					t.Errorf("LogLevel Default = %q, want Warning", got)
				}
				if c.API.MaxPageSize != 200 || c.Service.Cache.PermissionMinutes != 20 {
					t.Errorf("defaults lost: MaxPageSize %d, PermissionMinutes %d", c.API.MaxPageSize, c.Service.Cache.PermissionMinutes)
				}
			},
		},
		{
			name: "another environment's file is not read",
			files: map[string]string{
				"appsettings.Staging.json": `{"Service": {"Database": {"DbType": "MySql"}}}`,
			},
			environment: "Development",
			check: func(t *testing.T, c *Config) {
				if c.Service.Database.DbType != DBSqlite {
					t.Errorf("DbType = %q, want the default", c.Service.Database.DbType)
				}
			},
		},
		{
			name: "keys are case-insensitive across files",
			files: map[string]string{
				"appsettings.json":            `{"SERVICE": {"database": {"DBTYPE": "MySql", "slowsqlmillis": 1}}}`,
				"appsettings.Production.json": `{"service": {"Database": {"dbType": "PostgreSQL"}}}`,
			},
			check: func(t *testing.T, c *Config) {
				if c.Service.Database.DbType != "PostgreSQL" || c.Service.Database.SlowSQLMillis != 1 {
					t.Errorf("database = %+v", c.Service.Database)
				}
			},
		},
		{
			name:    "variable names are case-insensitive",
			environ: []string{"service__DATABASE__dbtype=MySql", "API__MAXPAGESIZE=50"},
			check: func(t *testing.T, c *Config) {
				if c.Service.Database.DbType != "MySql" || c.API.MaxPageSize != 50 {
					t.Errorf("DbType %q, MaxPageSize %d", c.Service.Database.DbType, c.API.MaxPageSize)
				}
			},
		},
		{
			name: "unrelated variables are ignored",
			environ: []string{"PATH=/bin", "Logging=1", "Other__Database__DbType=x", "Service__Nope__Deeper=1",
				"Service____DataDir=x", "NOEQUALS"},
			check: func(t *testing.T, c *Config) {
				if c.Service.DataDir != "data" {
					t.Errorf("DataDir = %q", c.Service.DataDir)
				}
			},
		},
		{
			name:    "arrays from variables",
			environ: []string{"Api__DisabledModules__0=Meta", "Api__Cors__AllowedOrigins__1=https://b", "Api__Cors__AllowedOrigins__0=https://a"},
			check: func(t *testing.T, c *Config) {
				if want := []string{"Meta"}; !reflect.DeepEqual(c.API.DisabledModules, want) {
					t.Errorf("DisabledModules = %q, want %q", c.API.DisabledModules, want)
				}
				if want := []string{"https://a", "https://b"}; !reflect.DeepEqual(c.API.Cors.AllowedOrigins, want) {
					t.Errorf("AllowedOrigins = %q, want %q", c.API.Cors.AllowedOrigins, want)
				}
			},
		},
		{
			name: "variables merge into file arrays by index",
			files: map[string]string{"appsettings.json": `{"Service": {"ExternalAuth": {"Oidc": [
				{"Code": "corp", "Authority": "https://idp.example", "ClientId": "kernel"},
				{"code": "partner", "authority": "https://partner.example", "clientid": "p"}]}}}`},
			environ: []string{
				"Service__ExternalAuth__Oidc__0__ClientSecret=from-env",
				"Service__ExternalAuth__Oidc__1__CLIENTID=p2",
				"Service__ExternalAuth__Oidc__2__Code=third",
			},
			check: func(t *testing.T, c *Config) {
				o := c.Service.ExternalAuth.Oidc
				if len(o) != 3 {
					t.Fatalf("got %d Oidc entries, want 3: %+v", len(o), o)
				}
				if o[0].Code != "corp" || o[0].ClientID != "kernel" || o[0].ClientSecret.Reveal() != "from-env" {
					t.Errorf("Oidc[0] = %+v", o[0])
				}
				if o[1].Code != "partner" || o[1].ClientID != "p2" || o[2].Code != "third" {
					t.Errorf("Oidc[1], [2] = %+v, %+v", o[1], o[2])
				}
			},
		},
		{
			name: "a JSON array replaces an earlier one",
			files: map[string]string{
				"appsettings.json":            `{"Api": {"Cors": {"AllowedOrigins": ["https://a", "https://b"]}}}`,
				"appsettings.Production.json": `{"Api": {"Cors": {"AllowedOrigins": ["https://c"]}}}`,
			},
			check: func(t *testing.T, c *Config) {
				if want := []string{"https://c"}; !reflect.DeepEqual(c.API.Cors.AllowedOrigins, want) {
					t.Errorf("AllowedOrigins = %q, want %q", c.API.Cors.AllowedOrigins, want)
				}
			},
		},
		{
			name: "map sections keep the key spelling of the file",
			files: map[string]string{"appsettings.json": `{
				"service": {"externalAuth": {
					"enterpriseChat": {"CorpId": "ww1", "AgentId": 1000002, "CorpSecret": "s"},
					"PluginSha256": {"enterprise_chat": "abc"}}},
				"logging": {"loglevel": {"default": "Warning", "AdminKernel.Sql": "Debug"}}}`},
			environ: []string{"Service__ExternalAuth__EnterpriseChat__corpid=ww2", "Service__ExternalAuth__TeamChat__ClientId=tc"},
			check: func(t *testing.T, c *Config) {
				ea := c.Service.ExternalAuth
				if want := (VendorSettings{"CorpId": "ww2", "AgentId": "1000002", "CorpSecret": "s"}); !reflect.DeepEqual(ea.EnterpriseChat, want) {
					t.Errorf("EnterpriseChat = %v, want %v", ea.EnterpriseChat, want)
				}
				if want := (VendorSettings{"ClientId": "tc"}); !reflect.DeepEqual(ea.ProviderSection("team_chat"), want) {
					t.Errorf("TeamChat = %v, want %v", ea.TeamChat, want)
				}
				if ea.PluginSHA256["enterprise_chat"] != "abc" {
					t.Errorf("PluginSha256 = %v", ea.PluginSHA256)
				}
				if want := map[string]string{"Default": "Warning", "AdminKernel.Sql": "Debug"}; !reflect.DeepEqual(c.Logging.LogLevel, want) {
					t.Errorf("LogLevel = %v, want %v", c.Logging.LogLevel, want)
				}
			},
		},
		{
			name: "unknown keys and nulls are ignored",
			files: map[string]string{"appsettings.json": "\ufeff" + `{"Extra": {"a": [1, 2]}, "Service": {"Nope": 1,
				"Database": {"Whatever": [1], "DbType": null}, "Cache": null, "Snowflake": {"WorkerId": 5}}}`},
			check: func(t *testing.T, c *Config) {
				if c.Service.Database.DbType != DBSqlite || c.Service.Cache.PermissionMinutes != 20 || c.Service.Snowflake.WorkerID != 5 {
					t.Errorf("got %+v", c.Service)
				}
			},
		},
		{
			name:        "environment and absolute content root are set",
			environment: "development",
			check: func(t *testing.T, c *Config) {
				if c.Environment != Development || !filepath.IsAbs(c.ContentRoot) {
					t.Errorf("Environment %q, ContentRoot %q", c.Environment, c.ContentRoot)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			c, err := Load(LoadOptions{ContentRoot: dir, Environment: tt.environment, Environ: tt.environ})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.ContentRoot != dir {
				t.Errorf("ContentRoot = %q, want %q", c.ContentRoot, dir)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		environ []string
		want    []string
	}{
		{
			name:    "type error in a variable names the key",
			environ: []string{"Service__Database__SlowSqlMillis=abc"},
			want:    []string{"Service:Database:SlowSqlMillis", `"abc"`, "integer"},
		},
		{
			name: "type errors in a file name every key",
			files: map[string]string{"appsettings.json": `{"service": {"snowflake": {"workerid": "x"},
				"externalauth": {"oidc": [{"usepkce": "maybe"}]}}, "api": {"maxpagesize": {"a": 1}}}`},
			want: []string{"Service:Snowflake:WorkerId", "Service:ExternalAuth:Oidc:0:UsePkce", "Api:MaxPageSize: expected an integer, got an object"},
		},
		{
			name:  "malformed appsettings.json names file, line and column",
			files: map[string]string{"appsettings.json": "{\n  \"Service\": {\n    \"Database\": }\n}\n"},
			want:  []string{"appsettings.json: line 3, column 17:", "invalid character '}'"},
		},
		{
			name:  "malformed environment file",
			files: map[string]string{"appsettings.Production.json": `{"Service": {"DataDir": "x",}}`},
			want:  []string{"appsettings.Production.json: line 1, column 29:"},
		},
		{
			name:  "truncated file",
			files: map[string]string{"appsettings.json": "{\n  \"Service\": {"},
			want:  []string{"appsettings.json: line 2, column 14:", "unexpected end"},
		},
		{
			name:  "a file that is not an object",
			files: map[string]string{"appsettings.json": `["Service"]`},
			want:  []string{"appsettings.json: line 1, column 1:", "must hold a JSON object"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			_, err := Load(LoadOptions{ContentRoot: dir, Environ: tt.environ})
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadTypeErrorIsValidationError(t *testing.T) {
	_, err := Load(LoadOptions{ContentRoot: t.TempDir(), Environ: []string{
		"Service__Cache__PermissionMinutes=soon", "Service__Security__Captcha__Enabled=perhaps",
		"Service__Security__Jwt__SigningKey=" + strings.Repeat("k", 64)}})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 2 {
		t.Fatalf("got %v, want a *ValidationError with two problems", err)
	}
}

func TestResolveEnvironment(t *testing.T) {
	tests := []struct {
		flag    string
		environ []string
		want    string
	}{
		{"", nil, Production},
		{"", []string{"ADMINKERNEL_ENVIRONMENT=development"}, Development},
		{"", []string{"OTHER=1", "ADMINKERNEL_ENVIRONMENT=STAGING"}, Staging},
		{"", []string{"ADMINKERNEL_ENVIRONMENT="}, Production},
		{"production", []string{"ADMINKERNEL_ENVIRONMENT=Development"}, Production},
		{"Development", nil, Development},
		{"qa", nil, "qa"},
		{"", []string{"adminkernel_environment=Development"}, Production},
	}
	for _, tt := range tests {
		t.Run(tt.flag+"|"+strings.Join(tt.environ, ","), func(t *testing.T) {
			if got := ResolveEnvironment(tt.flag, tt.environ); got != tt.want {
				t.Errorf("ResolveEnvironment(%q, %q) = %q, want %q", tt.flag, tt.environ, got, tt.want)
			}
		})
	}
}

// A type error does not hide the other problems: Load reports the type
// errors and what Validate finds in the rest of the tree in one pass (the
// keys that failed hold their defaults meanwhile, so they add nothing).
func TestLoadReportsEveryProblemAtOnce(t *testing.T) {
	_, err := Load(LoadOptions{ContentRoot: t.TempDir(), Environment: Production, Environ: []string{
		"Service__Database__SlowSqlMillis=abc",
		"Service__Telemetry__MetricsBearerToken=short",
		"Service__Http__MaxConnections=-3",
		"Service__Databse__DbType=Sqlite",
	}})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	for _, want := range []string{
		`Service:Database:SlowSqlMillis: "abc" is not an integer`,
		"Service:Telemetry:MetricsBearerToken must be at least 32 characters",
		"Service:Http:MaxConnections",
		"Service:Databse",
	} {
		n := 0
		for _, p := range ve.Problems {
			if strings.Contains(p, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d problems mention %q, want 1:\n%s", n, want, err)
		}
	}
}
