package host

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/hub"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/notice"
	"github.com/adminkernel/kernel/host/request"
)

// mountHub serves the realtime hub at hub.Path (docs/developers/realtime.md): the
// access token comes from the access_token query parameter, checked here
// like a Session route's (a refusal is the central 401 / 40006), or from
// the socket's first message. The parameter is removed from the request
// before anything else sees it, so no log line can carry it.
func (k *Kernel) mountHub() {
	var notices hub.Notices
	if !moduleDisabled(k.cfg.API.DisabledModules, notice.Name) {
		notices = notice.NewService(k.db.Client, k.events, nil, nil)
	}
	var origins []string
	for _, o := range k.cfg.API.Cors.AllowedOrigins {
		if u, err := url.Parse(strings.TrimSpace(o)); err == nil && u.Host != "" {
			origins = append(origins, u.Host)
		}
	}
	k.hub = hub.New(hub.Options{
		Tokens: k.tokens, Sessions: k.sessions, Notices: notices, Events: k.events,
		MaxPerUser:     k.settings.Number(hub.MaxConnectionsKey),
		OriginPatterns: origins,
		Log:            k.logs.For("AdminKernel.Realtime"),
		Connections:    k.store,
		KeepAlive:      k.realtimeKeepAlive,
	})
	// The hub takes over hijacked sockets itself (hub.Upgrade): fasthttp
	// must neither close them nor keep its per-request state for them. The
	// hub is the only hijacker of this server.
	k.app.Server().KeepHijackedConns = true
	k.app.Get(hub.Path, func(c fiber.Ctx) error {
		raw := strings.Clone(c.Query(hub.TokenParam))
		c.Request().URI().QueryArgs().Del(hub.TokenParam)
		id := strings.Clone(c.Query(hub.ConnectionParam))
		c.Request().URI().QueryArgs().Del(hub.ConnectionParam)
		if !strings.EqualFold(c.Get(fiber.HeaderUpgrade), "websocket") {
			return errcode.New(errcode.RequestInvalid).With("field", "Upgrade")
		}
		if id != "" {
			return k.upgradeSignalR(c, raw, id)
		}
		var p *hub.Principal
		if raw != "" {
			got, err := k.hubAuthenticate(c, raw)
			if err != nil {
				return err
			}
			p = &got
		}
		k.hub.Upgrade(c.RequestCtx(), p)
		return nil
	})
	// SignalR (wire contract §6 item 4): negotiate, then the socket with
	// ?id=<connectionToken> above.
	k.app.Post(hub.NegotiatePath, func(c fiber.Ctx) error {
		raw := strings.Clone(c.Query(hub.TokenParam))
		c.Request().URI().QueryArgs().Del(hub.TokenParam)
		if raw == "" {
			raw = bearer(c)
		}
		p, err := k.hubAuthenticate(c, raw)
		if err != nil {
			return err
		}
		version, _ := strconv.Atoi(c.Query("negotiateVersion"))
		body, err := k.hub.Negotiate(c.Context(), p, version)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})
}

// upgradeSignalR serves the SignalR socket of connection token id: the
// access token (query parameter, or the Authorization header a non-browser
// client sends) must name the session the token was issued to; an
// unknown, spent or foreign id answers 404 as SignalR does.
func (k *Kernel) upgradeSignalR(c fiber.Ctx, raw, id string) error {
	if raw == "" {
		raw = bearer(c)
	}
	p, err := k.hubAuthenticate(c, raw)
	if err != nil {
		return err
	}
	ok, err := k.hub.Claim(c.Context(), p, id)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.RouteNotFound)
	}
	k.hub.UpgradeSignalR(c.RequestCtx(), p)
	return nil
}

// hubAuthenticate checks an access token for the hub (401 / 40006 when it
// or its session is not valid).
func (k *Kernel) hubAuthenticate(c fiber.Ctx, raw string) (hub.Principal, error) {
	p, err := k.hub.Authenticate(c.Context(), raw)
	if errors.Is(err, hub.ErrUnauthorized) {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="invalid_token"`)
		return p, errcode.New(errcode.TokenInvalid).Wrap(err)
	}
	return p, err
}

// bearer is the token of an Authorization: Bearer header ("" without).
func bearer(c fiber.Ctx) string {
	h := c.Get(fiber.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.Clone(strings.TrimSpace(h[7:]))
	}
	return ""
}

// Hub returns the realtime hub of this replica.
func (k *Kernel) Hub() *hub.Hub { return k.hub }

func moduleDisabled(disabled []string, name string) bool {
	for _, m := range disabled {
		if strings.EqualFold(strings.TrimSpace(m), name) {
			return true
		}
	}
	return false
}

// personalNotice delivers a system notice to one user: the notices of jobs
// with alertByNotice and the security notices of factor and contact
// changes (nil when the Notice module is disabled: they are only logged).
func (k *Kernel) personalNotice() func(ctx context.Context, userID int64, title, content string) error {
	if moduleDisabled(k.cfg.API.DisabledModules, notice.Name) {
		return nil
	}
	notices := notice.NewService(k.db.Client, k.events, nil, nil)
	return func(ctx context.Context, userID int64, title, content string) error {
		_, err := notices.Publish(ctx, datascope.Caller{}, notice.Input{ // the system: no actions
			Title: title, Content: &content, Type: notice.TypeMessage,
			ReceiverType: notice.ReceiversUsers, ReceiverIDs: []request.Int64{request.Int64(userID)},
		})
		return err
	}
}

// moduleNotifier sends the notices of modules (module.Deps.Notices), as
// the system: nil when the notice module is disabled.
func (k *Kernel) moduleNotifier() module.Notifier {
	if moduleDisabled(k.cfg.API.DisabledModules, notice.Name) {
		return nil
	}
	// The route table checks the buttons (an action must name a route of
	// the site); the system holds every code.
	return moduleNotices{notice.NewService(k.db.Client, k.events, k.routes.Routes, nil)}
}

type moduleNotices struct{ s *notice.Service }

func (m moduleNotices) Notify(ctx context.Context, n module.Notice) (int64, error) {
	in := notice.Input{Title: n.Title, Content: &n.Content, Type: notice.TypeMessage, ReceiverType: notice.ReceiversUsers}
	ids := n.Users
	if len(n.Roles) > 0 {
		in.ReceiverType, ids = notice.ReceiversRoles, n.Roles
	}
	for _, id := range ids {
		in.ReceiverIDs = append(in.ReceiverIDs, request.Int64(id))
	}
	for _, a := range n.Actions {
		act := notice.Action{Label: a.Label, Method: a.Method, URL: a.URL}
		if a.Confirm != "" {
			text := a.Confirm
			act.Confirm = notice.TextOrFlag{Text: &text}
		}
		in.Actions = append(in.Actions, act)
	}
	return m.s.Publish(ctx, datascope.Caller{SuperAdmin: true}, in)
}
