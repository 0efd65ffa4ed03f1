// Package config is the kernel's typed settings tree: every setting of the
// specification with its default, loaded from appsettings.json,
// appsettings.{Environment}.json and environment variables, and validated as
// a whole at startup.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"time"
)

// Environment names recognised by the kernel. Anything else is accepted and
// treated like Production (secure defaults).
const (
	Development = "Development"
	Staging     = "Staging"
	Production  = "Production"
)

// Config is the root of the settings tree. Keys are matched
// case-insensitively; the koanf tags below are the canonical spelling, used
// in error messages and by WriteEffective.
type Config struct {
	// Environment is not read from the settings files; it comes from the
	// --environment flag or ADMINKERNEL_ENVIRONMENT (default Production).
	Environment string `koanf:"-" json:"-"`
	// ContentRoot is the directory settings files and relative paths are
	// resolved against (the working directory by default).
	ContentRoot string `koanf:"-" json:"-"`

	Service Service `koanf:"Service"`
	API     API     `koanf:"Api"`
	Logging Logging `koanf:"Logging"`

	// unknown are the keys Load found below Service, Api and Logging that
	// are not settings (unknown.go).
	unknown []unknownKey
}

// DataPath is the absolute data directory: Service:DataDir (default
// "data") resolved against the content root. The default SQLite file, the
// development signing key and, in Production, the generated super-admin
// password file live there.
func (c *Config) DataPath() string {
	dir := c.Service.DataDir
	if dir == "" {
		dir = Defaults().Service.DataDir
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(c.ContentRoot, dir)
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
	HTTP         HTTP         `koanf:"Http"`
	Database     Database     `koanf:"Database"`
	Cache        Cache        `koanf:"Cache"`
	Seed         Seed         `koanf:"Seed"`
	Security     Security     `koanf:"Security"`
	ExternalAuth ExternalAuth `koanf:"ExternalAuth"`
	Upload       Upload       `koanf:"Upload"`
	Logging      ServiceLog   `koanf:"Logging"`
	Snowflake    Snowflake    `koanf:"Snowflake"`
	Job          Job          `koanf:"Job"`
	Outbound     Outbound     `koanf:"Outbound"`
	Telemetry    Telemetry    `koanf:"Telemetry"`
	Shutdown     Shutdown     `koanf:"Shutdown"`
	// DataDir holds generated files (development signing key, the default
	// SQLite file). Relative to the content root. Default "data".
	DataDir string `koanf:"DataDir"`
}

// Shutdown is `Service:Shutdown`: how a replica leaves on SIGTERM.
type Shutdown struct {
	// ReadyDrainDelaySeconds is how long /health/ready answers 503 before
	// the replica stops accepting connections, so a load balancer that
	// follows readiness sends it nothing new by then. Unset: 5 in
	// Production, 0 in Development and Staging. The in-flight requests
	// that follow are bounded by Service:Http:ShutdownTimeoutSeconds.
	ReadyDrainDelaySeconds *int `koanf:"ReadyDrainDelaySeconds"`
}

// DefaultReadyDrainDelay is ReadyDrainDelaySeconds' Production default.
const DefaultReadyDrainDelay = 5 * time.Second

// ReadyDrainDelay is the effective Service:Shutdown:ReadyDrainDelaySeconds.
func (c *Config) ReadyDrainDelay() time.Duration {
	if d := c.Service.Shutdown.ReadyDrainDelaySeconds; d != nil {
		return time.Duration(max(*d, 0)) * time.Second
	}
	if c.IsProduction() {
		return DefaultReadyDrainDelay
	}
	return 0
}

// HTTP is `Service:Http`.
type HTTP struct {
	// ListenAddress is where the kernel listens, default http://localhost:5100.
	ListenAddress string `koanf:"ListenAddress"`
	// TrustedProxies lists proxy IPs or CIDRs whose X-Forwarded-* headers
	// are believed. Empty: forwarded headers are ignored.
	TrustedProxies []string `koanf:"TrustedProxies"`
	// BodyLimitBytes caps request bodies (default 4 MiB).
	BodyLimitBytes int `koanf:"BodyLimitBytes"`
	// ShutdownTimeoutSeconds bounds graceful shutdown (default 10).
	ShutdownTimeoutSeconds int `koanf:"ShutdownTimeoutSeconds"`
	// MaxConnections caps the TCP connections open at once (default
	// 10000; 0 = unlimited). A connection beyond it is accepted and closed
	// at once (host/internal/connlimit). At serve time it is lowered to the
	// descriptor limit minus a reserve for the database, the log and
	// plugins, so that the cap is reached before the descriptors run out.
	MaxConnections int `koanf:"MaxConnections"`
	// MaxConnectionsPerIP caps the connections open at once from one
	// direct peer IP (default 256; 0 = unlimited). Peers in TrustedProxies
	// are exempt: every client arrives through them.
	MaxConnectionsPerIP int `koanf:"MaxConnectionsPerIp"`
}

// Database dialects accepted by Service:Database:DbType.
const (
	DBSqlite     = "Sqlite"
	DBMySQL      = "MySql"
	DBPostgreSQL = "PostgreSQL"
	DBSQLServer  = "SqlServer"
)

// DBTypes lists the DbType names the settings know, in documentation
// order. SqlServer is one of them only to be refused with its own message
// (Validate, host/database): SupportedDBTypes are the ones that run.
var DBTypes = []string{DBSqlite, DBMySQL, DBSQLServer, DBPostgreSQL}

// SupportedDBTypes lists the DbType values the kernel runs on.
var SupportedDBTypes = []string{DBSqlite, DBMySQL, DBPostgreSQL}

// Database is `Service:Database`.
type Database struct {
	// DbType is the database: Sqlite (default, zero-config), MySql or
	// PostgreSQL; SqlServer is refused.
	DbType string `koanf:"DbType"`
	// ConnectionString: for Sqlite either `Data Source=<path>` or a plain
	// path, relative to the content root; default Data Source=./data/adminkernel.db.
	ConnectionString Secret `koanf:"ConnectionString"`
	// EnableCodeFirstInProduction applies pending schema migrations at
	// startup in Production (default false: run `adminkernel migrate`).
	EnableCodeFirstInProduction bool `koanf:"EnableCodeFirstInProduction"`
	// SlowSQLMillis is the slow-SQL threshold in milliseconds (default
	// 500): slower statements are logged at WARN.
	SlowSQLMillis int `koanf:"SlowSqlMillis"`
	// MaxOpenConns caps the pool's open connections (0 = no cap).
	MaxOpenConns int `koanf:"MaxOpenConns"`
	// MaxIdleConns is how many connections the pool keeps open between
	// queries (0 = the default: MaxOpenConns, or 32 without a cap); a
	// connection idle for five minutes is closed either way.
	MaxIdleConns int    `koanf:"MaxIdleConns"`
	SQLLog       SQLLog `koanf:"SqlLog"`
}

// SQLLog is `Service:Database:SqlLog`.
type SQLLog struct {
	// Enabled logs every SQL statement (category SmartAdmin.Sql) with its
	// duration and bound arguments (secrets masked).
	Enabled bool `koanf:"Enabled"`
	// MinMillis logs only statements at least this slow (0 = all).
	MinMillis int `koanf:"MinMillis"`
	// MaxSQLChars cuts a logged statement after this many characters
	// (default 4000).
	MaxSQLChars int `koanf:"MaxSqlChars"`
	// RequestSummary writes one line per request with its statement count
	// and total SQL time (default true, when the SQL log is on).
	RequestSummary bool `koanf:"RequestSummary"`
	// Color colours the SQL log on a terminal (unset: when stderr is a
	// terminal).
	Color *bool `koanf:"Color"`
}

// Cache providers accepted by Service:Cache:Provider ("" = in-process).
const (
	CacheMemory = ""
	CacheRedis  = "Redis"
)

// Cache is `Service:Cache`.
type Cache struct {
	// Provider is the cache: empty (in-process, one replica) or Redis
	// (several replicas).
	Provider string `koanf:"Provider"`
	// PermissionMinutes is the lifetime of cached permission sets, data
	// scopes, dictionaries and config values (default 20); every change
	// drops them at once anyway.
	PermissionMinutes int `koanf:"PermissionMinutes"`
	// MemoryEntryLimit caps the entries of the in-process cache (default
	// 100000).
	MemoryEntryLimit int `koanf:"MemoryEntryLimit"`
	// MaxEntryMinutes caps the lifetime of any cache entry (default 1440).
	MaxEntryMinutes int   `koanf:"MaxEntryMinutes"`
	Redis           Redis `koanf:"Redis"`
	// NearCacheSeconds caps how long a replica keeps a near copy of a hot
	// entry (session marks, permission sets, data scopes, config values,
	// dictionaries; default 30) in a plain map in front of the cache
	// (host/cache/nearcache). With Redis, copies are dropped on every
	// replica before a change returns and this is only the safety net. 0
	// turns it off: every read goes to the cache (with Redis, a round trip).
	NearCacheSeconds int `koanf:"NearCacheSeconds"`
	// ListTotalSeconds is how long a replica may serve a list page's
	// cached total (the user page; default 5) instead of counting the
	// rows again (host/pagetotal). A write to the table starts a new
	// generation, so a total never lags a committed write (across replicas
	// through the shared cache's counter); this bounds only the case where
	// that counter could not be bumped. 0 counts on every request.
	ListTotalSeconds int `koanf:"ListTotalSeconds"`
}

// Redis is `Service:Cache:Redis`.
//
// One of three topologies: a single server (Address), Redis Sentinel
// (SentinelAddresses and MasterName: the client asks the sentinels for the
// current master and follows failovers) or Redis Cluster (ClusterAddresses:
// seed nodes; the client learns the slots and follows resharding and
// failovers). Username, Password, Db and Tls apply to the data nodes.
type Redis struct {
	// Address is the single Redis server, host:port (default
	// 127.0.0.1:6379).
	Address string `koanf:"Address"`
	// SentinelAddresses lists the sentinels (host:port) of a Sentinel
	// setup; MasterName is the master they monitor.
	SentinelAddresses []string `koanf:"SentinelAddresses"`
	// MasterName is the master the sentinels monitor (with
	// SentinelAddresses).
	MasterName string `koanf:"MasterName"`
	// SentinelUsername and SentinelPassword authenticate to the sentinels
	// themselves (empty: none).
	SentinelUsername string `koanf:"SentinelUsername"`
	// SentinelPassword authenticates to the sentinels (with
	// SentinelUsername).
	SentinelPassword Secret `koanf:"SentinelPassword"`
	// ClusterAddresses lists seed nodes (host:port) of a Redis Cluster.
	ClusterAddresses []string `koanf:"ClusterAddresses"`
	// Username authenticates to the data nodes (Redis ACL; empty: none).
	Username string `koanf:"Username"`
	// Password authenticates to the data nodes.
	Password Secret `koanf:"Password"`
	// DB is the database number (single server and Sentinel; Cluster has
	// only 0).
	DB int `koanf:"Db"`
	// KeyPrefix namespaces every key the kernel writes (default "ak:").
	KeyPrefix string   `koanf:"KeyPrefix"`
	TLS       RedisTLS `koanf:"Tls"`
}

// RedisTLS is `Service:Cache:Redis:Tls`.
type RedisTLS struct {
	// Enabled connects to Redis over TLS.
	Enabled bool `koanf:"Enabled"`
	// ServerName is the name the server certificate must carry (default:
	// the host of the address).
	ServerName string `koanf:"ServerName"`
	// CAFile is a PEM file of the CAs trusted for the server certificate
	// (default: the system roots).
	CAFile string `koanf:"CaFile"`
	// InsecureSkipVerify skips the certificate check (tests only; refused
	// in Production).
	InsecureSkipVerify bool `koanf:"InsecureSkipVerify"`
}

// Seed is `Service:Seed`.
type Seed struct {
	// AdminAccount is the seeded super-admin account (default superAdmin).
	AdminAccount string `koanf:"AdminAccount"`
	// AdminPassword is the seeded super-admin password; unset: 16 random
	// characters shown once (the log banner, or in Production the file
	// superadmin-password.txt under DataDir).
	AdminPassword Secret `koanf:"AdminPassword"`
}

// Security is `Service:Security`.
type Security struct {
	Captcha  Captcha  `koanf:"Captcha"`
	Password Password `koanf:"Password"`
	Jwt      Jwt      `koanf:"Jwt"`
	Session  Session  `koanf:"Session"`
	Sms      Sms      `koanf:"Sms"`
	Totp     Totp     `koanf:"Totp"`
	Reauth   Reauth   `koanf:"Reauth"`
	Passkey  Passkey  `koanf:"Passkey"`
}

// Passkey is `Service:Security:Passkey`: the WebAuthn relying party of
// the passkey routes (host/mfa/passkey).
type Passkey struct {
	// RpID is the relying party id: the site's host name or a registrable
	// suffix of it (admin.example.com, example.com; localhost for local
	// development), without scheme or port. Empty outside Development
	// turns passkeys off (the routes answer 40031); Development then uses
	// localhost.
	RpID string `koanf:"RpId"`
	// RpDisplayName is shown by authenticators (default "AdminKernel").
	RpDisplayName string `koanf:"RpDisplayName"`
	// Origins are the origins the browser app is served from (scheme://
	// host[:port]): https, or http for loopback hosts only; each host is
	// RpId or below it. Development without RpId: http://localhost:5100.
	Origins []string `koanf:"Origins"`
}

// Development defaults of the passkey relying party (Passkey.RpID empty).
//
//nolint:gosec // G101: an origin whose name contains "Passkey", not a credential
const (
	DevPasskeyRpID   = "localhost"
	DevPasskeyOrigin = "http://localhost:5100"
)

// PasskeyRP is the effective relying party: id, display name and origins,
// and whether passkeys are on (a configured RpId, or Development).
func (c *Config) PasskeyRP() (rpID, display string, origins []string, on bool) {
	pk := c.Service.Security.Passkey
	display = pk.RpDisplayName
	if display == "" {
		display = "AdminKernel"
	}
	switch {
	case pk.RpID != "":
		return pk.RpID, display, pk.Origins, len(pk.Origins) > 0
	case c.IsDevelopment():
		origins = pk.Origins
		if len(origins) == 0 {
			origins = []string{DevPasskeyOrigin}
		}
		return DevPasskeyRpID, display, origins, true
	default:
		return "", display, nil, false
	}
}

// Totp is `Service:Security:Totp`.
type Totp struct {
	// EncryptionKeys is the key ring that encrypts TOTP seeds at rest
	// (AES-256-GCM): the first key encrypts, every key decrypts (each
	// stored seed names its key). Rotation: docs/design/security.md, "TOTP seeds".
	// Without keys, Development and Test generate one under DataDir;
	// Production refuses to bind TOTP (and to check a bound one) until a
	// key is set.
	EncryptionKeys []TotpKey `koanf:"EncryptionKeys"`
}

// TotpKey is one entry of `Service:Security:Totp:EncryptionKeys`.
type TotpKey struct {
	// ID names the key in stored seeds: 1 to 32 characters among letters,
	// digits, '_' and '-'.
	ID string `koanf:"Id"`
	// Key is 32 bytes, base64-encoded (standard or URL alphabet, padding
	// optional).
	Key Secret `koanf:"Key"`
}

// Reauth is `Service:Security:Reauth`.
type Reauth struct {
	// WindowSeconds (default 300, 1..3600) is how long a re-authentication
	// (POST /api/v1/auth/reauth) lets its session call +R routes.
	WindowSeconds int `koanf:"WindowSeconds"`
}

// Captcha is `Service:Security:Captcha`.
type Captcha struct {
	// Enabled forces the image captcha at login on (sys.security.captcha.enabled
	// switches it at runtime).
	Enabled bool `koanf:"Enabled"`
	// MaxPending (default 100000, at least 1) caps the captcha answers
	// waiting to be checked: each anonymous GET /api/v1/auth/captcha
	// stores one for 2 minutes, so without a cap anonymous traffic grows
	// the cache without bound. Beyond the cap the captcha endpoint answers
	// HTTP 429 / 40008 with Retry-After; checking an answer is never
	// refused by it. With the in-process cache the cap is per replica;
	// with Redis it counts the answers of all replicas together.
	MaxPending int `koanf:"MaxPending"`
}

// Password is `Service:Security:Password`.
type Password struct {
	// Pbkdf2Iterations is the PBKDF2-SHA256 iteration count of new hashes
	// (default 600000, at least 100000); older hashes keep theirs and are
	// upgraded at the next login.
	Pbkdf2Iterations int `koanf:"Pbkdf2Iterations"`
	// HashConcurrency is the number of PBKDF2 computations (login checks,
	// password changes and resets, new accounts) run at once; 0 (default)
	// means GOMAXPROCS. Further ones wait in a queue of HashQueue callers
	// (default 64, 0 = no waiting) for at most HashMaxWaitMillis (default
	// 3000); beyond either bound the request is answered HTTP 503 / 40008
	// with Retry-After (docs/design/security.md, Passwords).
	HashConcurrency   int `koanf:"HashConcurrency"`
	HashQueue         int `koanf:"HashQueue"`
	HashMaxWaitMillis int `koanf:"HashMaxWaitMillis"`
	// HashPerClient and HashPerAccount are the computations one client
	// address (IPv6: its /64) and one account may have running or waiting
	// at once (0 = default 2); beyond them the request is answered HTTP
	// 429 / 40008 with Retry-After at once. Waiting callers are served
	// fairly across client addresses (docs/design/security.md, Login fairness).
	HashPerClient  int `koanf:"HashPerClient"`
	HashPerAccount int `koanf:"HashPerAccount"`
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
	// SigningKey signs access tokens (HS256): the one-key form of
	// SigningKeys (a ring of this key alone, its id derived, see
	// JwtKey.KeyID). Set SigningKey or SigningKeys, not both. One of them is
	// required in Production; in other environments a key is generated
	// under DataDir when both are unset.
	SigningKey Secret `koanf:"SigningKey"`
	// SigningKeys is the key ring: the first key signs new access tokens,
	// every key verifies them (each token names its key in the kid header).
	// Rotation: docs/design/security.md, "Access tokens: key ring".
	SigningKeys []JwtKey `koanf:"SigningKeys"`
	// Issuer is the iss of access tokens, required on verification (default
	// AdminKernel).
	Issuer string `koanf:"Issuer"`
	// Audience is the aud of issued access tokens and the only aud
	// accepted (default: Issuer).
	Audience string `koanf:"Audience"`
	// ClockSkewSeconds tolerated when validating exp/nbf (default 30).
	ClockSkewSeconds int `koanf:"ClockSkewSeconds"`
}

// JwtKey is one entry of `Service:Security:Jwt:SigningKeys`.
type JwtKey struct {
	// ID is the key's kid: 1 to 64 characters among letters, digits, '.',
	// '_' and '-'. Optional: KeyID derives one from the key.
	ID string `koanf:"Id"`
	// Key is the HMAC-SHA256 secret, its bytes as written, at least 32.
	Key Secret `koanf:"Key"`
}

// KeyID returns the entry's kid: ID when set, else DerivedKeyID of Key.
func (k JwtKey) KeyID() string {
	if k.ID != "" {
		return k.ID
	}
	return DerivedKeyID([]byte(k.Key.Reveal()))
}

// DerivedKeyID is the kid of a signing key configured without an id (the
// one-key SigningKey, a SigningKeys entry without Id, the development
// key): "k" followed by the first 8 bytes of SHA-256("adminkernel jwt
// kid\x00" || key) in lowercase hex, 17 characters. It names the key
// without disclosing it (a preimage of SHA-256 is out of reach for a key
// of 32 bytes or more; for a guessable key, a token's signature already
// allows the same offline guessing) and stays the same when the key moves
// from SigningKey to SigningKeys.
func DerivedKeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("adminkernel jwt kid\x00"))
	h.Write(key)
	return "k" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Session is `Service:Security:Session`.
