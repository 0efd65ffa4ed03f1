// Package config is the kernel's typed settings tree: every setting of the
// specification with its default, loaded from appsettings.json,
// appsettings.{Environment}.json and environment variables, and validated as
// a whole at startup.
package config

// Environment names recognised by the kernel. Anything else is accepted and
// treated like Production (secure defaults).
const (
	Development = "Development"
	Staging     = "Staging"
	Production  = "Production"
)

// Config is the root of the settings tree. Keys are matched
// case-insensitively; the names below are the canonical spelling.
type Config struct {
	// Environment is not read from the settings files; it comes from the
	// --environment flag or ADMINKERNEL_ENVIRONMENT (default Production).
	Environment string `koanf:"-" json:"-"`
	// ContentRoot is the directory settings files and relative paths are
	// resolved against (the working directory by default).
	ContentRoot string `koanf:"-" json:"-"`

	Service Service `koanf:"service"`
	API     API     `koanf:"api"`
	Logging Logging `koanf:"logging"`
}

// IsDevelopment reports whether the Development environment is active.
func (c *Config) IsDevelopment() bool { return c.Environment == Development }

// IsProduction reports whether secure production rules apply: every
// environment other than Development and Staging counts as Production.
func (c *Config) IsProduction() bool {
	return c.Environment != Development && c.Environment != Staging
}

// Service is the `Service` section.
type Service struct {
	HTTP         HTTP         `koanf:"http"`
	Database     Database     `koanf:"database"`
	Cache        Cache        `koanf:"cache"`
	Seed         Seed         `koanf:"seed"`
	Security     Security     `koanf:"security"`
	ExternalAuth ExternalAuth `koanf:"externalauth"`
	Upload       Upload       `koanf:"upload"`
	Logging      ServiceLog   `koanf:"logging"`
	Snowflake    Snowflake    `koanf:"snowflake"`
	// DataDir holds generated files (development signing key, the default
	// SQLite file). Relative to the content root. Default "data".
	DataDir string `koanf:"datadir"`
}

// HTTP is `Service:Http`.
type HTTP struct {
	// ListenAddress is where the kernel listens, default http://localhost:5100.
	ListenAddress string `koanf:"listenaddress"`
	// TrustedProxies lists proxy IPs or CIDRs whose X-Forwarded-* headers
	// are believed. Empty: forwarded headers are ignored.
	TrustedProxies []string `koanf:"trustedproxies"`
	// BodyLimitBytes caps request bodies (default 4 MiB).
	BodyLimitBytes int `koanf:"bodylimitbytes"`
	// ShutdownTimeoutSeconds bounds graceful shutdown (default 10).
	ShutdownTimeoutSeconds int `koanf:"shutdowntimeoutseconds"`
}

// Database dialects accepted by Service:Database:DbType.
const (
	DBSqlite     = "Sqlite"
	DBMySQL      = "MySql"
	DBPostgreSQL = "PostgreSQL"
	DBSQLServer  = "SqlServer"
)

// DBTypes lists the accepted DbType values in documentation order.
var DBTypes = []string{DBSqlite, DBMySQL, DBSQLServer, DBPostgreSQL}

// Database is `Service:Database`.
type Database struct {
	DbType string `koanf:"dbtype"`
	// ConnectionString: for Sqlite either `Data Source=<path>` or a plain
	// path, relative to the content root; default Data Source=./data/adminkernel.db.
	ConnectionString            Secret `koanf:"connectionstring"`
	EnableCodeFirstInProduction bool   `koanf:"enablecodefirstinproduction"`
	SlowSQLMillis               int    `koanf:"slowsqlmillis"`
	MaxOpenConns                int    `koanf:"maxopenconns"`
	SQLLog                      SQLLog `koanf:"sqllog"`
}

// SQLLog is `Service:Database:SqlLog`.
type SQLLog struct {
	Enabled        bool  `koanf:"enabled"`
	MinMillis      int   `koanf:"minmillis"`
	MaxSQLChars    int   `koanf:"maxsqlchars"`
	RequestSummary bool  `koanf:"requestsummary"`
	Color          *bool `koanf:"color"`
}

// Cache providers accepted by Service:Cache:Provider ("" = in-process).
const (
	CacheMemory = ""
	CacheRedis  = "Redis"
)

