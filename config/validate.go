package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ValidationError lists every problem found in the settings, one per
// entry, each starting with the key it concerns.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "invalid settings:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// externalAuthPath is where the external-login endpoints are mounted; the
// service appends it to CallbackBaseUrl.
const externalAuthPath = "/api/v1/auth/external"

// OIDC defaults applied by Validate.
const (
	DefaultOIDCCode        = "oidc"
	DefaultOIDCDisplayName = "SSO"
	DefaultOIDCScopes      = "openid profile email"
)

// LogLevels lists the accepted Logging:LogLevel values.
var LogLevels = []string{"Trace", "Debug", "Information", "Warning", "Error", "Critical", "None"}

var providerCode = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// problems collects validation messages.
type problems []string

func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// err is the problems as a *ValidationError, or nil when there are none.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &ValidationError{Problems: p}
}

// Validate checks the whole tree and returns every problem at once as a
// *ValidationError, or nil. It is the one check of the settings: `serve`
// (host.New) and `config` call it and refuse the same settings with the
// same problems; what the host's constructors check again (trusted
// proxies, plugin pins, signing keys, DbType) is checked here first.
// Unknown keys (Load) are problems in Production; elsewhere Warnings lists
// them. It also normalises what it accepts: canonical
// spelling of DbType, Cache:Provider, Sms:Sender and log levels, no
// trailing slash on CallbackBaseUrl, Api:Cors:AllowedOrigins as serialized
// origins (NormalizeOrigin), and the OIDC defaults (Code oidc,
// DisplayName SSO, Scopes "openid profile email", UsePkce true).
func (c *Config) Validate() error {
	var p problems
	s := &c.Service

	c.unknownProblems(&p, "Service", "Api")
	if _, err := listenHostPort(s.HTTP.ListenAddress); err != nil {
		p.add("Service:Http:ListenAddress %q: %v", s.HTTP.ListenAddress, err)
	}
	c.validateTrustedProxies(&p)
	atLeast(&p, "Service:Http:MaxConnections", s.HTTP.MaxConnections, 0)
	atLeast(&p, "Service:Http:MaxConnectionsPerIp", s.HTTP.MaxConnectionsPerIP, 0)
	c.validateDatabase(&p)
	c.validateCache(&p)
	c.validateShutdown(&p)
	atLeast(&p, "Service:Cache:PermissionMinutes", s.Cache.PermissionMinutes, 1)
	atLeast(&p, "Service:Cache:MemoryEntryLimit", s.Cache.MemoryEntryLimit, 0)
	atLeast(&p, "Service:Cache:MaxEntryMinutes", s.Cache.MaxEntryMinutes, 0)
	if v := s.Cache.NearCacheSeconds; v < 0 || v > 3600 {
		p.add("Service:Cache:NearCacheSeconds %d is out of range 0..3600 (0 turns the near cache off)", v)
	}
	if v := s.Cache.ListTotalSeconds; v < 0 || v > 300 {
		p.add("Service:Cache:ListTotalSeconds %d is out of range 0..300 (0 counts every list total)", v)
	}
	atLeast(&p, "Service:Logging:OpLog:QueueCapacity", s.Logging.OpLog.QueueCapacity, 1)
	atLeast(&p, "Service:Logging:OpLog:ParamMaxChars", s.Logging.OpLog.ParamMaxChars, 1)
	atLeast(&p, "Service:ExternalAuth:MaxPendingStates", s.ExternalAuth.MaxPendingStates, 1)
	atLeast(&p, "Service:Security:Captcha:MaxPending", s.Security.Captcha.MaxPending, 1)
	if v := s.Security.Reauth.WindowSeconds; v < 1 || v > 3600 {
		p.add("Service:Security:Reauth:WindowSeconds %d is out of range 1..3600", v)
	}
	atLeast(&p, "Service:Security:Password:HashConcurrency", s.Security.Password.HashConcurrency, 0)
	atLeast(&p, "Service:Security:Password:HashQueue", s.Security.Password.HashQueue, 0)
	atLeast(&p, "Service:Security:Password:HashMaxWaitMillis", s.Security.Password.HashMaxWaitMillis, 1)
	atLeast(&p, "Service:Security:Password:HashPerClient", s.Security.Password.HashPerClient, 0)
	atLeast(&p, "Service:Security:Password:HashPerAccount", s.Security.Password.HashPerAccount, 0)
	if w := s.Snowflake.WorkerID; w < 0 || w > 63 {
		p.add("Service:Snowflake:WorkerId %d is out of range 0..63", w)
	}
	atLeast(&p, "Api:MaxPageSize", c.API.MaxPageSize, 1)
	c.validateTelemetry(&p)

	sms := &s.Security.Sms
	if v, ok := canonical(sms.Sender, []string{"Log", "Webhook"}); ok {
		sms.Sender = v
		if v == "Webhook" && !isHTTPURL(sms.WebhookURL) {
			p.add("Service:Security:Sms:WebhookUrl must be an absolute http or https URL when Sender is Webhook")
		}
	} else {
		p.add("Service:Security:Sms:Sender %q is not supported; valid values: Log, Webhook", sms.Sender)
	}
	c.validateJwt(&p)
	c.validateSession(&p)
	c.validateUpload(&p)
	c.validateOutbound(&p)

	c.validateCors(&p)
	c.validateFrontendResult(&p)
	c.validateCallback(&p)
	c.validatePasskey(&p)
	c.validateOIDC(&p)
	c.validatePlugins(&p)

	c.validateLogging(&p)
	return p.err()
}

