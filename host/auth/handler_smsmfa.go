package auth

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/request"
)

// loginClient is client with the browser binder of second-factor
// challenges: the request's MfaBinderCookie when well-formed (one binder
// per browser, shared by its tabs), else a fresh one, which answerSignal
// sets as the cookie.
func (h *Handler) loginClient(c fiber.Ctx) (Client, error) {
	cl := h.client(c)
	cl.Binder = strings.Clone(c.Cookies(MfaBinderCookie))
	if !bindproof.ValidToken(cl.Binder) {
		b, err := bindproof.NewToken()
		if err != nil {
			return cl, err
		}
		cl.Binder = b
	}
	return cl, nil
}

// answerSignal sets the binder cookie when a login answered signal 40009
// for a challenge bound to the browser (not to a bindingChallenge), and
// returns err for the central error handler.
func (h *Handler) answerSignal(c fiber.Ctx, in PasswordInput, cl Client, err error) error {
	if be, ok := errcode.As(err); ok && be.Code == errcode.SmsCodeRequired && deref(in.BindingChallenge) == "" {
		h.setBinder(c, cl.Binder)
	}
	return err
}

// setBinder writes MfaBinderCookie (HttpOnly, SameSite=Lax, Path
// /api/v1/auth, host-only; Secure like the session cookies) for as long
// as a challenge may live with its resends.
func (h *Handler) setBinder(c fiber.Ctx, binder string) {
	life := time.Duration(maxMfaSmsSends) * h.svc.d.SmsCodes.Options().TTL
	c.Cookie(&fiber.Cookie{
		Name: MfaBinderCookie, Value: binder, Path: MfaBinderPath,
		HTTPOnly: true, Secure: h.svc.cookies.httpsBase || c.Scheme() == "https",
		SameSite: fiber.CookieSameSiteLaxMode,
		MaxAge:   int(life / time.Second), Expires: time.Now().Add(life),
	})
}

func (h *Handler) loginSms(c fiber.Ctx) error {
	var in SmsChallengeInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	cl := h.client(c)
	cl.Binder = strings.Clone(c.Cookies(MfaBinderCookie))
	out, err := h.svc.CompleteSmsChallenge(c.Context(), in, cl)
	if err != nil {
		return err
	}
	return WriteTokens(c, out)
}

func (h *Handler) loginSmsResend(c fiber.Ctx) error {
	var in SmsResendInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	cl := h.client(c)
	cl.Binder = strings.Clone(c.Cookies(MfaBinderCookie))
	out, err := h.svc.ResendSmsChallenge(c.Context(), in, cl)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, out)
}