type Session struct {
	// MaxConcurrent sessions per user; 0 = unlimited. The oldest are revoked.
	MaxConcurrent int `koanf:"MaxConcurrent"`
	// RefreshGraceSeconds: inside this window after a rotation the previous
	// refresh token is honoured once more (0 = strict). Default 10.
	RefreshGraceSeconds int `koanf:"RefreshGraceSeconds"`
	// Mode is the login policy: Multi (default; Multiple is accepted and
	// normalised to Multi) lets a user hold several sessions (up to
	// MaxConcurrent); Single makes every login revoke the user's other
	// sessions (revoke reason "single").
	Mode string `koanf:"Mode"`
	// IdleMinutesNormal ends a session unused for this long (0 = off): its
	// next protected request is refused (401 / 40006) and it cannot be
	// refreshed. Activity is recorded with a granularity of
	// min(IdleMinutesNormal/4, 1 minute) (docs/design/security.md, Sessions).
	IdleMinutesNormal int `koanf:"IdleMinutesNormal"`
	// IdleMinutesMfa is IdleMinutesNormal for the sessions whose login
	// verified a second factor (TOTP, SMS or a passkey; 0 = the same as
	// IdleMinutesNormal).
	IdleMinutesMfa int `koanf:"IdleMinutesMfa"`
	// AbsoluteHours caps a session's lifetime (0 = off): it ends at login +
	// min(sys.security.session.refreshMinutes, AbsoluteHours).
	AbsoluteHours int `koanf:"AbsoluteHours"`
	// CookieMode puts the refresh token in the HttpOnly cookie smart_rt
	// with the double-submit CSRF cookie smart_csrf (wire contract §1.6)
	// instead of the response body. Default false.
	CookieMode bool `koanf:"CookieMode"`
	// CookieDomain, when set, gives both cookies this Domain and
	// SameSite=None (an app on a sibling host); it requires CookieMode and
	// an https CallbackBaseUrl (the cookies are then always Secure).
	CookieDomain string `koanf:"CookieDomain"`
}