// ExternalProvidersConfigured reports whether any external login provider
// is configured: an Oidc entry or a plugin whose settings section holds a
// value that is not blank (ExternalAuth.ConfiguredPlugins; a plugin with an
// empty section is not started, so it needs no callback).
func (c *Config) ExternalProvidersConfigured() bool {
	return len(c.Service.ExternalAuth.Oidc) > 0 || len(c.Service.ExternalAuth.ConfiguredPlugins()) > 0
}

// CallbackPrefix is the path part of CallbackBaseUrl without trailing
// slash: "" for https://host, "/admin" for https://host/admin/. The
// external-login cookies' Path is CallbackPrefix()+"/api/v1/auth/external".
// It is "" when CallbackBaseUrl is unset or invalid.
func (c *Config) CallbackPrefix() string {
	u, err := url.Parse(strings.TrimSpace(c.Service.ExternalAuth.CallbackBaseURL))
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}

// ListenHostPort is the host:port to listen on, taken from
// Service:Http:ListenAddress (http://localhost:5100 gives localhost:5100;
// a host of + or * means all interfaces). For an address Validate rejects
// it returns the address unchanged.
func (c *Config) ListenHostPort() string {
	hp, err := listenHostPort(c.Service.HTTP.ListenAddress)
	if err != nil {
		return c.Service.HTTP.ListenAddress
	}
	return hp
}

func listenHostPort(addr string) (string, error) {
	hostPort := addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		switch {
		case err != nil:
			return "", errors.New("not a valid URL")
		case u.Scheme != "http" && u.Scheme != "https":
			return "", errors.New("scheme must be http or https")
		case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
			return "", errors.New("must be scheme://host:port without path or query")
		}
		hostPort = u.Host
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", errors.New("want http(s)://host:port, host:port or :port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("invalid port %q", port)
	}
	if host == "+" || host == "*" {
		host = ""
	}
	return net.JoinHostPort(host, port), nil
}

func (c *Config) validateCallback(p *problems) {
	const key = "Service:ExternalAuth:CallbackBaseUrl"
	ea := &c.Service.ExternalAuth
	raw := strings.TrimRight(strings.TrimSpace(ea.CallbackBaseURL), "/")
	ea.CallbackBaseURL = raw
	if raw == "" {
		if c.IsProduction() && c.ExternalProvidersConfigured() {
			p.add("%s is required in %s when an external login provider is configured", key, c.Environment)
		}
		return
	}
	shown := MaskConnectionString(raw)
	u, ok := absoluteHTTPURL(raw)
	if !ok {
		p.add("%s %q must be an absolute http or https URL", key, shown)
		return
	}
	path := strings.ToLower(u.Path)
	frontend := strings.ToLower(strings.TrimRight(ea.FrontendResultPath, "/"))
	switch {
	case u.RawQuery != "" || u.ForceQuery:
		p.add("%s %q must not have a query string", key, shown)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		p.add("%s %q must not have a fragment", key, shown)
	case strings.Contains(path, externalAuthPath) || strings.HasSuffix(path, "/callback"):
		p.add("%s %q is a full callback URL; give the public root of the backend (for example https://host or https://host/prefix), the service appends %s/{provider}/callback", key, shown, externalAuthPath)
	case strings.HasPrefix(frontend, "/") && strings.Contains(path, frontend):
		p.add("%s %q contains the frontend result path %q; give the public root of the backend", key, shown, ea.FrontendResultPath)
	}
}

