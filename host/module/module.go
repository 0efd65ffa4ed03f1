// Package module is what a feature area of the kernel — or of a business
// application built on it — plugs in with: its routes, menu entries and
// error codes, and the kernel services it may use.
package module

import (
	"context"
	entgo "entgo.io/ent"
	"net"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/pagetotal"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// Module is one feature area.
type Module struct {
	// Name is what Api:DisabledModules refers to.
	Name string
	// ErrorCodes are the module's own enumerations (consumer codes 60000 and
	// up by convention); two enumerations claiming one number stop
	// composition.
	ErrorCodes []errcode.Enum
	// Menus are seeded and kept in step at every start (consumer ids from
	// 1000 by convention; a duplicate id stops composition).
	Menus []seed.Menu
	// Routes registers the module's endpoints on a group prefixed /api/v1.
	Routes func(d *Deps, api *route.Group) error
	// Settings registers the sys_config keys the module reads (outside the
	// kernel's sys.* namespace): the config center validates their values
	// and d.Settings reads them with their defaults. Keys nobody registers
	// outside sys.* stay free strings.
	Settings []sysconfig.Entry
	// JobHandlers returns the module's compiled job handlers (see
	// JobHandler); it is called once, after Routes, with the same Deps.
	// Two handlers of one name stop composition.
	JobHandlers func(d *Deps) []JobHandler
	// Recycle returns the recycle-bin types of the module's soft-deleted
	// rows (see RecycleKind); it is called once, after Routes, with the
	// same Deps. Two kinds of one type stop composition.
	Recycle func(d *Deps) []RecycleKind
	// Retention returns the purges of the module's aging rows (see
	// Retention); it is called once, after Routes, with the same Deps.
	Retention func(d *Deps) []Retention
	// Forgets returns the module's shares of purges of rows other modules
	// own (see Forget); it is called once, after Routes, with the same
	// Deps.
	Forgets func(d *Deps) []Forget
	// Dicts are dictionaries the module seeds (ids from 1000): inserted
	// when missing, then administered like the kernel's.
	Dicts []seed.Dict
	// Schema are the ent schemas of the module's own tables (business
	// resources, host/resource): the kernel creates and extends them under
	// the same policy as its own schema (database.EnsureModuleTables).
	Schema []entgo.Interface
	// Console, when set, ships pages of the module to the web console,
	// loaded at run time (see Console). A menu component two modules give
	// a page for stops composition.
	Console *Console
}

// Deps are the kernel services a module may use. They are ready when Routes
// is called. Services of other feature areas (the login service, ...) are
// not among them: a module that needs one takes it as an argument of its
// constructor, through an interface of its own.
type Deps struct {
	Config *config.Config
	Client *ent.Client
	Store  cache.Store
	// Events carries the change events the kernel relays between replicas.
	Events   *events.Bus
	Settings *sysconfig.Service
	Perms    *authz.Resolver
	Sessions *session.Service
	// Hasher hashes and verifies passwords (the kernel's PBKDF2 or the
	// wrapper of host.Options.PasswordHasher).
	Hasher password.Hasher
	// HashStats are the counters of the kernel's hashing pool.
	HashStats func() password.Stats
	Catalog   *errcode.Catalog
	// Providers is the external identity-provider registry (built-in OIDC
	// providers and plugins), keyed by code.
	Providers *idp.Registry
	// Trusted are the proxies whose forwarded headers are believed.
	Trusted []*net.IPNet
	// Routes returns every registered route (complete once all modules
	// have registered; call it from handlers, not from Routes).
	Routes func() []route.Route
	// Logger returns the logger of a category.
	Logger func(category string) hclog.Logger
	// Totals caches list totals (host/pagetotal); nil counts every time.
	Totals *pagetotal.Totals
	// RecycleKinds returns the recycle-bin types every module declared
	// (complete once all modules have registered; call it from handlers,
	// not from Routes).
	RecycleKinds func() []RecycleKind
	// Forget runs, inside tx, every module's Forget of kind of for the
	// purged row id (see Forget); a module purging a row of its own calls
	// it in the purge's transaction. Complete once all modules have
	// registered.
	Forget func(ctx context.Context, tx *ent.Tx, of string, id, by int64) error
	// Realtime pushes messages to a user's open realtime connections on
	// every replica (host/hub Push; docs/developers/realtime.md "Pushing from a
	// module").
	Realtime Realtime
	// Dialect is the ent dialect of the database (dialect.SQLite, MySQL or
	// Postgres), for modules that build SQL with ent's dialect/sql builder
	// (host/resource). Empty where no database is open (the contract
	// document's offline build).
	Dialect string
	// NewID returns the next snowflake id, for rows written without ent's
	// create hook (raw SQL). Nil where no database is open.
	NewID func() int64
	// Notices sends notices (nil when the notice module is disabled or no
	// database is open).
	Notices Notifier
}

// Realtime is what modules get of the realtime hub.
type Realtime interface {
	// Push sends target with args to every realtime connection of the
	// user (SignalR: the invocation target(args...); plain WebSocket:
	// {"type": target, "data": ...}). It fails for a reserved or malformed
	// target and for arguments that do not marshal or exceed 16 KiB.
	Push(ctx context.Context, userID int64, target string, args ...any) error
}

// Notifier sends notices from a module (Deps.Notices): to users or to the
// holders of roles, with buttons that call the module's routes (the
// console runs them for the reader, whose permission codes the route
// checks as on every call).
type Notifier interface {
	Notify(ctx context.Context, n Notice) (int64, error)
}

// Notice is a notice a module sends: exactly one of Users and Roles.
type Notice struct {
	Title, Content string
	Users, Roles   []int64
	Actions        []NoticeAction
}

// NoticeAction is a button of a notice: Method and URL of a route of the
// site (/api/v1/...), an optional confirmation text.
type NoticeAction struct {
	Label, Method, URL, Confirm string
}
