package host

import (
	"github.com/adminkernel/kernel/host/cacheadmin"
	"github.com/adminkernel/kernel/host/configcenter"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/menu"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/monitor"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/org"
	"github.com/adminkernel/kernel/host/role"
	"github.com/adminkernel/kernel/host/user"
)

// builtinModules are the kernel's own feature areas, mounted before any
// module of the application.
func builtinModules() []Module {
	return []Module{
		org.Module(),
		user.Module(),
		role.Module(),
		menu.Module(),
		configcenter.Module(),
		dict.Module(),
		externalauth.Module(),
		oplog.Module(),
		monitor.Module(),
		cacheadmin.Module(),
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
		Auth:      k.auth,
		Hasher:    k.auth.Hasher,
		Catalog:   k.catalog,
		Providers: k.providers,
		Trusted:   k.trusted,
		Routes:    k.routes.Routes,
		Logger:    k.logs.For,
	}
}
