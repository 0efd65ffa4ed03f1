package config

import (
	"errors"
	"strings"
	"testing"
)

// validConfig is a Production configuration that passes Validate.
func validConfig() *Config {
	c := Defaults()
	c.ContentRoot = "/srv/kernel"
	c.Service.Security.Jwt.SigningKey = Secret(strings.Repeat("k", 32))
	return &c
}

func withOIDC(c *Config) {
	c.Service.ExternalAuth.Oidc = []OIDCProvider{{Authority: "https://idp.example", ClientID: "kernel"}}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   []string // substrings of the problems; none means valid
	}{
		{name: "defaults with a signing key are valid"},

		// Service:Security:Session.
		{
			name:   "session: unknown mode",
			mutate: func(c *Config) { c.Service.Security.Session.Mode = "Several" },
			want:   []string{"Service:Security:Session:Mode", "Several", "Multi (or Multiple), Single"},
		},
		{
			name:   "session: Single is valid",
			mutate: func(c *Config) { c.Service.Security.Session.Mode = "single" },
		},
		{
			name:   "session: Multiple is an alias",
			mutate: func(c *Config) { c.Service.Security.Session.Mode = "Multiple" },
		},
		{
			name: "session: negative numbers",
			mutate: func(c *Config) {
				c.Service.Security.Session.IdleMinutesNormal = -1
				c.Service.Security.Session.IdleMinutesMfa = -4
				c.Service.Security.Session.AbsoluteHours = -2
				c.Service.Security.Session.MaxConcurrent = -3
			},
			want: []string{"IdleMinutesNormal -1 must be at least 0", "IdleMinutesMfa -4 must be at least 0", "AbsoluteHours -2 must be at least 0", "MaxConcurrent -3 must be at least 0"},
		},
		{
			name: "session: cookie domain without cookie mode",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.CallbackBaseURL = "https://admin.example.com"
				c.Service.Security.Session.CookieDomain = "example.com"
			},
			want: []string{"CookieDomain is set but Service:Security:Session:CookieMode is not true"},
		},
		{
			name: "session: cookie domain needs an https callback base",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.CallbackBaseURL = "http://admin.example.com"
				c.Service.Security.Session.CookieMode = true
				c.Service.Security.Session.CookieDomain = "example.com"
			},
			want: []string{"CookieDomain requires an https Service:ExternalAuth:CallbackBaseUrl"},
		},
		{
			name: "session: cookie domain that is a URL",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.CallbackBaseURL = "https://admin.example.com"
				c.Service.Security.Session.CookieMode = true
				c.Service.Security.Session.CookieDomain = "https://example.com:8443"
			},
			want: []string{"CookieDomain \"https://example.com:8443\" must be a host name"},
		},
		{
			name: "session: cookie domain with https callback base is valid",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.CallbackBaseURL = "https://admin.example.com"
				c.Service.Security.Session.CookieMode = true
				c.Service.Security.Session.CookieDomain = ".example.com"
			},
		},
		{
			name:   "session: cookie mode over http is valid",
			mutate: func(c *Config) { c.Service.Security.Session.CookieMode = true },
		},

		// CallbackBaseUrl, one row per rule.
		{
			name: "callback: full callback URL",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.CallbackBaseURL = "https://host/api/v1/auth/external/oidc/callback"
			},
			want: []string{"CallbackBaseUrl", "full callback URL"},
		},
		{
			name:   "callback: ends with /callback",
			mutate: func(c *Config) { c.Service.ExternalAuth.CallbackBaseURL = "https://host/sso/callback" },
			want:   []string{"CallbackBaseUrl", "full callback URL"},
		},
		{
			name: "callback: contains the frontend result path",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.FrontendResultPath = "/oauth/result"
				c.Service.ExternalAuth.CallbackBaseURL = "https://host/admin/oauth/result"
			},
			want: []string{"CallbackBaseUrl", "frontend result path"},
		},
		{
			name:   "callback: query string",
			mutate: func(c *Config) { c.Service.ExternalAuth.CallbackBaseURL = "https://host/admin?x=1" },
			want:   []string{"CallbackBaseUrl", "query string"},
		},
		{
			name:   "callback: fragment",
			mutate: func(c *Config) { c.Service.ExternalAuth.CallbackBaseURL = "https://host/#/login" },
			want:   []string{"CallbackBaseUrl", "fragment"},
		},
		{
			name:   "callback: relative URL",
			mutate: func(c *Config) { c.Service.ExternalAuth.CallbackBaseURL = "/admin" },
			want:   []string{"CallbackBaseUrl", "absolute http or https URL"},
		},
		{
			name:   "callback: ftp scheme",
			mutate: func(c *Config) { c.Service.ExternalAuth.CallbackBaseURL = "ftp://host/admin" },
			want:   []string{"CallbackBaseUrl", "absolute http or https URL"},
		},
		{
			name:   "callback: gateway sub-path is valid",
			mutate: func(c *Config) { c.Service.ExternalAuth.CallbackBaseURL = "https://host/admin/" },
		},
		{
			name:   "callback: required in Production when an Oidc entry exists",
			mutate: withOIDC,
			want:   []string{"CallbackBaseUrl is required in Production"},
		},
		{
			name: "callback: required in Production when a vendor section is set",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.EnterpriseChat = VendorSettings{"CorpId": "ww1"}
			},
			want: []string{"CallbackBaseUrl is required in Production"},
		},
		{
			name: "callback: not required in Development",
			mutate: func(c *Config) {
				c.Environment = Development
				withOIDC(c)
			},
		},
		{
			name: "callback: set in Production with an Oidc entry",
			mutate: func(c *Config) {
				withOIDC(c)
				c.Service.ExternalAuth.CallbackBaseURL = "https://host"
			},
		},

		{
			name:   "unknown DbType lists the valid ones",
			mutate: func(c *Config) { c.Service.Database.DbType = "Oracle" },
			want:   []string{`DbType "Oracle" is not supported; valid values: Sqlite, MySql, PostgreSQL`},
		},
		{
			name:   "SqlServer is refused with its own message, not listed as valid",
			mutate: func(c *Config) { c.Service.Database.DbType = "sqlserver" },
			want:   []string{"DbType SqlServer is refused", "no tested SQL Server path", "valid values: Sqlite, MySql, PostgreSQL"},
		},
		{
			name:   "trusted proxy: prefix length beyond 32",
			mutate: func(c *Config) { c.Service.HTTP.TrustedProxies = []string{"192.0.2.1", " ", "10.0.0.0/33"} },
			want:   []string{`Service:Http:TrustedProxies:2 "10.0.0.0/33" is not an IP address or CIDR block`},
		},
		{
			name:   "trusted proxy: a host name",
			mutate: func(c *Config) { c.Service.HTTP.TrustedProxies = []string{"proxy.internal"} },
			want:   []string{`TrustedProxies:0 "proxy.internal"`},
		},
		{
			name: "trusted proxies: addresses and blocks of both families",
			mutate: func(c *Config) {
				c.Service.HTTP.TrustedProxies = []string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::1", ""}
			},
		},
		{
			name: "outbound ranges: host bits, a name, a zone",
			mutate: func(c *Config) {
				c.Service.Outbound.AllowedRanges = []string{"10.20.0.0/16", "10.0.0.1/8", "internal.example", "fe80::1%eth0", "10.0.0.0/33"}
			},
			want: []string{`AllowedRanges:1: "10.0.0.1/8" has host bits set (the range is 10.0.0.0/8)`,
				`AllowedRanges:2: "internal.example" is not a CIDR range or an IP address`,
				`AllowedRanges:3: "fe80::1%eth0"`, `AllowedRanges:4: "10.0.0.0/33"`},
		},
		{
			name: "outbound ranges: ranges and addresses of both families",
			mutate: func(c *Config) {
				c.Service.Outbound.AllowedRanges = []string{"10.20.0.0/16", "192.168.1.5", "fd00:1::/64", "::1", "::ffff:10.0.0.0/104"}
			},
		},
		{
			name: "plugin pin: not 64 hexadecimal digits",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.PluginSHA256 = map[string]string{"acme": "abc123", "team_chat": strings.Repeat("zz", 32)}
			},
			want: []string{`PluginSha256:acme "abc123" is not a SHA-256 pin`, `PluginSha256:team_chat "zzzz`},
		},
		{
			name: "plugin pin: a key that is no provider code",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.PluginSHA256 = map[string]string{"ac-me": strings.Repeat("ab", 32)}
			},
			want: []string{`PluginSha256:ac-me: "ac-me" is not a provider code`},
		},
		{
			name: "plugin pin: well formed, any case, surrounding space",
			mutate: func(c *Config) {
				c.Service.ExternalAuth.PluginSHA256 = map[string]string{"acme": " " + strings.Repeat("aB", 32) + " "}
			},
		},
		{
			name: "signing key too short in Development too (the token issuer refuses it)",
			mutate: func(c *Config) {
				c.Environment = Development
				c.Service.Security.Jwt.SigningKey = "short"
			},
			want: []string{"SigningKey must be at least 32 bytes"},
		},
		{
			name:   "jwt: empty issuer",
			mutate: func(c *Config) { c.Service.Security.Jwt.Issuer = " " },
			want:   []string{"Service:Security:Jwt:Issuer must not be empty"},
		},
		{
			name:   "jwt: negative clock skew",
			mutate: func(c *Config) { c.Service.Security.Jwt.ClockSkewSeconds = -1 },
			want:   []string{"Service:Security:Jwt:ClockSkewSeconds -1 must be at least 0"},
		},
		{
			name: "redis: empty address",
			mutate: func(c *Config) {
				c.Service.Cache.Provider = "Redis"
				c.Service.Cache.Redis.Address = ""
			},
			want: []string{"Service:Cache:Redis:Address is required"},
		},
		{
			name: "redis: sentinel without a master name",
			mutate: func(c *Config) {
				c.Service.Cache.Provider = "Redis"
				c.Service.Cache.Redis.SentinelAddresses = []string{"127.0.0.1:26379"}
			},
			want: []string{"Service:Cache:Redis:MasterName is required with SentinelAddresses"},
		},
		{
			name: "redis: sentinel and cluster",
			mutate: func(c *Config) {
				c.Service.Cache.Provider = "Redis"
				c.Service.Cache.Redis.SentinelAddresses = []string{"127.0.0.1:26379"}
				c.Service.Cache.Redis.MasterName = "m"
				c.Service.Cache.Redis.ClusterAddresses = []string{"127.0.0.1:7000"}
			},
			want: []string{"SentinelAddresses and ClusterAddresses are exclusive"},
		},
		{
			name: "redis: cluster address without a port, Db on a cluster",
			mutate: func(c *Config) {
				c.Service.Cache.Provider = "Redis"
				c.Service.Cache.Redis.ClusterAddresses = []string{"127.0.0.1"}
				c.Service.Cache.Redis.DB = 2
			},
			want: []string{"Service:Cache:Redis:Db must be 0 with ClusterAddresses", `Service:Cache:Redis:ClusterAddresses:0 "127.0.0.1" is not host:port`},
		},
		{
			name: "shutdown: negative drain delay",
			mutate: func(c *Config) {
				v := -1
				c.Service.Shutdown.ReadyDrainDelaySeconds = &v
			},
			want: []string{"Service:Shutdown:ReadyDrainDelaySeconds -1 must be between 0 and 300"},
		},
		{
			name: "redis: unreadable CA file",
			mutate: func(c *Config) {
				c.Service.Cache.Provider = "Redis"
				c.Service.Cache.Redis.TLS = RedisTLS{Enabled: true, CAFile: "/nonexistent/ca.pem"}
			},
			want: []string{`Service:Cache:Redis:Tls:CaFile "/nonexistent/ca.pem" cannot be read`},
		},
		{
			name:   "unknown cache provider",
			mutate: func(c *Config) { c.Service.Cache.Provider = "Memcached" },
			want:   []string{"Service:Cache:Provider"},
		},
		{
			name: "Oidc: missing Authority and ClientId, bad code",
			mutate: func(c *Config) {
				c.Environment = Development
				c.Service.ExternalAuth.Oidc = []OIDCProvider{{Code: "corp-sso", Authority: "idp.example"}}
			},
			want: []string{"Oidc:0:Code \"corp-sso\" may contain only letters", "Oidc:0:Authority", "Oidc:0:ClientId is required"},
		},
		{
			name: "Oidc: duplicate codes name both indexes",
			mutate: func(c *Config) {
				c.Environment = Development
				p := OIDCProvider{Authority: "https://idp.example", ClientID: "kernel"}
				c.Service.ExternalAuth.Oidc = []OIDCProvider{p, p}
			},
			want: []string{`Service:ExternalAuth:Oidc:1:Code "oidc" is also the code of Service:ExternalAuth:Oidc:0`},
		},
		{
			name:   "ranges",
			mutate: func(c *Config) { c.Service.Snowflake.WorkerID = 64 },
			want:   []string{"Service:Snowflake:WorkerId 64 is out of range 0..63"},
		},
		{
			name:   "list totals, negative",
			mutate: func(c *Config) { c.Service.Cache.ListTotalSeconds = -1 },
			want:   []string{"Service:Cache:ListTotalSeconds -1 is out of range 0..300 (0 counts every list total)"},
		},
		{
			name:   "list totals, too long",
			mutate: func(c *Config) { c.Service.Cache.ListTotalSeconds = 301 },
			want:   []string{"Service:Cache:ListTotalSeconds 301 is out of range 0..300 (0 counts every list total)"},
		},
		{
			name:   "re-auth window",
			mutate: func(c *Config) { c.Service.Security.Reauth.WindowSeconds = 0 },
			want:   []string{"Service:Security:Reauth:WindowSeconds 0 is out of range 1..3600"},
		},
		{
			name: "password hashing pool",
			mutate: func(c *Config) {
				c.Service.Security.Password.HashConcurrency = -1
				c.Service.Security.Password.HashQueue = -1
				c.Service.Security.Password.HashMaxWaitMillis = 0
				c.Service.Security.Password.HashPerClient = -1
				c.Service.Security.Password.HashPerAccount = -1
			},
			want: []string{"Service:Security:Password:HashConcurrency -1 must be at least 0",
				"Service:Security:Password:HashQueue -1 must be at least 0",
				"Service:Security:Password:HashMaxWaitMillis 0 must be at least 1",
				"Service:Security:Password:HashPerClient -1 must be at least 0",
				"Service:Security:Password:HashPerAccount -1 must be at least 0"},
		},
		{
			name: "ranges at the limits are valid",
			mutate: func(c *Config) {
				c.Service.Snowflake.WorkerID = 63
				c.Service.Cache.MemoryEntryLimit = 0
				c.Service.Cache.MaxEntryMinutes = 0
				c.Service.Security.Password.HashConcurrency = 0
				c.Service.Security.Password.HashQueue = 0
				c.Service.Security.Password.HashMaxWaitMillis = 1
			},
		},
		{
			name:   "listen address",
			mutate: func(c *Config) { c.Service.HTTP.ListenAddress = "localhost" },
			want:   []string{"Service:Http:ListenAddress"},
		},
		{
			name:   "webhook sender needs a URL",
			mutate: func(c *Config) { c.Service.Security.Sms.Sender = "webhook" },
			want:   []string{"Service:Security:Sms:WebhookUrl"},
		},
		{
			name:   "unknown SMS sender",
			mutate: func(c *Config) { c.Service.Security.Sms.Sender = "Carrier" },
			want:   []string{"Service:Security:Sms:Sender"},
		},
		{
			name:   "unknown log level",
			mutate: func(c *Config) { c.Logging.LogLevel["AdminKernel.Sql"] = "Verbose" },
			want:   []string{`Logging:LogLevel:AdminKernel.Sql "Verbose" is not a level`},
		},
		{
			name:   "signing key required in Production",
			mutate: func(c *Config) { c.Service.Security.Jwt.SigningKey = "" },
			want:   []string{"Service:Security:Jwt:SigningKey is required in Production"},
		},
		{
			name:   "signing key too short",
			mutate: func(c *Config) { c.Service.Security.Jwt.SigningKey = "short" },
			want:   []string{"at least 32 bytes"},
		},
		{
			name: "key ring instead of SigningKey",
			mutate: func(c *Config) {
				c.Service.Security.Jwt.SigningKey = ""
				c.Service.Security.Jwt.SigningKeys = []JwtKey{{ID: "2026-11", Key: Secret(strings.Repeat("n", 32))}, {Key: Secret(strings.Repeat("o", 32))}}
			},
		},
		{
			name: "SigningKey and SigningKeys together",
			mutate: func(c *Config) {
				c.Service.Security.Jwt.SigningKeys = []JwtKey{{Key: Secret(strings.Repeat("n", 32))}}
			},
			want: []string{"SigningKey and Service:Security:Jwt:SigningKeys are both set"},
		},
		{
			name: "key ring: short key, bad id, duplicate ids, also in Development",
			mutate: func(c *Config) {
				c.Environment = Development
				c.Service.Security.Jwt.SigningKey = ""
				c.Service.Security.Jwt.SigningKeys = []JwtKey{
					{ID: "a", Key: Secret(strings.Repeat("n", 32))},
					{ID: "b", Key: "short"},
					{ID: `x"y`, Key: Secret(strings.Repeat("o", 32))},
					{ID: "a", Key: Secret(strings.Repeat("p", 32))},
					{Key: Secret(strings.Repeat("q", 32))},
					{Key: Secret(strings.Repeat("q", 32))},
				}
			},
			want: []string{
				"SigningKeys:1:Key must be at least 32 bytes long",
				`SigningKeys:2:Id "x\"y" must be 1 to 64`,
				`SigningKeys:3: the key id "a" is also the id of Service:Security:Jwt:SigningKeys:0`,
				"SigningKeys:5: the key id",
			},
		},
		{
			name: "negative connection caps",
			mutate: func(c *Config) {
				c.Service.HTTP.MaxConnections = -1
				c.Service.HTTP.MaxConnectionsPerIP = -5
			},
			want: []string{"Service:Http:MaxConnections -1 must be at least 0", "Service:Http:MaxConnectionsPerIp -5 must be at least 0"},
		},
		{
			name: "negative database pool sizes",
			mutate: func(c *Config) {
				c.Service.Database.MaxOpenConns = -1
				c.Service.Database.MaxIdleConns = -2
			},
			want: []string{"Service:Database:MaxOpenConns -1 must be at least 0", "Service:Database:MaxIdleConns -2 must be at least 0"},
		},
		{
			name: "connection caps of 0 mean unlimited",
			mutate: func(c *Config) {
				c.Service.HTTP.MaxConnections = 0
				c.Service.HTTP.MaxConnectionsPerIP = 0
			},
		},
		{
			name: "signing key optional in Development",
			mutate: func(c *Config) {
				c.Environment = Development
				c.Service.Security.Jwt.SigningKey = ""
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			if tt.mutate != nil {
				tt.mutate(c)
			}
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := validConfig()
	c.Service.Database.DbType = "Oracle"
	c.Service.Cache.PermissionMinutes = 0
	c.API.MaxPageSize = -1
	c.Service.ExternalAuth.CallbackBaseURL = "https://host/?a=1"
	c.Service.Security.Jwt.SigningKey = ""

	err := c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	if len(ve.Problems) != 5 {
		t.Errorf("got %d problems, want 5:\n%v", len(ve.Problems), err)
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 6 {
		t.Errorf("want a heading and one line per problem, got:\n%v", err)
	}
}

func TestValidateNormalises(t *testing.T) {
	c := validConfig()
	c.Environment = Development
	c.Service.Database.DbType = "postgresql"
	c.Service.Cache.Provider = "REDIS"
	c.Service.Security.Sms.Sender = "log"
	c.Logging.LogLevel["Default"] = "warning"
	c.Service.Security.Session.Mode = "multiple"
	c.Service.ExternalAuth.CallbackBaseURL = "https://host/admin/"
	c.Service.ExternalAuth.Oidc = []OIDCProvider{{Authority: "https://idp.example", ClientID: "kernel"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	o := c.Service.ExternalAuth.Oidc[0]
	checks := []struct{ name, got, want string }{
		{"DbType", c.Service.Database.DbType, DBPostgreSQL},
		{"Provider", c.Service.Cache.Provider, CacheRedis},
		{"Sender", c.Service.Security.Sms.Sender, "Log"},
		{"LogLevel", c.Logging.LogLevel["Default"], "Warning"},
		{"Session Mode", c.Service.Security.Session.Mode, SessionMulti},
		{"CallbackBaseUrl", c.Service.ExternalAuth.CallbackBaseURL, "https://host/admin"},
		{"CallbackPrefix", c.CallbackPrefix(), "/admin"},
		{"Oidc Code", o.Code, "oidc"},
		{"Oidc DisplayName", o.DisplayName, "SSO"},
		{"Oidc Scopes", o.Scopes, "openid profile email"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
	if o.UsePkce == nil || !*o.UsePkce {
		t.Errorf("UsePkce = %v, want true", o.UsePkce)
	}
}

func TestCallbackPrefix(t *testing.T) {
	for base, want := range map[string]string{
		"":                    "",
		"https://host":        "",
		"https://host/":       "",
		"https://host/admin":  "/admin",
		"https://host/a/b/":   "/a/b",
		"http://host:8080/gw": "/gw",
	} {
		c := Defaults()
		c.Service.ExternalAuth.CallbackBaseURL = base
		if got := c.CallbackPrefix(); got != want {
			t.Errorf("CallbackPrefix(%q) = %q, want %q", base, got, want)
		}
	}
}

func TestListenHostPort(t *testing.T) {
	tests := []struct {
		addr, want string
		valid      bool
	}{
		{"http://localhost:5100", "localhost:5100", true},
		{"https://0.0.0.0:443/", "0.0.0.0:443", true},
		{"http://+:5100", ":5100", true},
		{"http://[::1]:5100", "[::1]:5100", true},
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{":5100", ":5100", true},
		{"localhost", "localhost", false},
		{"http://localhost", "http://localhost", false},
		{"tcp://localhost:5100", "tcp://localhost:5100", false},
		{"http://localhost:5100/api", "http://localhost:5100/api", false},
		{":99999", ":99999", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			c := validConfig()
			c.Service.HTTP.ListenAddress = tt.addr
			if got := c.ListenHostPort(); got != tt.want {
				t.Errorf("ListenHostPort() = %q, want %q", got, tt.want)
			}
			if err := c.Validate(); (err == nil) != tt.valid {
				t.Errorf("Validate() = %v, want valid %v", err, tt.valid)
			}
		})
	}
}

func TestExternalProvidersConfigured(t *testing.T) {
	c := Defaults()
	if c.ExternalProvidersConfigured() {
		t.Error("defaults report a provider")
	}
	c.Service.ExternalAuth.SocialChat = VendorSettings{"AppId": ""}
	if c.ExternalProvidersConfigured() {
		t.Error("a section with only empty values counts as configured")
	}
	c.Service.ExternalAuth.SocialChat["AppId"] = "wx1"
	if !c.ExternalProvidersConfigured() {
		t.Error("SocialChat with an AppId does not count as configured")
	}
}
