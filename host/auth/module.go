package auth

import (
	"errors"

	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// ModuleName is the module of the login, token and personal endpoints.
const ModuleName = "Auth"

// Module returns the login area as a kernel module serving svc (the
// kernel's login service, Kernel.Auth). svc may be nil when only the
// static parts of the module are read (its name, for the error catalog);
// mounting then fails.
func Module(svc *Service) module.Module {
	return module.Module{Name: ModuleName, Routes: func(d *module.Deps, api *route.Group) error {
		if svc == nil {
			return errors.New("auth: the login service is missing")
		}
		NewHandler(svc, d.Trusted, d.Config.API.MaxPageSize).Routes(api)
		return nil
	}}
}
