package mfa

import (
	"context"
	"net"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// newReauthHandler is the HTTP side of re-authentication and the MFA
// administration (POST /auth/reauth, /sys/mfa/*).
func newReauthHandler(svc *reauth.Service, d *module.Deps) *reauthHandler {
	scopes := d.Scopes()
	return &reauthHandler{svc: svc, trusted: d.Trusted, targets: authority.NewTargets(d.Client, d.Store, d.Config),
		scopes: scopes, limits: authority.New(d.Client, d.Perms, scopes)}
}

type reauthHandler struct {
	svc     *reauth.Service
	trusted []*net.IPNet
	targets *authority.Targets
	scopes  *datascope.Cache
	limits  *authority.Checker
}

func (h *reauthHandler) routes(api *route.Group) {
	api.Post("/auth/reauth", route.Session, h.reauth).Doc("Re-authenticate", reauth.Input{}, true)
	g := api.Group("/sys/mfa")
	g.Post("/clear", route.Permission, h.clear).NeedsReauth().Doc("Clear a user's second factors", reauth.ClearInput{}, nil)
	hs := g.Group("/high-sensitivity")
	hs.Get("", route.Permission, bind.Read(h.svc.Sensitive().Get)).Doc("High-sensitivity list", nil, reauth.List{})
	hs.Post("", route.Permission, h.addSensitive).NeedsReauth().Doc("Add a high-sensitivity code", reauth.AddInput{}, reauth.Item{})
	hs.Delete("/{id:long}", route.Permission, h.deleteSensitive).NeedsReauth().Doc("Remove a high-sensitivity code", nil, nil)
}

func (h *reauthHandler) reauth(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in reauth.Input
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who := reauth.Caller{UserID: p.UserID, SessionID: p.SessionID, ClientIP: request.ClientIP(c, h.trusted)}
	if err := h.svc.Reauth(c.Context(), who, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *reauthHandler) clear(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in reauth.ClearInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	id := int64(in.UserID)
	if id <= 0 {
		return request.Invalid("userId")
	}
	if err := h.targets.Check(c, id); err != nil {
		return err
	}
	if err := h.svc.Clear(c.Context(), p.UserID, p.SessionID, id); err != nil {
		return err
	}
	return emptyOK(c)
}

// allow is the authority rule of the high-sensitivity list: a caller
// other than the super-admin adds or removes only codes they hold
// (41006, arg code). The defaults (the +R routes) are no rows: nobody
// removes them.
func (h *reauthHandler) allow(c fiber.Ctx) (reauth.Allow, error) {
	who, err := h.scopes.RequestCaller(c)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, code string) error {
		return h.limits.Codes(ctx, who, []string{code})
	}, nil
}

func (h *reauthHandler) addSensitive(c fiber.Ctx) error {
	var in reauth.AddInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	allow, err := h.allow(c)
	if err != nil {
		return err
	}
	userID, err := bind.UserID(c)
	if err != nil {
		return err
	}
	item, err := h.svc.Sensitive().AddChecked(c.Context(), userID, in, allow)
	if err != nil {
		return err
	}
	return envelope.OK(c, item)
}

func (h *reauthHandler) deleteSensitive(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	allow, err := h.allow(c)
	if err != nil {
		return err
	}
	if err := h.svc.Sensitive().DeleteChecked(c.Context(), id, allow); err != nil {
		return err
	}
	return emptyOK(c)
}

// emptyOK answers HTTP 200 with an empty body (the contract's "empty 200").
func emptyOK(c fiber.Ctx) error {
	c.Status(fiber.StatusOK)
	return nil
}
