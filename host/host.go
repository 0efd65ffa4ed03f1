// Package host is the Admin Kernel as a library: a business application
// builds a Kernel from settings and its own modules (routes, permission-gated
// endpoints, menu entries, error codes) and runs it. The adminkernel binary
// is this package with the built-in modules only.
package host

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/adminkernel/kernel/host/tracing"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	entgo "entgo.io/ent"
	"entgo.io/ent/dialect"
	entschema "entgo.io/ent/dialect/sql/schema"
	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/console"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/captcha"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/sqllog"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/health"
	"github.com/adminkernel/kernel/host/hub"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/host/internal/connlimit"
	"github.com/adminkernel/kernel/host/internal/cors"
	"github.com/adminkernel/kernel/host/internal/secheaders"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/logging"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/openapi"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/pagetotal"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/snowflake"
	"github.com/adminkernel/kernel/host/sysconfig"
	"github.com/adminkernel/kernel/host/telemetry"
	"github.com/adminkernel/kernel/host/token"
	"github.com/adminkernel/kernel/host/webconsole"
	"github.com/adminkernel/kernel/pluginsdk"
)

// APIPrefix is the versioned prefix of every JSON endpoint.
const APIPrefix = "/api/v1"

// Module is a feature area: routes, menu entries, error codes. The kernel's
// own areas and a business application's use the same type.
type Module = module.Module

// Options compose a Kernel.
type Options struct {
	// Config is the loaded settings tree (config.Load); required.
	Config *config.Config
	// Modules are added after the kernel's built-in modules.
	Modules []Module
	// ErrorCodeEnums registers consumer error enumerations that belong to
	// no module (the spec's ErrorCodeEnums; a module lists its own in
	// Module.ErrorCodes).
	ErrorCodeEnums []errcode.Enum
	// ErrorCodes is an alias of ErrorCodeEnums kept for existing callers;
	// both lists are registered.
	ErrorCodes []errcode.Enum
	// PasswordHasher, when set, wraps the kernel's password hasher: it is
	// called once with the kernel's PBKDF2 hasher (bounded pool included)
	// and returns the hasher every password check and new hash goes
	// through. The usual use is verifying hashes migrated from another
	// system: recognise their format in VerifyContext, answer NeedsRehash
	// true for them (password.Rehasher), and delegate the rest — and every
	// HashContext — to the kernel's hasher, so each migrated user is
	// rehashed into the kernel's format at their next login.
	PasswordHasher func(kernel password.Hasher) password.Hasher
	// Providers are external login providers compiled into the
	// application, implementing the same pluginsdk.Provider contract as
	// plugin binaries. They are registered after the built-in OIDC
	// instances and before the plugins, in the same registry, under the
	// code their Describe reports (a duplicate code stops startup naming
	// both sources), and configured with the same settings section a
	// plugin of that code would get (Service:ExternalAuth:Plugins:{code}).
	// Admins switch them like any provider (sys.externalauth.{code}.*).
	Providers []pluginsdk.Provider
	// LogOutput receives the log (standard error when nil).
	LogOutput io.Writer
	// Version is reported by the version command and the startup log.
	Version string
	// SessionClock is the clock of session lifetimes (idle and absolute
	// ends, cached session marks); nil = time.Now. For tests.
	SessionClock func() time.Time
	// RealtimeKeepAlive is the SignalR ping interval of the realtime hub
	// (0: 15 s). For tests.
	RealtimeKeepAlive time.Duration
	// Console, when set, is the web console served at / instead of the
	// embedded one: the dist/ folder of an application's own build of the
	// console (its pages compiled in; docs/developers/frontend.md, "One
	// build instead"). It must hold index.html.
	Console fs.FS
}

