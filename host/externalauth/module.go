// Package externalauth is a kernel feature area: External login
// (/api/v1/auth/external). It registers the built-in OIDC providers in the
// provider registry, reads the per-provider runtime switches
// (sys.externalauth.{code}.*) through one shared reader, and runs the flow:
// authorize, callback, ticket exchange, pending links, binding and
// unbinding. Every login ends in the kernel's one token-issuing step.
package externalauth

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/oidc"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/pluginsdk"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "ExternalAuth"

// menus are the seeded menu entries of this area: the setup doctor's
// button 319 under the config page 310. The area's other permission route,
// GET:/api/v1/auth/external/providers/all, belongs to the config center's
// Query button (311).
var menus = []seed.Menu{doctorMenu}

// Module returns the area as a kernel module; every login ends in tokens,
// the kernel's token-issuing step (Kernel.Auth).
func Module(tokens TokenIssuer) module.Module {
	return module.Module{Name: Name, Menus: menus, Forgets: forgets, Routes: func(d *module.Deps, api *route.Group) error {
		return routes(d, api, tokens)
	}}
}

func routes(d *module.Deps, api *route.Group, tokens TokenIssuer) error {
	reg, trusted := d.Providers, d.Trusted
	if reg == nil {
		return errors.New("externalauth: the provider registry is missing from the module deps")
	}
	ea := d.Config.Service.ExternalAuth
	log := d.Logger("AdminKernel.ExternalAuth")
	svc := NewService(Options{
		Providers:          reg,
		Switches:           NewSwitches(d.Settings),
		Store:              d.Store,
		Client:             d.Client,
		Tokens:             tokens,
		Hasher:             d.Hasher,
		CallbackBaseURL:    ea.CallbackBaseURL,
		AllowRequestBase:   !d.Config.IsProduction(),
		ListenAddress:      d.Config.ListenHostPort(),
		FrontendResultPath: ea.FrontendResultPath,
		// See config.ExternalAuth.BindTicketToBrowser and
		// docs/reference/compatibility.md.
		AllowUnboundTickets: !ea.BindTicketToBrowser,
		MaxPendingStates:    ea.MaxPendingStates,
		Log:                 log,
	})
	h := NewHandler(svc, d.Config.CallbackPrefix(), trusted)
	h.Routes(api)
	newDoctorRunner(svc, d.Config).routes(api.Group("/auth/external"), h)
	if !ea.BindTicketToBrowser {
		log.Warn("external login tickets are not bound to the browser (Service:ExternalAuth:BindTicketToBrowser=false): a leaked ticket URL can be redeemed anywhere within its lifetime")
	}
	// Only the providers that take part in logins: the plugin host logged
	// why the others do not.
	for _, e := range reg.List() {
		if e.Ready() {
			log.Info("external login provider registered", "provider", e.Code, "source", e.Source.String())
		}
	}
	return nil
}

// RegisterCompiled registers providers a business application compiled in
// (host.Options.Providers), in order, after the built-in ones and before
// the plugins, under the code each Describe reports: each gets its
// settings section (Service:ExternalAuth:Plugins:{code}, or the vendor
// section of a vendor code, as a plugin would) through Configure; a
// provider that refuses it is registered Misconfigured with its message.
// A code registered twice — by two of them, or by one of them and an OIDC
// instance or a plugin binary — stops startup naming both sources.
func RegisterCompiled(ctx context.Context, reg *idp.Registry, cfg *config.Config, providers []pluginsdk.Provider) error {
	for i, p := range providers {
		where := fmt.Sprintf("host.Options.Providers[%d]", i)
		if p == nil {
			return fmt.Errorf("%s is nil", where)
		}
		d, err := p.Describe(ctx)
		if err != nil {
			return fmt.Errorf("%s: Describe: %w", where, err)
		}
		if d.ProtocolVersion != pluginsdk.ProtocolVersion {
			return fmt.Errorf("%s (%s): protocol version %d, the kernel speaks %d", where, d.Code, d.ProtocolVersion, pluginsdk.ProtocolVersion)
		}
		if err := reg.Register(d.Code, p, idp.CompiledSource(where)); err != nil {
			return err
		}
		settings := pluginsdk.Settings(maps.Clone(cfg.Service.ExternalAuth.ProviderSection(d.Code)))
		if settings == nil {
			settings = pluginsdk.Settings{}
		}
		if err := p.Configure(ctx, settings); err != nil {
			if err := reg.SetStatus(d.Code, idp.Misconfigured, err.Error()); err != nil {
				return err
			}
		}
	}
	return nil
}

// RegisterBuiltins registers one OIDC provider per entry of
// Service:ExternalAuth:Oidc (defaults already applied by config.Validate).
// A code already taken in reg stops startup with both registrations named.
//
// wrap, when not nil, wraps the transport of the providers' HTTP client
// (the kernel's tracing, host/tracing).
func RegisterBuiltins(reg *idp.Registry, cfg *config.Config, wrap func(http.RoundTripper) http.RoundTripper) error {
	for i, o := range cfg.Service.ExternalAuth.Oidc {
		where := fmt.Sprintf("Service:ExternalAuth:Oidc:%d", i)
		var client *http.Client
		if wrap != nil {
			client = oidc.NewHTTPClient(oidc.DefaultTimeout)
			client.Transport = wrap(client.Transport)
		}
		p, err := oidc.New(oidc.Config{
			HTTPClient:   client,
			Code:         o.Code,
			DisplayName:  o.DisplayName,
			Icon:         o.Icon,
			Brand:        o.Brand,
			Authority:    o.Authority,
			ClientID:     o.ClientID,
			ClientSecret: o.ClientSecret.Reveal(),
			Scopes:       strings.FieldsFunc(o.Scopes, func(r rune) bool { return r == ',' || r == ' ' }),
			UsePKCE:      o.UsePkce == nil || *o.UsePkce,
			AccountClaim: o.AccountClaim,
		})
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := reg.Register(o.Code, p, idp.BuiltinSource(where)); err != nil {
			return err
		}
	}
	return nil
}