// Session modes (Service:Security:Session:Mode).
const (
	SessionMulti  = "Multi"
	SessionSingle = "Single"
)

// Single reports whether Mode is Single.
func (s Session) Single() bool { return strings.EqualFold(strings.TrimSpace(s.Mode), SessionSingle) }

// Sms is `Service:Security:Sms`.
type Sms struct {
	// Sender is "Log" (development: the code is written to the log) or
	// "Webhook". Default Log.
	Sender string `koanf:"Sender"`
	// WebhookURL receives {phone, code, template} as a JSON POST when
	// Sender is Webhook.
	WebhookURL string `koanf:"WebhookUrl"`
	// WebhookHeader names the header that carries WebhookSecret.
	WebhookHeader string `koanf:"WebhookHeader"`
	// WebhookSecret authenticates the kernel to the SMS webhook.
	WebhookSecret Secret `koanf:"WebhookSecret"`
}

// ExternalAuth is `Service:ExternalAuth`.
type ExternalAuth struct {
	// CallbackBaseURL is the public root of the backend (may carry a gateway
	// prefix). The service appends /api/v1/auth/external/{provider}/callback.
	CallbackBaseURL string `koanf:"CallbackBaseUrl"`
	// FrontendResultPath is the frontend page the SSO callback redirects
	// to: a site path (default /oauth/callback) or an absolute http(s) URL
	// of the app.
	FrontendResultPath string `koanf:"FrontendResultPath"`
	// BindTicketToBrowser (default true) binds the one-time login ticket of
	// an external login to the browser that ran the callback: the callback
	// sets the tn_oauth_ticket cookie (SameSite=Lax, Path
	// <prefix>/api/v1/auth/external) and POST exchange requires it. Turn it
	// off only when the frontend runs on another site than the backend:
	// its XHR cannot carry a Lax cookie, so the ticket alone is accepted.
	// Such a frontend should rather send a bindingChallenge: a challenged
	// ticket needs its bindingVerifier whatever this switch says.
	BindTicketToBrowser bool `koanf:"BindTicketToBrowser"`
	// MaxPendingStates (default 100000, at least 1) caps the authorize
	// states waiting for their callback: each anonymous GET
	// {provider}/authorize stores one for 5 minutes, so without a cap
	// anonymous traffic grows the cache without bound. Beyond the cap
	// authorize answers HTTP 429 / 40008 with Retry-After; a callback and
	// the consumption of a state are never refused by it. With the
	// in-process cache the cap is per replica; with Redis it counts the
	// states of all replicas together (they share Redis's memory).
	MaxPendingStates int `koanf:"MaxPendingStates"`
	// PluginDir is where provider plugin binaries are discovered. Default:
	// "plugins" next to the host binary.
	PluginDir string `koanf:"PluginDir"`
	// PluginSHA256 pins a plugin binary per provider code (hex SHA-256).
	PluginSHA256 map[string]string `koanf:"PluginSha256"`
	// RequirePins (default false) refuses every configured plugin binary
	// without a SHA-256 pin in PluginSha256: it is not launched and is
	// listed as "not launched" with the reason.
	RequirePins bool           `koanf:"RequirePins"`
	Oidc        []OIDCProvider `koanf:"Oidc"`
	// The four sections below hold the settings of each plugin provider,
	// looked up by provider code with ProviderSection (EnterpriseChat for
	// enterprise_chat). Values are handed to the plugin over RPC.
	EnterpriseChat VendorSettings `koanf:"EnterpriseChat"`
	// TeamChat holds the team_chat plugin's settings.
	TeamChat VendorSettings `koanf:"TeamChat"`
	// CodeHost holds the code_host plugin's settings.
	CodeHost VendorSettings `koanf:"CodeHost"`
	// SocialChat holds the social_chat plugin's settings.
	SocialChat VendorSettings `koanf:"SocialChat"`
	// Plugins holds the settings sections of plugin providers by code,
	// Service:ExternalAuth:Plugins:{code}:{Key} (for example
	// Service__ExternalAuth__Plugins__acme__ClientSecret): the section of
	// any plugin, in particular of third-party codes. A vendor code may use
	// it instead of its own section, not in addition (Validate refuses
	// both).
	Plugins map[string]VendorSettings `koanf:"Plugins"`
}

