package auth

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/passkey"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// passkeyRoutes registers the passkey endpoints (a kernel extension,
// docs/reference/compatibility.md): the logins under /auth/passkey, the personal
// list under /personal/passkeys.
func (h *Handler) passkeyRoutes(api *route.Group) {
	a := api.Group("/auth/passkey")
	a.Post("/login/begin", route.Anonymous, h.passkeyLoginBegin).Doc("Start completing a login with a passkey (second factor)", PasskeyLoginBeginInput{}, passkey.Begin{})
	a.Post("/login/finish", route.Anonymous, h.passkeyLoginFinish).Doc("Complete a login with a passkey (second factor)", PasskeyFinishInput{}, LoginOutput{})
	a.Post("/passwordless/begin", route.Anonymous, h.passwordlessBegin).Doc("Start a passwordless passkey login", nil, passkey.Begin{})
	a.Post("/passwordless/finish", route.Anonymous, h.passwordlessFinish).Doc("Complete a passwordless passkey login", PasskeyFinishInput{}, LoginOutput{})

	p := api.Group("/personal/passkeys")
	p.Get("", route.Session, h.myPasskeys).Doc("My passkeys", nil, []passkey.Item{})
	p.Post("/register/begin", route.Session, h.passkeyRegisterBegin).NeedsReauth().Doc("Start registering a passkey", nil, passkey.Begin{})
	p.Post("/register/finish", route.Session, h.passkeyRegisterFinish).Doc("Register a passkey", passkey.RegisterInput{}, passkey.Item{})
	p.Delete("/{id}", route.Session, h.deleteMyPasskey).Title = "Remove one of my passkeys"
}

func (h *Handler) passkeyLoginBegin(c fiber.Ctx) error {
	var in PasskeyLoginBeginInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.svc.PasskeyLoginBegin(c.Context(), in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *Handler) passkeyLoginFinish(c fiber.Ctx) error {
	var in PasskeyFinishInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.svc.PasskeyLogin(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	return WriteTokens(c, out)
}

func (h *Handler) passwordlessBegin(c fiber.Ctx) error {
	out, err := h.svc.PasswordlessBegin(c.Context())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *Handler) passwordlessFinish(c fiber.Ctx) error {
	var in PasskeyFinishInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.svc.PasswordlessLogin(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	return WriteTokens(c, out)
}

func (h *Handler) myPasskeys(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	out, err := h.svc.ListPasskeys(c.Context(), p.UserID)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *Handler) passkeyRegisterBegin(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	out, err := h.svc.BeginPasskeyRegistration(c.Context(), p.UserID, p.SessionID)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *Handler) passkeyRegisterFinish(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in passkey.RegisterInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.svc.FinishPasskeyRegistration(c.Context(), p.UserID, p.SessionID, in)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

// deleteMyPasskey answers HTTP 200 with an empty body.
func (h *Handler) deleteMyPasskey(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if err := h.svc.DeletePasskey(c.Context(), p.UserID, p.SessionID, id); err != nil {
		return err
	}
	c.Status(fiber.StatusOK)
	return nil
}
