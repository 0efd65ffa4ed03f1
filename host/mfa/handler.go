package mfa

import (
	"net"
	"strings"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/mfa/passkey"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// handler mounts the second-factor endpoints: the login steps, TOTP
// binding and recovery, and the passkeys (a kernel extension,
// docs/reference/compatibility.md).
type handler struct {
	f       *Factors
	trusted []*net.IPNet
}

// routes registers the endpoints on api, a group of the login module
// (auth.ModuleName; see ModuleName).
func (h *handler) routes(api *route.Group) {
	a := api.Group("/auth")
	a.Post("/login/sms", route.Anonymous, h.loginSms).Doc("Complete a password login with its SMS code", SmsChallengeInput{}, auth.LoginOutput{})
	a.Post("/login/sms/resend", route.Anonymous, h.loginSmsResend).Doc("Resend the SMS code of a password login", SmsResendInput{}, auth.SmsSendOutput{})
	a.Post("/login/totp", route.Anonymous, h.totpLogin).Doc("Complete a login with a TOTP code", TotpLoginInput{}, auth.LoginOutput{})
	a.Post("/mfa/bind/start", route.Anonymous, h.bindStart).Doc("Start binding TOTP", BindStartInput{}, BindStartOutput{})
	a.Post("/mfa/bind/complete", route.Anonymous, h.bindComplete).Doc("Complete binding TOTP", BindCompleteInput{}, BindCompleteOutput{}).OpLog = true
	api.Post("/personal/mfa/bind/start", route.Session, h.bindStartSession).Doc("Start binding TOTP from a signed-in session (re-authentication window required)", nil, BindStartOutput{})
	a.Post("/mfa/recovery", route.Anonymous, h.recovery).Doc("Unbind TOTP with a recovery code", RecoveryInput{}, nil).OpLog = true

	// The passkeys: the logins under /auth/passkey, the personal list
	// under /personal/passkeys.
	pa := api.Group("/auth/passkey")
	pa.Post("/login/begin", route.Anonymous, h.passkeyLoginBegin).Doc("Start completing a login with a passkey (second factor)", PasskeyLoginBeginInput{}, passkey.Begin{})
	pa.Post("/login/finish", route.Anonymous, h.passkeyLoginFinish).Doc("Complete a login with a passkey (second factor)", PasskeyFinishInput{}, auth.LoginOutput{})
	pa.Post("/passwordless/begin", route.Anonymous, h.passwordlessBegin).Doc("Start a passwordless passkey login", nil, passkey.Begin{})
	pa.Post("/passwordless/finish", route.Anonymous, h.passwordlessFinish).Doc("Complete a passwordless passkey login", PasskeyFinishInput{}, auth.LoginOutput{})

	p := api.Group("/personal/passkeys")
	p.Get("", route.Session, h.myPasskeys).Doc("My passkeys", nil, []passkey.Item{})
	p.Post("/register/begin", route.Session, h.passkeyRegisterBegin).NeedsReauth().Doc("Start registering a passkey", nil, passkey.Begin{})
	p.Post("/register/finish", route.Session, h.passkeyRegisterFinish).Doc("Register a passkey", passkey.RegisterInput{}, passkey.Item{})
	p.Delete("/{id}", route.Session, h.deleteMyPasskey).Title = "Remove one of my passkeys"
}

func (h *handler) client(c fiber.Ctx) auth.Client {
	return auth.Client{IP: request.ClientIP(c, h.trusted), UserAgent: strings.Clone(c.Get(fiber.HeaderUserAgent))}
}

func (h *handler) totpLogin(c fiber.Ctx) error {
	var in TotpLoginInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.TotpLogin(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	return auth.WriteTokens(c, out)
}

func (h *handler) bindStart(c fiber.Ctx) error {
	var in BindStartInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.BindStart(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

// bindStartSession starts binding TOTP for the signed-in caller (a
// re-authentication window required).
func (h *handler) bindStartSession(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	out, err := h.f.BindStartSession(c.Context(), p.UserID, p.SessionID)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *handler) bindComplete(c fiber.Ctx) error {
	var in BindCompleteInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.BindComplete(c.Context(), in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

// recovery answers HTTP 200 with an empty body (wire contract §1.3).
func (h *handler) recovery(c fiber.Ctx) error {
	var in RecoveryInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if err := h.f.Recovery(c.Context(), in, h.client(c)); err != nil {
		return err
	}
	c.Status(fiber.StatusOK)
	return nil
}

func (h *handler) loginSms(c fiber.Ctx) error {
	var in SmsChallengeInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	cl := h.client(c)
	cl.Binder = strings.Clone(c.Cookies(auth.MfaBinderCookie))
	out, err := h.f.CompleteSmsChallenge(c.Context(), in, cl)
	if err != nil {
		return err
	}
	return auth.WriteTokens(c, out)
}

func (h *handler) loginSmsResend(c fiber.Ctx) error {
	var in SmsResendInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	cl := h.client(c)
	cl.Binder = strings.Clone(c.Cookies(auth.MfaBinderCookie))
	out, err := h.f.ResendSmsChallenge(c.Context(), in, cl)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *handler) passkeyLoginBegin(c fiber.Ctx) error {
	var in PasskeyLoginBeginInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.PasskeyLoginBegin(c.Context(), in)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *handler) passkeyLoginFinish(c fiber.Ctx) error {
	var in PasskeyFinishInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.PasskeyLogin(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	return auth.WriteTokens(c, out)
}

func (h *handler) passwordlessBegin(c fiber.Ctx) error {
	out, err := h.f.PasswordlessBegin(c.Context())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *handler) passwordlessFinish(c fiber.Ctx) error {
	var in PasskeyFinishInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.PasswordlessLogin(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	return auth.WriteTokens(c, out)
}

func (h *handler) myPasskeys(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	out, err := h.f.ListPasskeys(c.Context(), p.UserID)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *handler) passkeyRegisterBegin(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	out, err := h.f.BeginPasskeyRegistration(c.Context(), p.UserID, p.SessionID)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}

func (h *handler) passkeyRegisterFinish(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in passkey.RegisterInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.f.FinishPasskeyRegistration(c.Context(), p.UserID, p.SessionID, in)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

// deleteMyPasskey answers HTTP 200 with an empty body.
func (h *handler) deleteMyPasskey(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if err := h.f.DeletePasskey(c.Context(), p.UserID, p.SessionID, id); err != nil {
		return err
	}
	c.Status(fiber.StatusOK)
	return nil
}
