package config

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Service:ExternalAuth:Plugins:{code}:{Key} from a file and from the
// environment, merged case-insensitively, and how ProviderSection picks it.
func TestPluginsSectionLoad(t *testing.T) {
	dir := writeFiles(t, map[string]string{"appsettings.json": `{"Service": {"ExternalAuth": {
		"Plugins": {"acme": {"ClientId": "acme-app", "BaseUrl": "https://login.acme.example"},
		            "code_host": {"ClientId": "Iv1.plugins"}},
		"TeamChat": {"ClientId": "tc-own"}}}}`})
	c, err := Load(LoadOptions{ContentRoot: dir, Environment: Development, Environ: []string{
		"Service__ExternalAuth__Plugins__acme__ClientSecret=acme-secret-value",
		"SERVICE__EXTERNALAUTH__PLUGINS__ACME__CLIENTID=acme-app-from-env", // keys are case-insensitive: overrides the file
		"Service__ExternalAuth__Plugins__beta_2__Token=beta-token",
		"Service__ExternalAuth__Plugins__team_chat__ClientId=tc-plugins",
	}})
	if err != nil {
		t.Fatal(err)
	}
	ea := &c.Service.ExternalAuth
	tests := []struct {
		code string
		want VendorSettings
	}{
		{"acme", VendorSettings{"ClientId": "acme-app-from-env", "BaseUrl": "https://login.acme.example", "ClientSecret": "acme-secret-value"}},
		{"ACME", VendorSettings{"ClientId": "acme-app-from-env", "BaseUrl": "https://login.acme.example", "ClientSecret": "acme-secret-value"}},
		{"beta_2", VendorSettings{"Token": "beta-token"}},
		// A vendor code without its own section reads Plugins:{code}.
		{"code_host", VendorSettings{"ClientId": "Iv1.plugins"}},
		// With both set the own section wins here, and Validate refuses.
		{"team_chat", VendorSettings{"ClientId": "tc-own"}},
		{"enterprise_chat", nil},
		{"gamma", nil},
	}
	for _, tt := range tests {
		if got := ea.ProviderSection(tt.code); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ProviderSection(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
	if len(ea.Plugins) != 4 {
		t.Errorf("Plugins = %v, want acme, beta_2, code_host and team_chat (one key per code)", ea.Plugins)
	}
	err = c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 ||
		!strings.Contains(ve.Problems[0], "Service:ExternalAuth:Plugins:team_chat and Service:ExternalAuth:TeamChat are both set") {
		t.Errorf("Validate() = %v, want one problem: team_chat set twice", err)
	}
}

func TestPluginsSectionValidate(t *testing.T) {
	tests := []struct {
		name    string
		plugins map[string]VendorSettings
		own     VendorSettings // Service:ExternalAuth:CodeHost
		want    []string
	}{
		{name: "third-party codes", plugins: map[string]VendorSettings{"acme": {"ClientId": "a"}, "Corp_SSO_2": {"X": "y"}}},
		{name: "a vendor code instead of its own section", plugins: map[string]VendorSettings{"code_host": {"ClientId": "a"}}},
		{name: "an empty entry next to the own section", plugins: map[string]VendorSettings{"code_host": {}}, own: VendorSettings{"ClientId": "a"}},
		{name: "a vendor code in both", plugins: map[string]VendorSettings{"Code_Host": {"ClientId": "a"}}, own: VendorSettings{"ClientId": "b"},
			want: []string{"Service:ExternalAuth:Plugins:Code_Host and Service:ExternalAuth:CodeHost are both set; give the settings of code_host in one of them"}},
		{name: "not a code", plugins: map[string]VendorSettings{"acme-sso": {"A": "b"}, "a.b": {}, strings.Repeat("x", 33): {}},
			want: []string{`Plugins:a.b: "a.b" is not a provider code`, `Plugins:acme-sso: "acme-sso" is not a provider code`, `"` + strings.Repeat("x", 33) + `" is not a provider code`}},
		{name: "one code twice", plugins: map[string]VendorSettings{"acme": {"A": "1"}, "ACME": {"A": "2"}},
			want: []string{"Service:ExternalAuth:Plugins:acme: the same code as Service:ExternalAuth:Plugins:ACME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			c.Service.ExternalAuth.CallbackBaseURL = "https://kernel.example.com"
			c.Service.ExternalAuth.Plugins = tt.plugins
			c.Service.ExternalAuth.CodeHost = tt.own
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want valid", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d problems", err, len(tt.want))
			}
			for _, w := range tt.want {
				if !strings.Contains(strings.Join(ve.Problems, "\n"), w) {
					t.Errorf("problems %q lack %q", ve.Problems, w)
				}
			}
		})
	}
}

// A third-party section counts as a configured provider: Production then
// requires CallbackBaseUrl.
func TestPluginsSectionCountsAsConfigured(t *testing.T) {
	c := validConfig()
	c.Service.ExternalAuth.Plugins = map[string]VendorSettings{"acme": {"ClientId": ""}}
	if c.ExternalProvidersConfigured() {
		t.Error("a Plugins entry with only empty values counts as configured")
	}
	c.Service.ExternalAuth.Plugins["acme"]["ClientId"] = "a"
	if !c.ExternalProvidersConfigured() {
		t.Fatal("a Plugins entry with a value does not count as configured")
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "CallbackBaseUrl is required") {
		t.Errorf("Validate() = %v, want CallbackBaseUrl required", err)
	}
}

