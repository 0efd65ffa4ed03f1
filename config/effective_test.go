package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteEffective(t *testing.T) {
	secrets := []string{
		"conn-pass-1", "redis-pass-2", "seed-pass-3", "signing-key-4-0123456789abcdefghij",
		"webhook-secret-5", "X-Api-Key: header-6", "client-secret-7", "corp-secret-8",
		"vendor-token-9", "vendor-pwd-10", "redis-url-pass-11",
		"ring-key-12-0123456789abcdefghijklmn", "ring-key-13-0123456789abcdefghijklmn",
	}
	c := validConfig()
	c.ContentRoot = "/srv/kernel"
	s := &c.Service
	s.Database.ConnectionString = Secret("Server=db;User ID=app;Password=" + secrets[0] + ";Database=kernel")
	s.Cache.Redis.Password = Secret(secrets[1])
	s.Cache.Redis.Address = "redis://cache:" + secrets[10] + "@cache.internal:6379/0"
	s.Seed.AdminPassword = Secret(secrets[2])
	s.Security.Jwt.SigningKey = Secret(secrets[3])
	s.Security.Jwt.SigningKeys = []JwtKey{{ID: "2026-11", Key: Secret(secrets[11])}, {Key: Secret(secrets[12])}}
	s.Security.Sms.WebhookSecret = Secret(secrets[4])
	s.Security.Sms.WebhookHeader = secrets[5]
	s.Security.Sms.WebhookURL = "https://sms.example/send"
	s.ExternalAuth.CallbackBaseURL = "https://kernel.example/admin"
	s.ExternalAuth.Oidc = []OIDCProvider{{Code: "corp", Authority: "https://idp.example", ClientID: "kernel-client", ClientSecret: Secret(secrets[6])}}
	s.ExternalAuth.EnterpriseChat = VendorSettings{"CorpId": "ww-corp-id", "AgentId": "1000002", "CorpSecret": secrets[7]}
	s.ExternalAuth.CodeHost = VendorSettings{"AccessToken": secrets[8], "DbPwd": secrets[9]}

	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !json.Valid(out.Bytes()) {
		t.Fatalf("not JSON:\n%s", text)
	}
	for _, secret := range secrets {
		if strings.Contains(text, secret) {
			t.Errorf("output contains secret %q:\n%s", secret, text)
		}
	}
	for _, want := range []string{
		`"Environment": "Production"`,
		`"ContentRoot": "/srv/kernel"`,
		`"DbType": "Sqlite"`,
		`"ConnectionString": "Server=db;User ID=app;Password=***;Database=kernel"`,
		`"Address": "redis://cache:***@cache.internal:6379/0"`,
		`"AdminAccount": "superAdmin"`,
		`"SigningKey": "***"`,
		`"Id": "2026-11"`,
		`"Key": "***"`,
		`"WebhookHeader": "***"`,
		`"WebhookUrl": "https://sms.example/send"`,
		`"CallbackBaseUrl": "https://kernel.example/admin"`,
		`"ClientId": "kernel-client"`,
		`"CorpId": "ww-corp-id"`,
		`"CorpSecret": "***"`,
		`"AgentId": "1000002"`,
		`"Default": "Information"`,
		`"MaxPageSize": 200`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %s:\n%s", want, text)
		}
	}
	if !strings.HasPrefix(text, "{\n  \"Environment\"") {
		t.Errorf("Environment is not printed first:\n%s", text)
	}
	if i, j := strings.Index(text, `"Service"`), strings.Index(text, `"Database"`); i < 0 || j < i {
		t.Errorf("Database is not nested in Service:\n%s", text)
	}
}

func TestSensitiveName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"Password", true}, {"AdminPassword", true}, {"pwd", true}, {"CorpSecret", true},
		{"access_token", true}, {"Credentials", true}, {"WebhookHeader", true}, {"Authorization", true},
		{"X-ApiKey", true}, {"api_key", true}, {"Cookie", true},
		{"CorpId", false}, {"Account", false}, {"Authority", false}, {"Key", false}, {"", false},
	}
	for _, tt := range tests {
		if got := SensitiveName(tt.name); got != tt.want {
			t.Errorf("SensitiveName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMaskConnectionString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Data Source=./data/adminkernel.db", "Data Source=./data/adminkernel.db"},
		{"Server=db;User ID=app;Password=p@ss word;Database=k", "Server=db;User ID=app;Password=***;Database=k"},
		{"server=db; pwd = x;database=k", "server=db; pwd = ***;database=k"},
		{`Server=db;Password="a;b";Database=k`, "Server=db;Password=***;Database=k"},
		{"host=db user=app password=secret dbname=k", "host=db user=app password=*** dbname=k"},
		{"postgres://app:secret@db:5432/k?sslmode=disable", "postgres://app:***@db:5432/k?sslmode=disable"},
		{"app:se@cret@tcp(db:3306)/k?parseTime=true", "app:***@tcp(db:3306)/k?parseTime=true"},
		{"redis://:secret@cache:6379", "redis://:***@cache:6379"},
		{"https://host/hook?token=abc&x=1", "https://host/hook?token=***&x=1"},
		{"127.0.0.1:6379", "127.0.0.1:6379"},
	}
	for _, tt := range tests {
		if got := MaskConnectionString(tt.in); got != tt.want {
			t.Errorf("MaskConnectionString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "adminkernel-config")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	settings := `{"service": {"database": {"dbtype": "postgresql"}}}`
	if err := os.WriteFile(filepath.Join(dir, "appsettings.json"), []byte(settings), 0o600); err != nil {
		panic(err)
	}

	cfg, err := Load(LoadOptions{
		ContentRoot: dir,
		Environment: ResolveEnvironment("", []string{"ADMINKERNEL_ENVIRONMENT=development"}),
		Environ:     []string{"Api__DisabledModules__0=Meta"},
	})
	if err != nil {
		panic(err)
	}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(cfg.Environment, cfg.Service.Database.DbType, cfg.API.DisabledModules, cfg.ListenHostPort())
	// Output: Development PostgreSQL [Meta] localhost:5100
}