// Kernel is a composed, running-ready kernel.
type Kernel struct {
	// draining is set on shutdown: readiness answers 503 from then on.
	draining atomic.Bool
	// shutdownAt is when Serve saw its context end (Unix ns; 0 before):
	// the start of the shutdown Close reports the duration of.
	shutdownAt atomic.Int64
	// stopLogged is set once Close wrote its "stopped" line.
	stopLogged atomic.Bool
	cfg        *config.Config
	logs       *logging.Logs
	log        hclog.Logger
	db         *database.DB
	// recycleKinds are the recycle-bin types the modules declared.
	recycleKinds []module.RecycleKind
	// forgets are the modules' shares of purges, by kind (module.Forget).
	forgets map[string][]module.Forget
	catalog *errcode.Catalog
	routes  *route.Table
	app     *fiber.App
	version string

	ids       *snowflake.Generator // this kernel's ids (worker id set or leased)
	store     cache.Store
	totals    *pagetotal.Totals
	events    *events.Bus
	hub       *hub.Hub
	scale     *scaleOut
	settings  *sysconfig.Service
	registry  *sysconfig.Registry
	perms     *authz.Resolver
	sessions  *session.Service
	tokens    *token.Issuer
	authn     *authn.Authenticator
	auth      *auth.Service
	reauth    *reauth.Service
	mfa       *mfa.Factors
	hasher    *password.PBKDF2 // the kernel's own (its pool's counters)
	passwords password.Hasher  // hasher or Options.PasswordHasher's wrapper
	hashHook  func(password.Hasher) password.Hasher
	compiled  []pluginsdk.Provider // Options.Providers
	captcha   *captcha.Service
	trusted   []*net.IPNet
	providers *idp.Registry
	plugins   *pluginhost.Host
	jobs      *job.Engine

	exceptions *exceptionlog.Recorder
	oplog      *oplog.Writer
	metrics    *telemetry.Metrics // Prometheus metrics (host/telemetry)
	tracer     *tracing.Tracer    // OpenTelemetry tracing (host/tracing); nil when off

	// outages follow the availability of Redis and the database: one WARN
	// per outage, one INFO when it is back (host/outage).
	outages outages

	sessionClock func() time.Time // Options.SessionClock
	// realtimeKeepAlive is Options.RealtimeKeepAlive.
	realtimeKeepAlive time.Duration
}

// Catalog builds the error catalog of the options without opening anything:
// the kernel's codes plus every consumer enumeration.
func Catalog(opts Options) (*errcode.Catalog, error) {
	modules, err := compose(nil, nil, nil, nil, opts.Modules)
	if err != nil {
		return nil, err
	}
	enums := append(append([]errcode.Enum(nil), opts.ErrorCodeEnums...), opts.ErrorCodes...)
	for _, m := range modules {
		enums = append(enums, m.ErrorCodes...)
	}
	return errcode.NewCatalog(enums...)
}

// compose lists the kernel's built-in modules (builtinModules) followed by
// the application's, and refuses two modules with one name (compared
// case-insensitively, as Api:DisabledModules compares them), naming both.
// ensureModuleTables creates or extends the modules' own tables
// (Module.Schema) under the kernel's schema policy.
func ensureModuleTables(ctx context.Context, cfg *config.Config, db *database.DB, modules []Module) error {
	tables, err := ModuleTables(modules)
	if err != nil {
		return err
	}
	return database.EnsureModuleTables(ctx, cfg, db, tables)
}

// ModuleTables are the tables of the modules' own ent schemas
// (Module.Schema), in module order.
func ModuleTables(modules []Module) ([]*entschema.Table, error) {
	var schemas []entgo.Interface
	for _, m := range modules {
		schemas = append(schemas, m.Schema...)
	}
	return database.TablesOf(schemas)
}