// Cache is `Service:Cache`.
type Cache struct {
	Provider          string `koanf:"provider"`
	PermissionMinutes int    `koanf:"permissionminutes"`
	MemoryEntryLimit  int    `koanf:"memoryentrylimit"`
	MaxEntryMinutes   int    `koanf:"maxentryminutes"`
	Redis             Redis  `koanf:"redis"`
}

// Redis is `Service:Cache:Redis`.
type Redis struct {
	Address  string `koanf:"address"`
	Username string `koanf:"username"`
	Password Secret `koanf:"password"`
	DB       int    `koanf:"db"`
	// KeyPrefix namespaces every key the kernel writes (default "ak:").
	KeyPrefix string   `koanf:"keyprefix"`
	TLS       RedisTLS `koanf:"tls"`
}

// RedisTLS is `Service:Cache:Redis:Tls`.
type RedisTLS struct {
	Enabled            bool   `koanf:"enabled"`
	ServerName         string `koanf:"servername"`
	CAFile             string `koanf:"cafile"`
	InsecureSkipVerify bool   `koanf:"insecureskipverify"`
}

// Seed is `Service:Seed`.
type Seed struct {
	AdminAccount  string `koanf:"adminaccount"`
	AdminPassword Secret `koanf:"adminpassword"`
}

// Security is `Service:Security`.
type Security struct {
	Captcha  Captcha  `koanf:"captcha"`
	Password Password `koanf:"password"`
	Jwt      Jwt      `koanf:"jwt"`
	Session  Session  `koanf:"session"`
	Sms      Sms      `koanf:"sms"`
}

// Captcha is `Service:Security:Captcha`.
type Captcha struct {
	Enabled bool `koanf:"enabled"`
}

// Password is `Service:Security:Password`.
type Password struct {
	Pbkdf2Iterations int `koanf:"pbkdf2iterations"`
}

// MinPbkdf2Iterations is the effective floor of Pbkdf2Iterations.
const MinPbkdf2Iterations = 100000

// EffectiveIterations applies the 100000 floor of the specification.
func (p Password) EffectiveIterations() int {
	if p.Pbkdf2Iterations < MinPbkdf2Iterations {
		return MinPbkdf2Iterations
	}
	return p.Pbkdf2Iterations
}

// Jwt is `Service:Security:Jwt`.
type Jwt struct {
	// SigningKey signs access tokens (HS256). Required in Production; in
	// other environments a key is generated under DataDir when unset.
	SigningKey Secret `koanf:"signingkey"`
	Issuer     string `koanf:"issuer"`
	// ClockSkewSeconds tolerated when validating exp/nbf (default 30).
	ClockSkewSeconds int `koanf:"clockskewseconds"`
}

// Session is `Service:Security:Session`.
type Session struct {
	// MaxConcurrent sessions per user; 0 = unlimited. The oldest are revoked.
	MaxConcurrent int `koanf:"maxconcurrent"`
	// RefreshGraceSeconds: inside this window after a rotation the previous
	// refresh token is honoured once more (0 = strict). Default 10.
	RefreshGraceSeconds int `koanf:"refreshgraceseconds"`
}

// Sms is `Service:Security:Sms`.
type Sms struct {
	// Sender is "Log" (development: the code is written to the log) or
	// "Webhook". Default Log.
	Sender        string `koanf:"sender"`
	WebhookURL    string `koanf:"webhookurl"`
	WebhookHeader string `koanf:"webhookheader"`
	WebhookSecret Secret `koanf:"webhooksecret"`
}

// ExternalAuth is `Service:ExternalAuth`.
type ExternalAuth struct {
	// CallbackBaseURL is the public root of the backend (may carry a gateway
	// prefix). The service appends /api/v1/auth/external/{provider}/callback.
	CallbackBaseURL    string `koanf:"callbackbaseurl"`
	FrontendResultPath string `koanf:"frontendresultpath"`
	// PluginDir is where provider plugin binaries are discovered. Default:
	// "plugins" next to the host binary.
	PluginDir string `koanf:"plugindir"`
	// PluginSHA256 pins a plugin binary per provider code (hex SHA-256).
	PluginSHA256 map[string]string `koanf:"pluginsha256"`
	Oidc         []OIDCProvider    `koanf:"oidc"`
	// Providers holds the settings section of each plugin provider, keyed
	// by provider code (for example EnterpriseChat for enterprise_chat, see
	// ProviderSection). Values are handed to the plugin over RPC.
	EnterpriseChat VendorSettings `koanf:"enterprisechat"`
	TeamChat       VendorSettings `koanf:"teamchat"`
	CodeHost       VendorSettings `koanf:"codehost"`
	SocialChat     VendorSettings `koanf:"socialchat"`
}

