package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/openapi"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/snowflake"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// errOffline is what every statement of Contract's database answers.
var errOffline = errors.New("host: the contract document is built without a database")

// offlineDriver is the database of Contract: the modules' services are
// built on it, and never called.
type offlineDriver struct{}

func (offlineDriver) Exec(context.Context, string, any, any) error  { return errOffline }
func (offlineDriver) Query(context.Context, string, any, any) error { return errOffline }
func (offlineDriver) Tx(context.Context) (dialect.Tx, error)        { return nil, errOffline }
func (offlineDriver) Close() error                                  { return nil }
func (offlineDriver) Dialect() string                               { return dialect.SQLite }

// Contract returns the contract document (JSON) the Development service
// serves at openapi.Path, built without a database, a cache, a signing key
// or a running service (`adminkernel openapi`): the kernel's and opts's
// modules register their routes on services that are never called (an ent
// client whose every statement fails, a private in-process cache). The
// document depends on the modules, opts.Version, and from opts.Config only
// on Api:DisabledModules and the paths modules derive from settings (the
// external-login callback path); nil opts.Config takes the defaults.
func Contract(opts Options) ([]byte, error) {
	cfg := opts.Config
	if cfg == nil {
		defaults := config.Defaults()
		cfg = &defaults
	}
	catalog, err := Catalog(opts)
	if err != nil {
		return nil, err
	}
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = store.Close() }()
	ids, err := snowflake.New(0)
	if err != nil {
		return nil, err
	}
	client := ent.NewClient(ent.Driver(offlineDriver{}))
	ev := events.New()
	ttl := time.Duration(cfg.Service.Cache.PermissionMinutes) * time.Minute
	var extra []sysconfig.Entry
	for _, m := range opts.Modules {
		extra = append(extra, m.Settings...)
	}
	registry, err := sysconfig.NewRegistry(extra...)
	if err != nil {
		return nil, err
	}
	settings := sysconfig.New(client, store, ttl, ev, registry, nil)
	sessions := session.New(client, store, session.Options{NextID: ids.Next})
	hasher := password.New(password.MinIterations)
	gate, err := mfa.NewGate(mfa.Deps{Client: client, Config: cfg, Store: store, Settings: settings, Sessions: sessions})
	if err != nil {
		return nil, err
	}
	login, err := auth.New(auth.Deps{
		Client: client, Config: cfg, Store: store, Settings: settings, Hasher: hasher, Sessions: sessions, SecondFactor: gate,
	})
	if err != nil {
		return nil, err
	}
	re := reauth.New(reauth.Deps{Client: client, Settings: settings, Sessions: sessions, Sensitive: reauth.NewSensitive(client, store, nil)})
	// The scheduler is built for its routes only: it is never started.
	jobs := job.New(job.Options{Client: client, Settings: settings, Events: ev, Config: cfg.Service.Job, Outbound: cfg.Service.Outbound})
	modules, err := compose(login, mfa.NewFactors(gate, login), re, jobs, opts.Modules)
	if err != nil {
		return nil, err
	}
	routes := route.NewTable()
	deps := &module.Deps{
		Config:    cfg,
		Client:    client,
		Store:     store,
		Events:    ev,
		Settings:  settings,
		Perms:     authz.New(client, store, ttl, ev),
		Sessions:  sessions,
		Hasher:    hasher,
		Catalog:   catalog,
		Providers: idp.NewRegistry(),
		Routes:    routes.Routes,
		Logger:    func(string) hclog.Logger { return hclog.NewNullLogger() },
	}
	for _, m := range modules {
		if m.Routes == nil {
			continue
		}
		if err := m.Routes(deps, routes.Group(m.Name, APIPrefix)); err != nil {
			return nil, fmt.Errorf("module %s: %w", m.Name, err)
		}
	}
	if _, err := consoleExtensions(cfg, modules, routes); err != nil {
		return nil, err
	}
	doc, err := openapi.Build(routes.Routes(), catalog, opts.Version, cfg.API.DisabledModules)
	if err != nil {
		return nil, fmt.Errorf("contract document: %w", err)
	}
	body, err := doc.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("contract document: %w", err)
	}
	return body, nil
}