func compose(login *auth.Service, factors *mfa.Factors, re *reauth.Service, jobs *job.Engine, app []Module) ([]Module, error) {
	builtin := builtinModules(login, factors, re, jobs)
	modules := append(builtin, app...)
	describe := func(i int) string {
		if i < len(builtin) {
			return fmt.Sprintf("the built-in module %q", modules[i].Name)
		}
		return fmt.Sprintf("the module %q (Options.Modules[%d])", modules[i].Name, i-len(builtin))
	}
	seen := make(map[string]int, len(modules))
	for i, m := range modules {
		key := strings.ToLower(strings.TrimSpace(m.Name))
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("host: %s and %s have one name", describe(j), describe(i))
		}
		seen[key] = i
	}
	if err := webconsole.Check(consoleSources(modules)); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return modules, nil
}

// consoleSources are the consoles of the modules (module.Console).
func consoleSources(modules []Module) []webconsole.Source {
	var out []webconsole.Source
	for _, m := range modules {
		if m.Console != nil {
			out = append(out, webconsole.Source{Module: m.Name, Console: m.Console})
		}
	}
	return out
}

// New validates the settings, opens the database (creating tables where the
// environment allows), seeds an empty database and builds the HTTP app.
func New(ctx context.Context, opts Options) (k *Kernel, err error) {
	if opts.Config == nil {
		return nil, errors.New("host: Options.Config is required")
	}
	// Validate normalises; work on a copy so the caller's tree is untouched.
	cfg := opts.Config.Clone()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	catalog, err := Catalog(opts)
	if err != nil {
		return nil, fmt.Errorf("composing the error catalog: %w", err)
	}
	logs, err := logging.New(cfg.Logging, cfg.ContentRoot, opts.LogOutput)
	if err != nil {
		return nil, err
	}
	built := &Kernel{cfg: cfg, logs: logs, log: logs.Root(), catalog: catalog, routes: route.NewTable(), version: opts.Version, events: events.New(), forgets: map[string][]module.Forget{},
		outages: newOutages(logs), sessionClock: opts.SessionClock, realtimeKeepAlive: opts.RealtimeKeepAlive, hashHook: opts.PasswordHasher, compiled: opts.Providers,
		metrics: telemetry.New()}
	for _, w := range cfg.Warnings() { // the same list `adminkernel config` prints
		logs.For("AdminKernel.Config").Warn(w)
	}
	defer func() {
		if err != nil {
			built.Close()
		}
	}()
	k = built
	if k.ids, err = snowflake.New(cfg.Service.Snowflake.WorkerID); err != nil {
		return nil, err
	}
	tracing.RouteLibraryLog(logs.For("AdminKernel.Tracing"))
	if k.tracer, err = tracing.New(ctx, cfg.Service.Telemetry.Tracing, opts.Version); err != nil {
		return nil, err
	}
	k.log.Info("starting", "version", opts.Version, "environment", cfg.Environment, "content_root", cfg.ContentRoot, "db_type", cfg.Service.Database.DbType)
	// The cache first: with Redis it leases the snowflake worker id that
	// seeding already uses (scaleout.go).
	if err := k.openShared(ctx); err != nil {
		return nil, err
	}
	sqlLog := sqllog.FromConfig(cfg, logs.For(sqllog.Category), os.Stdout)
	sqlLog.Observe = k.observeSQL(cfg.Service.Database.DbType)
	db, err := database.Open(ctx, cfg, logs.For("AdminKernel.Database"),
		database.WithDriver(func(d dialect.Driver) dialect.Driver { return sqllog.Wrap(d, sqlLog) }),
		database.WithIDs(k.ids.Next), database.WithTracker(k.outages.db))
	if err != nil {
		return nil, err
	}
	k.db = db
	if err := database.EnsureSchema(ctx, cfg, k.db); err != nil {
		return nil, err
	}
	// List totals (the user page's COUNT) are cached for a few seconds;
	// every committed write to sys_user starts a new generation.
	k.totals = pagetotal.New(k.store, pagetotal.Options{
		TTL: time.Duration(cfg.Service.Cache.ListTotalSeconds) * time.Second, Log: logs.For("AdminKernel.ListTotals"),
	})
	pagetotal.Track(k.db.Client, k.totals)
	modules, err := compose(nil, nil, nil, nil, opts.Modules)
	if err != nil {
		return nil, err
	}
	if err := ensureModuleTables(ctx, cfg, k.db, modules); err != nil {
		return nil, err
	}
	var menus []seed.Menu
	var dicts []seed.Dict
	var settings []sysconfig.Entry
	for _, m := range modules {
		menus = append(menus, m.Menus...)
		dicts = append(dicts, m.Dicts...)
		settings = append(settings, m.Settings...)
	}
	if k.registry, err = sysconfig.NewRegistry(settings...); err != nil {
		return nil, err
	}
	if _, err := seed.Run(ctx, k.db.Client, seed.Options{
		AdminAccount:  cfg.Service.Seed.AdminAccount,
		AdminPassword: cfg.Service.Seed.AdminPassword.Reveal(),
		PasswordDir:   passwordDir(cfg),
		Hasher:        password.New(cfg.Service.Security.Password.EffectiveIterations()),
		ExtraMenus:    menus,
		ExtraDicts:    dicts,
		Log:           logs.For("AdminKernel.Seed"),
	}); err != nil {
		return nil, fmt.Errorf("seeding: %w", err)
	}
	if err := k.buildServices(ctx); err != nil {
		return nil, err
	}
	k.jobs = job.New(job.Options{
		Client: k.db.Client, SQL: k.db.SQL, Dialect: k.db.Dialect, Settings: k.settings, Events: k.events,
		Config: cfg.Service.Job, Outbound: cfg.Service.Outbound, Log: logs.For("AdminKernel.Job"), Notify: k.personalNotice(), Tracer: k.tracer,
		Sessions: k.sessions,
	})
	// The same list again, now with the services the modules are built on.
	if modules, err = compose(k.auth, k.mfa, k.reauth, k.jobs, opts.Modules); err != nil {
		return nil, err
	}
	if err := k.buildApp(modules, opts.Console); err != nil {
		return nil, err
	}
	// The scheduler last: every module's compiled handlers are registered.
	if err := k.jobs.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the scheduler: %w", err)
	}
	return k, nil
}