// OIDCProvider is one entry of `Service:ExternalAuth:Oidc`.
type OIDCProvider struct {
	// Code is the provider code ([a-z0-9_-], unique): the URL segment of
	// /auth/external/{code}/... and the key of its enabled switch.
	Code string `koanf:"Code"`
	// DisplayName is the button text on the login page.
	DisplayName string `koanf:"DisplayName"`
	// Icon is the button's Iconify icon name (optional).
	Icon string `koanf:"Icon"`
	// Authority is the issuer URL; its discovery document is read from
	// {Authority}/.well-known/openid-configuration.
	Authority string `koanf:"Authority"`
	// ClientID and ClientSecret are the client's credentials at the issuer.
	ClientID     string `koanf:"ClientId"`
	ClientSecret Secret `koanf:"ClientSecret"`
	// Scopes are the requested scopes, space-separated (default "openid
	// profile email").
	Scopes string `koanf:"Scopes"`
	// UsePkce sends a PKCE challenge (S256; default true).
	UsePkce *bool `koanf:"UsePkce"`
	// AccountClaim names the ID-token claim (or userinfo claim, when the
	// ID token lacks it) whose value is the identity's account hint: what
	// linkByAccount matches against local account names and what names
	// provisioned accounts. No default: empty means no account hint.
	// preferred_username is neither unique nor stable (OIDC Core §5.7);
	// "email" and "phone_number" count only when email_verified or
	// phone_number_verified is true.
	AccountClaim string `koanf:"AccountClaim"`
	// Brand is the provider's brand key for login pages with artwork of
	// their own (optional; lowercase letters, digits, '_' and '-', at most
	// 32 characters, e.g. "azure-ad"). Like Icon (an Iconify name
	// "prefix:name"), an invalid value is dropped with a warning
	// (pluginsdk.ValidBrand, ValidIcon), never a startup error.
	Brand string `koanf:"Brand"`
}

