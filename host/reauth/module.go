package reauth

import (
	"context"
	"errors"
	"net"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// ModuleName is the module of POST /auth/reauth and /sys/mfa/*. Disabling
// it removes these endpoints, not the +R enforcement (the kernel installs
// Guard on every route).
const ModuleName = "Reauth"

// Permission codes of the MFA administration (wire contract §5.2 rows
// 315-318, under the config page 310).
const (
	codeList   = "GET:/api/v1/sys/mfa/high-sensitivity"
	codeAdd    = "POST:/api/v1/sys/mfa/high-sensitivity"
	codeDelete = "DELETE:/api/v1/sys/mfa/high-sensitivity/{id:long}"
	codeClear  = "POST:/api/v1/sys/mfa/clear"
)

var menus = []seed.Menu{
	{ID: 315, ParentID: 310, Type: seed.MenuButton, Title: "高敏感操作-查询", Permission: codeList, Sort: 5},
	{ID: 316, ParentID: 310, Type: seed.MenuButton, Title: "高敏感操作-新增", Permission: codeAdd, Sort: 6},
	{ID: 317, ParentID: 310, Type: seed.MenuButton, Title: "高敏感操作-删除", Permission: codeDelete, Sort: 7},
	{ID: 318, ParentID: 310, Type: seed.MenuButton, Title: "清除用户MFA", Permission: codeClear, Sort: 8},
}

// Module returns the area as a kernel module serving svc. svc may be nil
// when only the static parts are read; mounting then fails.
func Module(svc *Service) module.Module {
	return module.Module{Name: ModuleName, Menus: menus, Routes: func(d *module.Deps, api *route.Group) error {
		if svc == nil {
			return errors.New("reauth: the service is missing")
		}
		scopes := d.Scopes()
		h := &handler{svc: svc, trusted: d.Trusted, targets: authority.NewTargets(d.Client, d.Store, d.Config),
			scopes: scopes, limits: authority.New(d.Client, d.Perms, scopes)}
		h.routes(api)
		return nil
	}}
}

type handler struct {
	svc     *Service
	trusted []*net.IPNet
	targets *authority.Targets
	scopes  *datascope.Cache
	limits  *authority.Checker
}

func (h *handler) routes(api *route.Group) {
	api.Post("/auth/reauth", route.Session, h.reauth).Doc("Re-authenticate", Input{}, true)
	g := api.Group("/sys/mfa")
	g.Post("/clear", route.Permission, h.clear).NeedsReauth().Doc("Clear a user's second factors", ClearInput{}, nil)
	hs := g.Group("/high-sensitivity")
	hs.Get("", route.Permission, bind.Read(h.svc.d.Sensitive.Get)).Doc("High-sensitivity list", nil, List{})
	hs.Post("", route.Permission, h.addSensitive).NeedsReauth().Doc("Add a high-sensitivity code", AddInput{}, Item{})
	hs.Delete("/{id:long}", route.Permission, h.deleteSensitive).NeedsReauth().Doc("Remove a high-sensitivity code", nil, nil)
}

func (h *handler) reauth(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in Input
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	who := Caller{UserID: p.UserID, SessionID: p.SessionID, ClientIP: request.ClientIP(c, h.trusted)}
	if err := h.svc.Reauth(c.Context(), who, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *handler) clear(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in ClearInput
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
func (h *handler) allow(c fiber.Ctx) (Allow, error) {
	who, err := h.scopes.RequestCaller(c)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, code string) error {
		return h.limits.Codes(ctx, who, []string{code})
	}, nil
}

func (h *handler) addSensitive(c fiber.Ctx) error {
	var in AddInput
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
	item, err := h.svc.d.Sensitive.AddChecked(c.Context(), userID, in, allow)
	if err != nil {
		return err
	}
	return envelope.OK(c, item)
}

func (h *handler) deleteSensitive(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	allow, err := h.allow(c)
	if err != nil {
		return err
	}
	if err := h.svc.d.Sensitive.DeleteChecked(c.Context(), id, allow); err != nil {
		return err
	}
	return emptyOK(c)
}

// emptyOK answers HTTP 200 with an empty body (the contract's "empty 200").
func emptyOK(c fiber.Ctx) error {
	c.Status(fiber.StatusOK)
	return nil
}
