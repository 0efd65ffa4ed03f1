package host

import (
	"context"
	"fmt"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/cacheadmin"
	"github.com/adminkernel/kernel/host/configcenter"
	"github.com/adminkernel/kernel/host/dashboard"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/file"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/menu"
	"github.com/adminkernel/kernel/host/meta"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/monitor"
	"github.com/adminkernel/kernel/host/notice"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/org"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/role"
	"github.com/adminkernel/kernel/host/user"
)

// builtinModules are the kernel's own feature areas, mounted in this order
// before any module of the application. login is the kernel's login
// service, which the login, user and external-login areas use; it is nil
// when only the static parts of the modules (names, error codes, menus)
// are read, before the services exist (factors and re, the second-factor
// area and re-authentication, and jobs, the scheduler, are nil then too).
func builtinModules(login *auth.Service, factors *mfa.Factors, re *reauth.Service, jobs *job.Engine) []Module {
	return []Module{
		meta.Module(),
		auth.Module(login),
		mfa.Module(factors, re),
		org.Module(),
		user.Module(login),
		role.Module(),
		menu.Module(),
		configcenter.Module(),
		dict.Module(),
		externalauth.Module(login),
		oplog.Module(),
		monitor.Module(),
		dashboard.Module(),
		cacheadmin.Module(),
		notice.Module(),
		job.Module(jobs),
		file.Module(),
		recycle.Module(),
	}
}

// deps hands the kernel's services to modules.
func (k *Kernel) deps() *module.Deps {
	return &module.Deps{
		Config:    k.cfg,
		Client:    k.db.Client,
		Store:     k.store,
		Events:    k.events,
		Settings:  k.settings,
		Perms:     k.perms,
		Sessions:  k.sessions,
		Hasher:    k.passwords,
		HashStats: k.hasher.Stats,
		Catalog:   k.catalog,
		Providers: k.providers,
		Trusted:   k.trusted,
		Routes:    k.routes.Routes,
		Logger:    k.logs.For,
		Totals:    k.totals,
		Realtime:  k.hub,
		// Filled after every module's Recycle ran (mountModules).
		RecycleKinds: func() []module.RecycleKind { return k.recycleKinds },
		Forget:       k.forget,
		Dialect:      k.db.Dialect,
		NewID:        k.ids.Next,
		Notices:      k.moduleNotifier(),
	}
}

// forget runs every module's Forget of kind of for id inside tx.
func (k *Kernel) forget(ctx context.Context, tx *ent.Tx, of string, id, by int64) error {
	for _, f := range k.forgets[of] {
		if err := f.Run(ctx, tx, id, by); err != nil {
			return fmt.Errorf("forget %s %d (%s): %w", of, id, f.What, err)
		}
	}
	return nil
}