func TestPluginsSectionMaskedAndCloned(t *testing.T) {
	c := validConfig()
	c.Service.ExternalAuth.Plugins = map[string]VendorSettings{
		"acme": {"ClientId": "acme-client-visible", "ClientSecret": "acme-s3cret-value", "ApiToken": "acme-t0ken-value",
			"BaseUrl": "https://user:acme-urlpass@login.acme.example"},
	}
	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"acme-s3cret-value", "acme-t0ken-value", "acme-urlpass"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("adminkernel config prints %q:\n%s", secret, out.String())
		}
	}
	for _, visible := range []string{`"Plugins": {`, `"acme": {`, `"ClientId": "acme-client-visible"`, `"ClientSecret": "***"`} {
		if !strings.Contains(out.String(), visible) {
			t.Errorf("effective settings lack %s:\n%s", visible, out.String())
		}
	}

	cl := c.Clone()
	cl.Service.ExternalAuth.Plugins["acme"]["ClientId"] = "changed"
	cl.Service.ExternalAuth.Plugins["other"] = VendorSettings{}
	if c.Service.ExternalAuth.Plugins["acme"]["ClientId"] != "acme-client-visible" || len(c.Service.ExternalAuth.Plugins) != 1 {
		t.Errorf("Clone shares Plugins with the original: %v", c.Service.ExternalAuth.Plugins)
	}
}

// A plugin is configured when its section holds a value that is not blank;
// ConfiguredPlugins lists those codes (vendor codes lower-cased, from
// either form of their section), and the CallbackBaseUrl rule counts only
// them.
func TestConfiguredPlugins(t *testing.T) {
	tests := []struct {
		name       string
		set        func(ea *ExternalAuth)
		want       []string
		configured bool // ExternalProvidersConfigured
	}{
		{"defaults", func(*ExternalAuth) {}, nil, false},
		{"blank values only", func(ea *ExternalAuth) {
			ea.TeamChat = VendorSettings{"ClientId": "  ", "ClientSecret": ""}
			ea.Plugins = map[string]VendorSettings{"acme": {"ClientId": "\t"}, "beta": {}}
		}, nil, false},
		{"own sections and Plugins", func(ea *ExternalAuth) {
			ea.CodeHost = VendorSettings{"ClientId": "Iv1"}
			ea.Plugins = map[string]VendorSettings{"SOCIAL_CHAT": {"AppId": "wx"}, "acme": {"ClientId": "a"}, "beta": {"x": ""}}
		}, []string{"acme", "code_host", "social_chat"}, true},
		{"an OIDC entry only", func(ea *ExternalAuth) {
			ea.Oidc = []OIDCProvider{{Authority: "https://idp.example", ClientID: "kernel"}}
		}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.set(&c.Service.ExternalAuth)
			if got := c.Service.ExternalAuth.ConfiguredPlugins(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ConfiguredPlugins() = %q, want %q", got, tt.want)
			}
			if got := c.ExternalProvidersConfigured(); got != tt.configured {
				t.Errorf("ExternalProvidersConfigured() = %v, want %v", got, tt.configured)
			}
			c.Environment = Production
			err := c.Validate()
			if required := err != nil && strings.Contains(err.Error(), "CallbackBaseUrl is required"); required != tt.configured {
				t.Errorf("Production Validate() = %v; CallbackBaseUrl required: %v, want %v", err, required, tt.configured)
			}
		})
	}
}

func TestSectionKey(t *testing.T) {
	var ea ExternalAuth
	for code, want := range map[string]string{
		"enterprise_chat": "Service:ExternalAuth:EnterpriseChat (or Service:ExternalAuth:Plugins:enterprise_chat)",
		"social_chat":     "Service:ExternalAuth:SocialChat (or Service:ExternalAuth:Plugins:social_chat)",
		"acme":            "Service:ExternalAuth:Plugins:acme",
	} {
		if got := ea.SectionKey(code); got != want {
			t.Errorf("SectionKey(%q) = %q, want %q", code, got, want)
		}
	}
}

// ValidateProviders checks the external-login settings only: no signing
// key and no database needed, but a bad provider setting is still refused
// and the OIDC defaults are applied.
func TestValidateProviders(t *testing.T) {
	c := Defaults()
	c.Environment = Production
	c.Service.Database.DbType = "PostgreSQL"
	c.Service.Database.ConnectionString = ""
	c.Service.ExternalAuth.Oidc = []OIDCProvider{{Authority: "https://idp.example", ClientID: "kernel"}}
	c.Service.ExternalAuth.CallbackBaseURL = "https://admin.example.com/"
	if err := c.Validate(); err == nil {
		t.Fatal("Validate() accepted Production without a signing key; the test needs settings it refuses")
	}
	if err := c.ValidateProviders(); err != nil {
		t.Fatalf("ValidateProviders() = %v, want nil", err)
	}
	if o := c.Service.ExternalAuth.Oidc[0]; o.Code != DefaultOIDCCode || o.Scopes != DefaultOIDCScopes {
		t.Errorf("OIDC defaults not applied: %+v", o)
	}
	c.Service.ExternalAuth.Plugins = map[string]VendorSettings{"bad code": {"x": "y"}}
	c.Service.ExternalAuth.CallbackBaseURL = ""
	err := c.ValidateProviders()
	for _, want := range []string{"Service:ExternalAuth:Plugins:bad code", "CallbackBaseUrl is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateProviders() = %v, want a problem mentioning %q", err, want)
		}
	}
}