// passwordDir is where a generated super-admin password goes: in
// Production a file of the data directory (never the log, which is
// shipped and kept), elsewhere "" (the log's banner).
func passwordDir(cfg *config.Config) string {
	if cfg.IsProduction() {
		return cfg.DataPath()
	}
	return ""
}

func (k *Kernel) buildApp(modules []Module, ownConsole fs.FS) error {
	cfg := k.cfg
	trusted := cfg.Service.HTTP.TrustedProxies
	k.exceptions = exceptionlog.New(k.db.Client, k.logs.For("AdminKernel.ExceptionLog")).WithTrustedProxies(k.trusted)
	k.oplog = oplog.New(oplog.EntInserter(k.db.Client), oplog.Options{
		Config: cfg.Service.Logging.OpLog, Trusted: k.trusted, Catalog: k.catalog,
		Log: k.logs.For("AdminKernel.OpLog"), Recorder: k.exceptions,
	})
	// The body limit before anything reads the body (bodylimit.go).
	k.routes.Around(bodyLimit(cfg.Service.HTTP.BodyLimitBytes))
	// +R first: a refused call is no operation.
	k.routes.Around(k.reauth.Guard)
	k.routes.Around(k.oplog.Middleware)
	if err := k.watch(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	errorHandler := envelope.ErrorHandler(k.catalog, k.logs.For("AdminKernel.Http"), k.exceptions.Record)
	k.app = fiber.New(fiber.Config{
		AppName:   "adminkernel",
		BodyLimit: cfg.Service.HTTP.BodyLimitBytes,
		// Bodies over BodyLimit are streamed to the handler rather than
		// refused by fasthttp: the file uploads read them as streams, every
		// other route gets the limit from bodyLimit (bodylimit.go).
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		ErrorHandler:                 errorHandler,
		TrustProxy:                   len(trusted) > 0,
		TrustProxyConfig:             fiber.TrustProxyConfig{Proxies: trusted},
		ProxyHeader:                  proxyHeader(trusted),
		ReadTimeout:                  30 * time.Second,
		IdleTimeout:                  120 * time.Second,
	})
	k.app.Use(secheaders.New(secheaders.Options{
		HSTS:       strings.HasPrefix(strings.ToLower(cfg.Service.ExternalAuth.CallbackBaseURL), "https://"),
		AuthPrefix: APIPrefix + "/auth",
	}), newRequestIDs().middleware())
	if h := k.tracer.Middleware(k.quietProbe()); h != nil {
		k.app.Use(h)
	}
	k.app.Use(k.httpMetrics(errorHandler), envelope.Recover(), closeAfterStream(cfg.Service.HTTP.BodyLimitBytes))
	// CORS before the health probes, the rate limiter and the router: a
	// preflight is answered here and never counted, and the headers are
	// set before any error answer is written.
	if origins := cfg.API.Cors.AllowedOrigins; len(origins) > 0 {
		h, err := cors.New(origins)
		if err != nil {
			return fmt.Errorf("host: Api:Cors:AllowedOrigins: %w", err)
		}
		k.app.Use(h)
	}
	health.Mount(k.app, k.readinessChecks(), 2*time.Second, k.draining.Load)
	k.mountMetrics()
	k.app.Use(metricsNotHere)
	if err := k.mountConsole(modules, ownConsole); err != nil {
		return err
	}
	k.app.Use("/api", k.rateLimiter())
	// Cookie session mode: token responses find the policy on the app, and
	// the CSRF check runs in front of every /api route (refresh included).
	k.auth.Cookies().Mount(k.app, "/api")
	k.app.Use(sqllog.Middleware(k.logs.For(sqllog.Category), sqllog.RequestSummary(cfg)))
	k.mountHub()

	deps := k.deps()
	for _, m := range modules {
		if m.Routes == nil {
			continue
		}
		if err := m.Routes(deps, k.routes.Group(m.Name, APIPrefix)); err != nil {
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
	}
	for _, m := range modules {
		if m.JobHandlers == nil || k.jobs == nil {
			continue
		}
		if err := k.jobs.Register(m.JobHandlers(deps)...); err != nil {
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
	}
	var retention []module.Retention
	for _, m := range modules {
		if m.Retention != nil {
			retention = append(retention, m.Retention(deps)...)
		}
	}
	if k.jobs != nil {
		k.jobs.SetRetention(retention)
	}
	for _, m := range modules {
		if m.Forgets == nil {
			continue
		}
		for _, f := range m.Forgets(deps) {
			if strings.TrimSpace(f.Of) == "" || f.Run == nil {
				return fmt.Errorf("module %s: a forget (%q) lacks its kind or function", m.Name, f.What)
			}
			k.forgets[f.Of] = append(k.forgets[f.Of], f)
		}
	}
	recycleOwner := map[string]string{}
	for _, m := range modules {
		if m.Recycle == nil {
			continue
		}
		for _, kind := range m.Recycle(deps) {
			typ := strings.ToLower(strings.TrimSpace(kind.Type))
			if typ == "" || kind.Page == nil || kind.Restore == nil || kind.Purge == nil || kind.PurgeCode == "" || len(kind.RestoreCodes) == 0 {
				return fmt.Errorf("module %s: recycle kind %q lacks its type, functions or area codes", m.Name, kind.Type)
			}
			if prev, dup := recycleOwner[typ]; dup {
				return fmt.Errorf("module %s: recycle kind %q is already declared by module %s", m.Name, typ, prev)
			}
			recycleOwner[typ] = m.Name
			kind.Type = typ
			k.recycleKinds = append(k.recycleKinds, kind)
		}
	}
	if err := k.routes.Mount(k.app, k.authn.Guards(), cfg.API.DisabledModules); err != nil {
		return err
	}
	if cfg.IsDevelopment() {
		if err := k.mountContract(); err != nil {
			return err
		}
	}
	k.metrics.IndexRoutes(k.app)
	// Anything unmatched ends in the central handler: Fiber's router
	// answers a path served under other methods with 405 / 48004 and an
	// Allow header listing them, any other path with 404 / 48003.
	return nil
}

// mountConsole serves the embedded web console at / (host/webconsole)
// unless Api:DisabledModules names "Console". It runs as a middleware in
// front of the router for GET and HEAD only, so API paths keep their 404
// and 405 envelopes. With it come the pages modules ship (module.Console):
// their files under /console-ext/<module>/ and their listing at
// GET /api/v1/sys/console/extensions (a disabled module's are left out).
func (k *Kernel) mountConsole(modules []Module, own fs.FS) error {
	ext, err := consoleExtensions(k.cfg, modules, k.routes)
	if err != nil || ext == nil {
		return err
	}
	dist := console.Dist()
	if own != nil {
		if _, err := fs.Stat(own, "index.html"); err != nil {
			return fmt.Errorf("host: Options.Console has no index.html: %w", err)
		}
		dist = own
	}
	h, err := webconsole.Handler(dist)
	if err != nil {
		return fmt.Errorf("host: the embedded console: %w", err)
	}
	k.app.Use(ext.Assets(), h)
	return nil
}

// consoleExtensions builds the listing of the modules' console pages and
// registers its route on routes (nil, nil when Api:DisabledModules names
// "Console"); a disabled module's pages are left out. The served kernel
// and the offline contract document both call it.
func consoleExtensions(cfg *config.Config, modules []Module, routes *route.Table) (*webconsole.Service, error) {
	disabled := func(name string) bool {
		for _, m := range cfg.API.DisabledModules {
			if strings.EqualFold(strings.TrimSpace(m), name) {
				return true
			}
		}
		return false
	}
	if disabled(webconsole.ModuleName) {
		return nil, nil
	}
	var live []Module
	for _, m := range modules {
		if !disabled(m.Name) {
			live = append(live, m)
		}
	}
	ext, err := webconsole.NewService(consoleSources(live))
	if err != nil {
		return nil, fmt.Errorf("host: the modules' console pages: %w", err)
	}
	ext.Routes(routes.Group(webconsole.ModuleName, APIPrefix))
	return ext, nil
}

// mountContract serves the contract document built from the mounted routes
// (Development only; elsewhere the path answers 404).
func (k *Kernel) mountContract() error {
	doc, err := openapi.Build(k.routes.Routes(), k.catalog, k.version, k.cfg.API.DisabledModules)
	if err != nil {
		return fmt.Errorf("contract document: %w", err)
	}
	body, err := doc.MarshalJSON()
	if err != nil {
		return fmt.Errorf("contract document: %w", err)
	}
	k.app.Get(openapi.Path, func(c fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})
	return nil
}

// limitListener wraps ln with the connection caps and the accept retry.
func (k *Kernel) limitListener(ln net.Listener) net.Listener {
	if _, done := ln.(*connlimit.Listener); done {
		return ln
	}
	h := k.cfg.Service.HTTP
	maxConns := h.MaxConnections
	if limit, ok := connlimit.FileLimit(); ok {
		if eff, lowered := connlimit.EffectiveMax(maxConns, limit); lowered {
			k.log.Info("Service:Http:MaxConnections lowered to fit the descriptor limit", "configured", maxConns, "effective", eff, "descriptor_limit", limit)
			maxConns = eff
		}
	}
	k.log.Info("connection limits", "max_connections", maxConns, "max_connections_per_ip", h.MaxConnectionsPerIP, "per_ip_exempt_proxies", len(k.trusted))
	trusted := k.trusted
	return connlimit.Wrap(ln, connlimit.Options{
		MaxConns: maxConns,
		MaxPerIP: h.MaxConnectionsPerIP,
		Exempt: func(ip netip.Addr) bool {
			for _, n := range trusted {
				if n.Contains(ip.AsSlice()) {
					return true
				}
			}
			return false
		},
		Log: k.logs.For("AdminKernel.Http"),
	})
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

func (k *Kernel) readinessChecks() []health.Check {
	return []health.Check{
		{Name: "db", Probe: k.db.Ping},
		{Name: "cache", Probe: k.store.Ping},
	}
}

// Config returns the settings tree.
func (k *Kernel) Config() *config.Config { return k.cfg }

// ReopenLogs reopens Logging:File by its path (after logrotate renamed
// it; `adminkernel serve` calls it on SIGHUP) and logs that it did, in the
// new file. Without Logging:File it does nothing.
func (k *Kernel) ReopenLogs() error {
	path := k.logs.FilePath()
	if path == "" {
		return nil
	}
	if err := k.logs.Reopen(); err != nil {
		k.log.Error("the log file could not be reopened: still writing to the previous one", "path", path, "error", err.Error())
		return err
	}
	k.log.Info("log file reopened", "path", path)
	return nil
}

// Logger returns the logger of a category.
func (k *Kernel) Logger(category string) hclog.Logger { return k.logs.For(category) }

// Ent returns the ent client.
func (k *Kernel) Ent() *ent.Client { return k.db.Client }

// SQL returns the connection pool under Ent (tests and tools that need a
// statement ent does not build).
func (k *Kernel) SQL() *sql.DB { return k.db.SQL }

// Events returns the kernel's change events (config, dictionary and
// permission invalidations; relayed between replicas with Redis).
func (k *Kernel) Events() *events.Bus { return k.events }

// Catalog returns the error catalog.
func (k *Kernel) Catalog() *errcode.Catalog { return k.catalog }

// Routes returns the registered routes.
func (k *Kernel) Routes() []route.Route { return k.routes.Routes() }

// App returns the Fiber app (tests drive it with App().Test).
func (k *Kernel) App() *fiber.App { return k.app }

// Serve listens on Service:Http:ListenAddress until ctx is cancelled, then
// shuts down gracefully within Service:Http:ShutdownTimeoutSeconds. Before
// listening it raises the soft descriptor limit to the hard one (Linux).
func (k *Kernel) Serve(ctx context.Context) error {
	k.raiseFileLimit()
	addr := k.cfg.ListenHostPort()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return k.ServeListener(ctx, ln)
}

// raiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit and logs
// both values (Go's runtime already does so at start since Go 1.19; doing it
// here makes the figure visible and holds for any runtime).
func (k *Kernel) raiseFileLimit() {
	before, after, ok, err := connlimit.RaiseFileLimit()
	switch {
	case !ok:
		return
	case err != nil:
		k.log.Warn("raising the descriptor limit failed", "soft_before", before, "error", err)
	default:
		k.log.Info("descriptor limit", "soft_before", before, "soft_after", after)
	}
}

// ServeListener serves on an existing listener until ctx is cancelled. The
// listener is wrapped by connlimit: temporary accept errors (out of
// descriptors, ...) are retried with back-off instead of ending Serve, and
// Service:Http:MaxConnections / MaxConnectionsPerIp shed connections beyond
// them.
func (k *Kernel) ServeListener(ctx context.Context, ln net.Listener) error {
	k.log.Info("listening", "address", "http://"+ln.Addr().String())
	stopMetrics, err := k.serveMetrics(ctx)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer stopMetrics()
	ln = k.limitListener(ln)
	errc := make(chan error, 1)
	go func() {
		errc <- k.app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true})
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Draining: readiness answers 503 for ReadyDrainDelaySeconds while
	// requests are still served, so a load balancer that follows it
	// sends this replica nothing new; then the listener closes, in-flight
	// requests finish (ShutdownTimeoutSeconds) and the caller's Close
	// drains the operation log.
	k.draining.Store(true)
	k.shutdownAt.CompareAndSwap(0, time.Now().UnixNano())
	if d := k.cfg.ReadyDrainDelay(); d > 0 {
		k.log.Info("shutting down: readiness 503, draining before closing the listener", "ready_drain_delay", d)
		select {
		case err := <-errc:
			return err
		case <-time.After(d):
		}
	}
	k.log.Info("shutting down")
	// Sockets are hijacked connections the HTTP drain does not wait for:
	// close them first (going away), so clients reconnect elsewhere.
	k.hub.Close()
	timeout := time.Duration(k.cfg.Service.HTTP.ShutdownTimeoutSeconds) * time.Second
	stopSweep := k.closeSilentConns(ln)
	err = k.app.ShutdownWithTimeout(timeout)
	stopSweep()
	if err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	return <-errc
}

// silentQuiet is how long a connection may have sent nothing before the
// shutdown closes it: it carries no request to finish.
const silentQuiet = time.Second

// closeSilentConns closes, every 100 ms until the returned stop is called,
// the connections that have not sent a byte for silentQuiet (a load
// balancer's or a client pool's pre-opened ones): fasthttp counts them as
// active, so the drain would wait for them until its timeout.
func (k *Kernel) closeSilentConns(ln net.Listener) (stop func()) {
	cl, ok := ln.(*connlimit.Listener)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		closed := 0
		for {
			closed += cl.CloseSilent(silentQuiet)
			select {
			case <-done:
				if closed > 0 {
					k.log.Info("shutdown closed connections that never sent a request", "connections", closed)
				}
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// jobStopTimeout bounds how long Close waits for the runs of this replica
// to write their end.
const jobStopTimeout = 5 * time.Second

// Jobs returns the scheduler.
func (k *Kernel) Jobs() *job.Engine { return k.jobs }

// Close stops the scheduler, drains the operation log, then releases the cache, the database and
// the log file.
//
// Its last line, once everything but the log is closed, is "stopped" with
// the shutdown's duration: from the end of Serve's context (the signal)
// when the kernel served, else from the call of Close.
func (k *Kernel) Close() error {
	closeAt := time.Now()
	var errs []error
	if k.jobs != nil {
		// Runs of this replica end (Failed "interrupted") while the
		// database is still open.
		k.jobs.Stop(jobStopTimeout)
		k.jobs = nil
	}
	if k.oplog != nil {
		ctx, cancel := context.WithTimeout(context.Background(), oplog.DefaultDrainTimeout)
		if err := k.oplog.Close(ctx); err != nil {
			k.log.Warn("operation log not fully written at shutdown", "error", err, "lost", k.oplog.Lost())
		}
		cancel()
		k.oplog = nil
	}
	if k.hub != nil {
		k.hub.Close()
	}
	if k.plugins != nil {
		errs = append(errs, k.plugins.Close())
		k.plugins = nil
	}
	if k.scale != nil {
		errs = append(errs, k.scale.close())
		k.scale = nil
	}
	if k.store != nil {
		errs = append(errs, k.store.Close())
	}
	if k.db != nil {
		errs = append(errs, k.db.Close())
	}
	if k.tracer != nil {
		// After the plugins (their RPC spans end) and before the log.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := k.tracer.Shutdown(ctx); err != nil {
			k.log.Warn("tracing: spans not all exported at shutdown", "error", err.Error())
		}
		cancel()
		k.tracer = nil
	}
	if k.log != nil && k.app != nil && k.stopLogged.CompareAndSwap(false, true) {
		from := closeAt
		if at := k.shutdownAt.Load(); at != 0 {
			from = time.Unix(0, at)
		}
		args := []any{"duration", time.Since(from).Round(time.Millisecond).String(), "close", time.Since(closeAt).Round(time.Millisecond).String()}
		if err := errors.Join(errs...); err != nil {
			args = append(args, "error", err.Error())
		}
		k.log.Info("stopped", args...)
	}
	if k.logs != nil {
		errs = append(errs, k.logs.Close())
	}
	return errors.Join(errs...)
}