// VendorSettings is a plugin provider's settings section: plain key/value
// pairs (CorpId, AgentId, CorpSecret, ClientId, ClientSecret, AppId, ...).
// Keys are kept as written; values whose key matches the sensitive-name list
// are masked when printed.
type VendorSettings map[string]string

// VendorCodes lists the plugin provider codes that have a settings section
// in ExternalAuth, in field order.
var VendorCodes = []string{"enterprise_chat", "team_chat", "code_host", "social_chat"}

// Upload is `Service:Upload` (docs/operators/files.md).
type Upload struct {
	// SignedURLTTLMinutes is the lifetime of the signed /view links
	// (default 0: the links do not expire).
	SignedURLTTLMinutes int `koanf:"SignedUrlTtlMinutes"`
	// Storage is where file contents go: Local (default; files under
	// <DataDir>/files, one replica's disk) or S3 (an S3-compatible object
	// store, section S3).
	Storage string `koanf:"Storage"`
	S3      S3     `koanf:"S3"`
	// SigningKeys is the key ring of the signed /view links (HMAC-SHA256),
	// separate from the access-token keys: the first key signs, every key
	// verifies (each link names its key). Rotation: docs/design/security.md,
	// "File links". Without keys, Development and Test generate one under
	// DataDir (dev-file-link.key); Production without a key issues and
	// accepts no link (a startup warning says so).
	SigningKeys []UploadKey `koanf:"SigningKeys"`
	// ChunkExpiryHours (default 24, 1..720): a chunked upload that receives
	// nothing for this long is abandoned and removed with its chunks.
	ChunkExpiryHours int `koanf:"ChunkExpiryHours"`
	// PendingMaxMb (default 2048, 1..1048576): the total size one user's
	// unfinished chunked uploads may declare; chunk/init refuses a new
	// upload beyond it (44008).
	PendingMaxMb int `koanf:"PendingMaxMb"`
}

