package auth

import (
	"context"
	"errors"
	"time"

	"github.com/adminkernel/kernel/ent/sysloginlog"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// ModuleName is the module of the login, token and personal endpoints,
// and of the second-factor steps of a login that host/mfa declares (its
// module registers them under this name: Api:DisabledModules "Auth"
// removes them with the login they complete).
const ModuleName = "Auth"

// Module returns the login area as a kernel module serving svc (the
// kernel's login service, Kernel.Auth). svc may be nil when only the
// static parts of the module are read (its name, for the error catalog);
// mounting then fails.
func Module(svc *Service) module.Module {
	return module.Module{Name: ModuleName, Forgets: forgets, Routes: func(d *module.Deps, api *route.Group) error {
		if svc == nil {
			return errors.New("auth: the login service is missing")
		}
		NewHandler(svc, d.Trusted, d.Config.API.MaxPageSize).Routes(api)
		return nil
	}, Retention: func(d *module.Deps) []module.Retention {
		// The login log (its page and clearing are this module's routes).
		return []module.Retention{{Name: "login log", Purge: func(ctx context.Context, before time.Time) (int, error) {
			return d.Client.SysLoginLog.Delete().Where(sysloginlog.CreateTimeLT(before)).Exec(ctx)
		}}}
	}}
}