// cookieDomain is the shape of Service:Security:Session:CookieDomain: a
// host name (an optional leading dot, as browsers ignore it), no scheme,
// port or path.
var cookieDomain = regexp.MustCompile(`^\.?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// validateSession checks Service:Security:Session and normalises Mode
// (Multi when empty; Multiple is an alias of Multi).
func (c *Config) validateSession(p *problems) {
	const key = "Service:Security:Session"
	ss := &c.Service.Security.Session
	switch v, ok := canonical(ss.Mode, []string{SessionMulti, SessionSingle, "Multiple"}); {
	case strings.TrimSpace(ss.Mode) == "" || v == "Multiple":
		ss.Mode = SessionMulti
	case ok:
		ss.Mode = v
	default:
		p.add("%s:Mode %q is not supported; valid values: Multi (or Multiple), Single", key, ss.Mode)
	}
	atLeast(p, key+":MaxConcurrent", ss.MaxConcurrent, 0)
	atLeast(p, key+":RefreshGraceSeconds", ss.RefreshGraceSeconds, 0)
	atLeast(p, key+":IdleMinutesNormal", ss.IdleMinutesNormal, 0)
	atLeast(p, key+":IdleMinutesMfa", ss.IdleMinutesMfa, 0)
	atLeast(p, key+":AbsoluteHours", ss.AbsoluteHours, 0)
	ss.CookieDomain = strings.TrimSpace(ss.CookieDomain)
	if ss.CookieDomain == "" {
		return
	}
	if !cookieDomain.MatchString(ss.CookieDomain) || len(ss.CookieDomain) > 253 {
		p.add("%s:CookieDomain %q must be a host name such as example.com (no scheme, port or path)", key, ss.CookieDomain)
	}
	if !ss.CookieMode {
		p.add("%s:CookieDomain is set but %s:CookieMode is not true; the domain applies to the session cookies of cookie mode only", key, key)
	}
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Service.ExternalAuth.CallbackBaseURL)), "https://") {
		p.add("%s:CookieDomain requires an https Service:ExternalAuth:CallbackBaseUrl: the cookies are then SameSite=None, which browsers accept only with Secure", key)
	}
}

// MinJwtKeyBytes is the shortest accepted access-token signing key: 256
// bits, the size of the HMAC-SHA256 output.
const MinJwtKeyBytes = 32

// jwtKeyID is the shape of a configured kid: it is written into the
// token's header as is, so nothing needs escaping.
var jwtKeyID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// validateJwt checks the signing key or key ring: SigningKey or
// SigningKeys (not both; one of them in Production), every key at least
// MinJwtKeyBytes long, ids well formed and unique.
func (c *Config) validateJwt(p *problems) {
	jwt := &c.Service.Security.Jwt
	const key = "Service:Security:Jwt"
	switch {
	case jwt.SigningKey.IsSet() && len(jwt.SigningKeys) > 0:
		p.add("%s:SigningKey and %s:SigningKeys are both set; set one of them (SigningKey is the one-key form of SigningKeys)", key, key)
	case jwt.SigningKey.IsSet():
		if len(jwt.SigningKey.Reveal()) < MinJwtKeyBytes {
			p.add("%s:SigningKey must be at least %d bytes long", key, MinJwtKeyBytes)
		}
	case len(jwt.SigningKeys) == 0:
		if c.IsProduction() {
			p.add("%s:SigningKey is required in %s (or the key ring SigningKeys)", key, c.Environment)
		}
	}
	if strings.TrimSpace(jwt.Issuer) == "" {
		p.add("%s:Issuer must not be empty", key)
	}
	atLeast(p, key+":ClockSkewSeconds", jwt.ClockSkewSeconds, 0)
	ids := map[string]int{}
	for i, k := range jwt.SigningKeys {
		at := fmt.Sprintf("%s:SigningKeys:%d", key, i)
		if len(k.Key.Reveal()) < MinJwtKeyBytes {
			p.add("%s:Key must be at least %d bytes long", at, MinJwtKeyBytes)
		}
		if k.ID != "" && !jwtKeyID.MatchString(k.ID) {
			p.add("%s:Id %q must be 1 to 64 letters, digits, '.', '_' or '-'", at, k.ID)
			continue
		}
		if !k.Key.IsSet() {
			continue
		}
		id := k.KeyID()
		if first, dup := ids[id]; dup {
			p.add("%s: the key id %q is also the id of %s:SigningKeys:%d; ids (and keys without an id) must be unique", at, id, key, first)
		} else {
			ids[id] = i
		}
	}
}

func (c *Config) validateOIDC(p *problems) {
	seen := map[string]int{}
	for i := range c.Service.ExternalAuth.Oidc {
		o := &c.Service.ExternalAuth.Oidc[i]
		key := fmt.Sprintf("Service:ExternalAuth:Oidc:%d", i)
		if o.Code == "" {
			o.Code = DefaultOIDCCode
		}
		if o.DisplayName == "" {
			o.DisplayName = DefaultOIDCDisplayName
		}
		if o.Scopes == "" {
			o.Scopes = DefaultOIDCScopes
		}
		if o.UsePkce == nil {
			yes := true
			o.UsePkce = &yes
		}
		if !providerCode.MatchString(o.Code) {
			p.add("%s:Code %q may contain only letters, digits and underscores", key, o.Code)
		}
		if first, dup := seen[strings.ToLower(o.Code)]; dup {
			p.add("%s:Code %q is also the code of Service:ExternalAuth:Oidc:%d; codes must be unique", key, o.Code, first)
		} else {
			seen[strings.ToLower(o.Code)] = i
		}
		if !isHTTPURL(o.Authority) {
			p.add("%s:Authority %q must be an absolute http or https URL", key, o.Authority)
		}
		if strings.TrimSpace(o.ClientID) == "" {
			p.add("%s:ClientId is required", key)
		}
		o.AccountClaim = strings.TrimSpace(o.AccountClaim)
		if len(o.AccountClaim) > 256 || strings.ContainsFunc(o.AccountClaim, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			p.add("%s:AccountClaim %q must be a claim name: at most 256 characters, no spaces or control characters", key, o.AccountClaim)
		}
	}
}

// canonical returns the entry of valid equal to v ignoring case.
func canonical(v string, valid []string) (string, bool) {
	for _, s := range valid {
		if strings.EqualFold(strings.TrimSpace(v), s) {
			return s, true
		}
	}
	return v, false
}

func atLeast(p *problems, key string, v, lowest int) {
	if v < lowest {
		p.add("%s %d must be at least %d", key, v, lowest)
	}
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (c *Config) validateDatabase(p *problems) {
	s := &c.Service
	if v, ok := canonical(s.Database.DbType, SupportedDBTypes); ok {
		s.Database.DbType = v
	} else if _, sqlServer := canonical(s.Database.DbType, []string{DBSQLServer}); sqlServer {
		p.add("Service:Database:DbType %s is refused: the kernel has no tested SQL Server path (ent, its data layer, has no SQL Server dialect); valid values: %s",
			DBSQLServer, strings.Join(SupportedDBTypes, ", "))
	} else {
		p.add("Service:Database:DbType %q is not supported; valid values: %s", s.Database.DbType, strings.Join(SupportedDBTypes, ", "))
	}
	atLeast(p, "Service:Database:MaxOpenConns", s.Database.MaxOpenConns, 0)
	atLeast(p, "Service:Database:MaxIdleConns", s.Database.MaxIdleConns, 0)
}

func (c *Config) validateShutdown(p *problems) {
	if d := c.Service.Shutdown.ReadyDrainDelaySeconds; d != nil && (*d < 0 || *d > 300) {
		p.add("Service:Shutdown:ReadyDrainDelaySeconds %d must be between 0 and 300", *d)
	}
}

func (c *Config) validateCache(p *problems) {
	s := &c.Service
	if v, ok := canonical(s.Cache.Provider, []string{CacheMemory, CacheRedis}); ok {
		s.Cache.Provider = v
	} else {
		p.add("Service:Cache:Provider %q is not supported; valid values: Redis, or empty for the in-process cache", s.Cache.Provider)
	}
	if s.Cache.Provider != CacheRedis {
		return
	}
	r := s.Cache.Redis
	sentinel, cluster := len(r.SentinelAddresses) > 0, len(r.ClusterAddresses) > 0
	switch {
	case sentinel && cluster:
		p.add("Service:Cache:Redis: SentinelAddresses and ClusterAddresses are exclusive (Sentinel or Cluster, not both)")
	case sentinel && strings.TrimSpace(r.MasterName) == "":
		p.add("Service:Cache:Redis:MasterName is required with SentinelAddresses")
	case !sentinel && r.MasterName != "":
		p.add("Service:Cache:Redis:MasterName is set without SentinelAddresses")
	case cluster && r.DB != 0:
		p.add("Service:Cache:Redis:Db must be 0 with ClusterAddresses (Redis Cluster has one database)")
	case !sentinel && !cluster && strings.TrimSpace(r.Address) == "":
		p.add("Service:Cache:Redis:Address is required when Service:Cache:Provider is Redis (or SentinelAddresses and MasterName, or ClusterAddresses)")
	}
	for _, l := range []struct {
		name  string
		addrs []string
	}{{"SentinelAddresses", r.SentinelAddresses}, {"ClusterAddresses", r.ClusterAddresses}} {
		for i, a := range l.addrs {
			if _, _, err := net.SplitHostPort(strings.TrimSpace(a)); err != nil {
				p.add("Service:Cache:Redis:%s:%d %q is not host:port", l.name, i, a)
			}
		}
	}
	if r.TLS.Enabled && r.TLS.CAFile != "" {
		// Read as the cache reads it (host/cache/rediscache): the path as
		// given.
		pem, err := os.ReadFile(r.TLS.CAFile)
		switch {
		case err != nil:
			p.add("Service:Cache:Redis:Tls:CaFile %q cannot be read: %v", r.TLS.CAFile, errors.Unwrap(err))
		case !x509.NewCertPool().AppendCertsFromPEM(pem):
			p.add("Service:Cache:Redis:Tls:CaFile %q holds no PEM certificate", r.TLS.CAFile)
		}
	}
}

// validateTrustedProxies checks Service:Http:TrustedProxies as the host
// parses it (host/request.ParseTrusted): IP addresses and CIDR blocks,
// blank entries skipped.
func (c *Config) validateTrustedProxies(p *problems) {
	for i, e := range c.Service.HTTP.TrustedProxies {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		ok := net.ParseIP(e) != nil
		if strings.Contains(e, "/") {
			_, _, err := net.ParseCIDR(e)
			ok = err == nil
		}
		if !ok {
			p.add("Service:Http:TrustedProxies:%d %q is not an IP address or CIDR block (for example 10.0.0.0/8 or 192.0.2.7)", i, e)
		}
	}
}

func (c *Config) validateLogging(p *problems) {
	c.unknownProblems(p, "Logging")
	categories := make([]string, 0, len(c.Logging.LogLevel))
	for k := range c.Logging.LogLevel {
		categories = append(categories, k)
	}
	sort.Strings(categories)
	for _, k := range categories {
		if v, ok := canonical(c.Logging.LogLevel[k], LogLevels); ok {
			c.Logging.LogLevel[k] = v
		} else {
			p.add("Logging:LogLevel:%s %q is not a level; valid values: %s", k, c.Logging.LogLevel[k], strings.Join(LogLevels, ", "))
		}
	}
	if v, ok := canonical(c.Logging.Format, []string{"", "text", "json"}); ok {
		c.Logging.Format = v
	} else {
		p.add("Logging:Format %q is not supported; valid values: text, json", c.Logging.Format)
	}
}

// ValidateDatabase checks and normalises only what a command that opens the
// database needs (Service:Database, Logging): `migrate` and the other
// maintenance commands run without the signing key and the rest of the
// service's settings.
func (c *Config) ValidateDatabase() error {
	var p problems
	c.validateDatabase(&p)
	c.validateLogging(&p)
	return p.err()
}

// ValidateStores is ValidateDatabase plus Service:Cache: what the
// maintenance commands that act on the database and the shared cache need
// (user unlock, config set, session revoke).
func (c *Config) ValidateStores() error {
	var p problems
	c.validateDatabase(&p)
	c.validateCache(&p)
	c.validateLogging(&p)
	return p.err()
}

// Warnings lists what is accepted but probably wrong, for `serve` to log
// at WARN and `config` to print: the unknown keys outside Production (in
// Production Validate refuses them), an https ListenAddress (the
// kernel serves plain HTTP; TLS ends in front of it), and an absolute
// FrontendResultPath on an origin that cannot call the API
// (frontendOriginWarning).
func (c *Config) Warnings() []string {
	var out []string
	if !c.IsProduction() {
		for _, u := range c.unknown {
			out = append(out, u.message())
		}
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Service.HTTP.ListenAddress)), "https://") {
		out = append(out, fmt.Sprintf("Service:Http:ListenAddress %q: the kernel serves plain HTTP on this port, not TLS; "+
			"TLS must terminate in front of it (a reverse proxy or load balancer), and the address is better written http://",
			c.Service.HTTP.ListenAddress))
	}
	if w := c.frontendOriginWarning(); w != "" {
		out = append(out, w)
	}
	return out
}

var uploadKeyID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// validateUpload checks Service:Upload: the storage kind and its settings,
// the link key ring (keys of at least MinJwtKeyBytes, ids well formed and
// unique; without keys Production issues no links and the file module
// warns at startup) and the ranges.
func (c *Config) validateUpload(p *problems) {
	u := &c.Service.Upload
	const key = "Service:Upload"
	if u.Storage == "" {
		u.Storage = StorageLocal
	}
	if v, ok := canonical(u.Storage, []string{StorageLocal, StorageS3}); ok {
		u.Storage = v
	} else {
		p.add("%s:Storage %q is not supported; valid values: Local, S3", key, u.Storage)
	}
	if u.Storage == StorageS3 {
		s3 := &u.S3
		if strings.TrimSpace(s3.Endpoint) == "" || strings.Contains(s3.Endpoint, "://") || strings.Contains(s3.Endpoint, "/") {
			p.add("%s:S3:Endpoint must be host[:port] without a scheme or path when Storage is S3", key)
		}
		if strings.TrimSpace(s3.Bucket) == "" {
			p.add("%s:S3:Bucket is required when Storage is S3", key)
		}
		if s3.AccessKey == "" || !s3.SecretKey.IsSet() {
			p.add("%s:S3:AccessKey and %s:S3:SecretKey are required when Storage is S3", key, key)
		}
	}
	if v := u.SignedURLTTLMinutes; v < 0 || v > 525600 {
		p.add("%s:SignedUrlTtlMinutes %d is out of range 0..525600 (0: links do not expire)", key, v)
	}
	if u.ChunkExpiryHours == 0 {
		u.ChunkExpiryHours = 24
	}
	if v := u.ChunkExpiryHours; v < 1 || v > 720 {
		p.add("%s:ChunkExpiryHours %d is out of range 1..720", key, v)
	}
	if u.PendingMaxMb == 0 {
		u.PendingMaxMb = 2048
	}
	if v := u.PendingMaxMb; v < 1 || v > 1048576 {
		p.add("%s:PendingMaxMb %d is out of range 1..1048576", key, v)
	}
	seen := make(map[string]int, len(u.SigningKeys))
	for i, k := range u.SigningKeys {
		at := fmt.Sprintf("%s:SigningKeys:%d", key, i)
		if len(k.Key.Reveal()) < MinJwtKeyBytes {
			p.add("%s:Key must be at least %d bytes long", at, MinJwtKeyBytes)
		}
		if !uploadKeyID.MatchString(k.ID) {
			p.add("%s:Id must be 1 to 32 letters, digits, '_' or '-'", at)
			continue
		}
		if first, dup := seen[k.ID]; dup {
			p.add("%s: the key id %q is also the id of %s:SigningKeys:%d; ids must be unique", at, k.ID, key, first)
		}
		seen[k.ID] = i
	}
}
