package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoad feeds Load random appsettings.json and
// appsettings.{Environment}.json content and environment variables
// (newline-separated KEY=value). Load, Validate, Clone and WriteEffective
// must never panic, an error must carry a message, and the printed
// effective settings must not show a secret value (a Secret other than
// ConnectionString, or a map entry under a sensitive name) unless the same
// text is shown anyway with every secret blanked.
func FuzzLoad(f *testing.F) {
	f.Add(`{}`, ``, `Development`, ``)
	f.Add(`{"Service":{"Database":{"DbType":"MySql","SlowSqlMillis":100}},"Logging":{"LogLevel":{"Default":"Warning"}}}`,
		`{"Service":{"Database":{"DbType":"PostgreSQL"}}}`, `Development`, "Service__Database__SlowSqlMillis=200")
	f.Add(`{"Service":{"Security":{"Jwt":{"SigningKey":"jwt-signing-key-0123456789abcdef0123"}}}}`, ``, `Production`,
		"Service__Seed__AdminPassword=Seed-Admin-Passw0rd!\nService__Security__Sms__WebhookSecret=webhook-secret-value-42")
	f.Add(`{"Service":{"ExternalAuth":{"Oidc":[{"Code":"corp","Authority":"https://idp.example","ClientId":"c","ClientSecret":"oidc-client-secret-xyz"}],`+
		`"EnterpriseChat":{"CorpId":"ww1","CorpSecret":"corp-secret-value-123"}}}}`,
		``, `Staging`, "Service__ExternalAuth__Oidc__1__Code=other\nService__ExternalAuth__Oidc__0__ClientSecret=override-secret-abc")
	f.Add(`{"Service":{"Database":{"SlowSqlMillis":"fast","MaxOpenConns":1e99}},"Api":{"MaxPageSize":-1}}`, `[1,2,3]`, `development`, "Service__Http__BodyLimitBytes=abc")
	f.Add("\xef\xbb\xbf{\"Service\":{\"Http\":{\"ListenAddress\":\"http://[::1]:0\"}}}", `{"Service":`, ``, "=\n__=x\nService__=y\nService____Database=z")
	f.Add(`{"service":{"database":{"dbtype":"sqlite","connectionstring":"Data Source=x.db;Password=cs-password-123"}}}`, `null`, `Custom`, "Service__Cache__Redis__Password=redis-password-xyz")
	f.Add(`{"Service":{"ExternalAuth":{"Oidc":{"0":{"Code":"a"},"x":{"Code":"b"}}}}}`, `{"Logging":{"LogLevel":{"ApiToken":"secret-looking-level"}}}`, `Development`, "Service__ExternalAuth__Oidc__99999999999__Code=big")
	f.Add(`[`+strings.Repeat(`[`, 100)+strings.Repeat(`]`, 100)+`]`, `"just a string"`, `../../etc`, "Logging__LogLevel__Default=Trace")
	f.Fuzz(func(t *testing.T, settings, envSettings, environment, environ string) {
		dir := t.TempDir()
		write := func(name, content string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				t.Skip("cannot write", name, err)
			}
		}
		if settings != "" {
			write("appsettings.json", settings)
		}
		env := normaliseEnvironment(environment)
		if envSettings != "" && env != "" && !strings.ContainsAny(env, "/\\\x00") && len(env) < 100 {
			write("appsettings."+env+".json", envSettings)
		}
		var vars []string
		if environ != "" {
			vars = strings.Split(environ, "\n")
		}
		cfg, err := Load(LoadOptions{ContentRoot: dir, Environment: environment, Environ: vars})
		if err != nil {
			if cfg != nil {
				t.Fatalf("Load returned a config and an error: %v", err)
			}
			if err.Error() == "" {
				t.Fatalf("Load returned an error without a message: %#v", err)
			}
			return
		}
		if cfg == nil {
			t.Fatal("Load returned neither a config nor an error")
		}
		clone := cfg.Clone()
		if !reflect.DeepEqual(clone, cfg) {
			t.Fatalf("Clone differs from the original")
		}
		if err := clone.Validate(); err != nil && err.Error() == "" {
			t.Fatalf("Validate returned an error without a message: %#v", err)
		}
		for _, c := range []*Config{cfg, clone} {
			checkEffectiveMasks(t, c)
		}
	})
}

// checkEffectiveMasks fails when WriteEffective shows a secret value that
// the same settings with every secret blanked do not show.
func checkEffectiveMasks(t *testing.T, c *Config) {
	t.Helper()
	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatalf("WriteEffective: %v", err)
	}
	blank := c.Clone()
	secrets := collectSecrets(reflect.ValueOf(blank).Elem(), "")
	var base bytes.Buffer
	if err := blank.WriteEffective(&base); err != nil {
		t.Fatalf("WriteEffective (blanked): %v", err)
	}
	for _, s := range secrets {
		v := strings.TrimSpace(s)
		if len(v) < 8 || strings.ContainsAny(v, "\"\\<>&\x7f") || !printableASCII(v) {
			continue // short or JSON-escaped values cannot be searched for reliably
		}
		if strings.Contains(out.String(), v) && !strings.Contains(base.String(), v) {
			t.Fatalf("the effective settings show the secret %q:\n%s", v, out.String())
		}
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// collectSecrets blanks, in place, every Secret except ConnectionString and
// every string map value under a sensitive name, returning the old values.
func collectSecrets(v reflect.Value, name string) []string {
	var out []string
	switch {
	case v.Type() == secretType:
		if name != "ConnectionString" && v.String() != "" {
			out = append(out, v.String())
			v.SetString("")
		}
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			out = append(out, collectSecrets(v.Elem(), name)...)
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if n := settingName(v.Type().Field(i)); n != "" {
				out = append(out, collectSecrets(v.Field(i), n)...)
			}
		}
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			out = append(out, collectSecrets(v.Index(i), name)...)
		}
	case v.Kind() == reflect.Map && v.Type().Elem().Kind() == reflect.String:
		for _, k := range v.MapKeys() {
			if SensitiveName(k.String()) && v.MapIndex(k).String() != "" {
				out = append(out, v.MapIndex(k).String())
				v.SetMapIndex(k, reflect.ValueOf("").Convert(v.Type().Elem()))
			}
		}
	}
	return out
}