// Storage kinds of Service:Upload:Storage.
const (
	StorageLocal = "Local"
	StorageS3    = "S3"
)

// S3 is `Service:Upload:S3`: an S3-compatible object store.
type S3 struct {
	// Endpoint is host[:port] (no scheme), e.g. s3.eu-west-1.amazonaws.com.
	Endpoint string `koanf:"Endpoint"`
	// Bucket is the bucket the files go to.
	Bucket string `koanf:"Bucket"`
	// Region is the bucket's region (default us-east-1 when empty).
	Region string `koanf:"Region"`
	// AccessKey is the access key id.
	AccessKey string `koanf:"AccessKey"`
	// SecretKey is the secret access key.
	SecretKey Secret `koanf:"SecretKey"`
	// PathStyle addresses the bucket in the path (MinIO, most gateways)
	// rather than in the host name.
	PathStyle bool `koanf:"PathStyle"`
	// UseTLS talks HTTPS to the endpoint (default false; set it for any
	// store reached over a network you do not own).
	UseTLS bool `koanf:"UseTls"`
	// Prefix is prepended to every object name (optional, e.g. "kernel/").
	Prefix string `koanf:"Prefix"`
}

// UploadKey is one entry of `Service:Upload:SigningKeys`.
type UploadKey struct {
	// ID names the key in links: 1 to 32 characters among letters, digits,
	// '_' and '-'.
	ID string `koanf:"Id"`
	// Key is the HMAC secret, its bytes as written, at least 32.
	Key Secret `koanf:"Key"`
}