// OIDCProvider is one entry of `Service:ExternalAuth:Oidc`.
type OIDCProvider struct {
	Code         string `koanf:"code"`
	DisplayName  string `koanf:"displayname"`
	Icon         string `koanf:"icon"`
	Authority    string `koanf:"authority"`
	ClientID     string `koanf:"clientid"`
	ClientSecret Secret `koanf:"clientsecret"`
	Scopes       string `koanf:"scopes"`
	UsePkce      *bool  `koanf:"usepkce"`
}

// VendorSettings is a plugin provider's settings section: plain key/value
// pairs (CorpId, AgentId, CorpSecret, ClientId, ClientSecret, AppId, ...).
// Keys are kept as written; values whose key matches the sensitive-name list
// are masked when printed.
type VendorSettings map[string]string

// Upload is `Service:Upload`.
type Upload struct {
	SignedURLTTLMinutes int `koanf:"signedurlttlminutes"`
}

// ServiceLog is `Service:Logging`.
type ServiceLog struct {
	OpLog OpLog `koanf:"oplog"`
}

// OpLog is `Service:Logging:OpLog`.
type OpLog struct {
	Sync          bool `koanf:"sync"`
	QueueCapacity int  `koanf:"queuecapacity"`
	ParamMaxChars int  `koanf:"parammaxchars"`
}

// Snowflake is `Service:Snowflake`.
type Snowflake struct {
	// WorkerID (0-63) distinguishes replicas in generated ids.
	WorkerID int `koanf:"workerid"`
}

// API is the `Api` section.
type API struct {
	// DisabledModules switches modules off by name; `Meta` disables the
	// error-code endpoint.
	DisabledModules []string `koanf:"disabledmodules"`
	MaxPageSize     int      `koanf:"maxpagesize"`
	Cors            Cors     `koanf:"cors"`
}

// Cors is `Api:Cors`.
type Cors struct {
	AllowedOrigins []string `koanf:"allowedorigins"`
}

// Logging is the top-level `Logging` section.
type Logging struct {
	// File, when set, also writes the log to this path (relative to the
	// content root).
	File string `koanf:"file"`
	// Format is "text" (default in Development) or "json".
	Format string `koanf:"format"`
	// LogLevel maps a category ("Default", "AdminKernel.Sql", ...) to a
	// level: Trace, Debug, Information, Warning, Error, Critical, None.
	LogLevel map[string]string `koanf:"loglevel"`
}

// Defaults returns the settings tree with every default of the
// specification applied.
func Defaults() Config {
	return Config{
		Environment: Production,
		Service: Service{
			HTTP: HTTP{
				ListenAddress:          "http://localhost:5100",
				BodyLimitBytes:         4 << 20,
				ShutdownTimeoutSeconds: 10,
			},
			Database: Database{
				DbType:           DBSqlite,
				ConnectionString: "Data Source=./data/adminkernel.db",
				SlowSQLMillis:    500,
				SQLLog: SQLLog{
					MaxSQLChars:    4000,
					RequestSummary: true,
				},
			},
			Cache: Cache{
				PermissionMinutes: 20,
				MemoryEntryLimit:  100000,
				MaxEntryMinutes:   1440,
				Redis: Redis{
					Address:   "127.0.0.1:6379",
					KeyPrefix: "ak:",
				},
			},
			Seed: Seed{AdminAccount: "superAdmin"},
			Security: Security{
				Password: Password{Pbkdf2Iterations: 600000},
				Jwt:      Jwt{Issuer: "AdminKernel", ClockSkewSeconds: 30},
				Session:  Session{RefreshGraceSeconds: 10},
				Sms:      Sms{Sender: "Log"},
			},
			ExternalAuth: ExternalAuth{FrontendResultPath: "/oauth/callback"},
			Logging: ServiceLog{OpLog: OpLog{
				QueueCapacity: 10000,
				ParamMaxChars: 8192,
			}},
			DataDir: "data",
		},
		API:     API{MaxPageSize: 200},
		Logging: Logging{LogLevel: map[string]string{"Default": "Information"}},
	}
}
