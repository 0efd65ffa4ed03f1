package host

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/hub"
	"github.com/adminkernel/kernel/host/notice"
	"github.com/adminkernel/kernel/host/request"
)

// mountHub serves the realtime hub at hub.Path (docs/realtime.md): the
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
	})
	// The hub takes over hijacked sockets itself (hub.Upgrade): fasthttp
	// must neither close them nor keep its per-request state for them. The
	// hub is the only hijacker of this server.
	k.app.Server().KeepHijackedConns = true
	k.app.Get(hub.Path, func(c fiber.Ctx) error {
		raw := strings.Clone(c.Query(hub.TokenParam))
		c.Request().URI().QueryArgs().Del(hub.TokenParam)
		if !strings.EqualFold(c.Get(fiber.HeaderUpgrade), "websocket") {
			return errcode.New(errcode.RequestInvalid).With("field", "Upgrade")
		}
		var p *hub.Principal
		if raw != "" {
			got, err := k.hub.Authenticate(c.Context(), raw)
			if errors.Is(err, hub.ErrUnauthorized) {
				c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="invalid_token"`)
				return errcode.New(errcode.TokenInvalid).Wrap(err)
			}
			if err != nil {
				return err
			}
			p = &got
		}
		k.hub.Upgrade(c.RequestCtx(), p)
		return nil
	})
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

// jobAlertNotice delivers the notices of jobs with alertByNotice (nil when
// the Notice module is disabled: the switch then only logs).
func (k *Kernel) jobAlertNotice() func(ctx context.Context, userID int64, title, content string) error {
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