// Job is `Service:Job` (host/job, docs/operators/jobs.md): the operator's switches
// of the scheduler. They are deployment settings, not sys_config rows, on
// purpose: whoever may edit runtime settings must not be able to turn on
// SQL jobs or open the network to HTTP jobs.
type Job struct {
	// SchedulerDisabled stops this replica from firing scheduled jobs (it
	// still serves the API, runs "run now" and reaps expired leases).
	SchedulerDisabled bool `koanf:"SchedulerDisabled"`
	// SQLEnabled allows Sql jobs (off by default; dangerous: the statement
	// runs with the kernel's database account).
	SQLEnabled bool `koanf:"SqlEnabled"`
	// SQLAllowWrite runs Sql jobs in a read-write transaction (default
	// read-only).
	SQLAllowWrite bool `koanf:"SqlAllowWrite"`
	// HTTPAllowedHosts are the hosts Http jobs may call ("api.example.com",
	// "*.example.com", "10.0.0.5:8080"); empty: no Http job may run.
	HTTPAllowedHosts []string `koanf:"HttpAllowedHosts"`
	// HTTPAllowPrivate lets Http jobs reach loopback, private, link-local
	// and other non-public addresses (default refused: 47009).
	HTTPAllowPrivate bool `koanf:"HttpAllowPrivate"`
	// LeaseSeconds is how long a run's lease lasts without renewal (default
	// 15): a run whose replica died is marked Failed after it.
	LeaseSeconds int `koanf:"LeaseSeconds"`
}

// Outbound is `Service:Outbound` (host/outbound, docs/operators/jobs.md): what the
// connections the kernel opens on an administrator's behalf (Http jobs)
// may reach beyond public unicast addresses. A deployment setting, like
// Service:Job, so that whoever edits runtime settings cannot open the
// internal network.
type Outbound struct {
	// AllowedRanges are CIDR ranges or single addresses ("10.20.0.0/16",
	// "fd00:1::/64", "192.168.1.5") that outbound connections may reach
	// although they are not public (loopback, private, link-local, ...).
	// Empty: only public unicast addresses.
	AllowedRanges []string `koanf:"AllowedRanges"`
}

// ServiceLog is `Service:Logging`.
type ServiceLog struct {
	OpLog OpLog `koanf:"OpLog"`
}

// OpLog is `Service:Logging:OpLog`.
type OpLog struct {
	// Sync writes each operation-log row before the answer (default false:
	// a background queue writes them).
	Sync bool `koanf:"Sync"`
	// QueueCapacity is the background queue of operation-log rows (default
	// 10000); beyond it rows are dropped and counted.
	QueueCapacity int `koanf:"QueueCapacity"`
	// ParamMaxChars cuts the logged request parameters after this many
	// characters (default 8192).
	ParamMaxChars int `koanf:"ParamMaxChars"`
}

// Snowflake is `Service:Snowflake`.
type Snowflake struct {
	// WorkerID (0-63) distinguishes replicas in generated ids.
	WorkerID int `koanf:"WorkerId"`
}

// API is the `Api` section.
type API struct {
	// DisabledModules switches modules off by name; `Meta` disables the
	// error-code endpoint.
	DisabledModules []string `koanf:"DisabledModules"`
	// MaxPageSize is the largest page size a list accepts (default 200;
	// larger answers 48001).
	MaxPageSize int  `koanf:"MaxPageSize"`
	Cors        Cors `koanf:"Cors"`
}

// Cors is `Api:Cors`.
type Cors struct {
	// AllowedOrigins are the origins (https://admin.example.com) whose
	// browser apps may call the API with credentials; `*`, paths and
	// non-origins are refused at start. Empty: no CORS headers.
	AllowedOrigins []string `koanf:"AllowedOrigins"`
}

// Logging is the top-level `Logging` section.
type Logging struct {
	// File, when set, writes the log to this path (relative to the content
	// root) instead of standard error. The file is opened for appending and
	// reopened on SIGHUP (after logrotate renamed it:
	// docs/operators/operations.md, "Log file and rotation").
	File string `koanf:"File"`
	// FileAndStderr writes the log to standard error as well when File is
	// set. Default false: only the file.
	FileAndStderr bool `koanf:"FileAndStderr"`
	// Format is "text" (default in Development) or "json".
	Format string `koanf:"Format"`
	// LogLevel maps a category ("Default", "SmartAdmin.Sql", ...) to a
	// level: Trace, Debug, Information, Warning, Error, Critical, None.
	LogLevel map[string]string `koanf:"LogLevel"`
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
				MaxConnections:         10000,
				MaxConnectionsPerIP:    256,
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
				NearCacheSeconds: 30,
				ListTotalSeconds: 5,
			},
			Seed: Seed{AdminAccount: "superAdmin"},
			Security: Security{
				Captcha:  Captcha{MaxPending: 100000},
				Password: Password{Pbkdf2Iterations: 600000, HashQueue: 64, HashMaxWaitMillis: 3000},
				Jwt:      Jwt{Issuer: "AdminKernel", ClockSkewSeconds: 30},
				Session:  Session{RefreshGraceSeconds: 10, Mode: SessionMulti},
				Sms:      Sms{Sender: "Log"},
				Reauth:   Reauth{WindowSeconds: 300},
			},
			ExternalAuth: ExternalAuth{FrontendResultPath: "/oauth/callback", BindTicketToBrowser: true, MaxPendingStates: 100000},
			Logging: ServiceLog{OpLog: OpLog{
				QueueCapacity: 10000,
				ParamMaxChars: 8192,
			}},
			Upload:  Upload{Storage: StorageLocal, ChunkExpiryHours: 24, PendingMaxMb: 2048},
			DataDir: "data",
		},
		API:     API{MaxPageSize: 200},
		Logging: Logging{LogLevel: map[string]string{"Default": "Information"}},
	}
}
