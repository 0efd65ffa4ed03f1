package auth

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
)

// The browser binder of second-factor challenges: a password login that
// answers signal 40009 (the SMS second factor, host/mfa) binds its
// challenge to the browser through this cookie (HttpOnly, SameSite=Lax,
// Path /api/v1/auth), unless the login carried a bindingChallenge
// (host/internal/bindproof). The second-factor endpoints read it back.
const (
	// MfaBinderCookie carries the browser binder of SMS challenges.
	MfaBinderCookie = "tn_mfa_bind"
	// MfaBinderPath is the cookie's path: only the login endpoints see it.
	MfaBinderPath = "/api/v1/auth"
	// MaxSmsChallengeSends caps the codes one SMS challenge sends (the
	// first and the resends; then the user logs in again): the binder
	// cookie lives as long as they may.
	MaxSmsChallengeSends = 5
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
	life := time.Duration(MaxSmsChallengeSends) * h.svc.d.SmsCodes.Options().TTL
	c.Cookie(&fiber.Cookie{
		Name: MfaBinderCookie, Value: binder, Path: MfaBinderPath,
		HTTPOnly: true, Secure: h.svc.cookies.httpsBase || c.Scheme() == "https",
		SameSite: fiber.CookieSameSiteLaxMode,
		MaxAge:   int(life / time.Second), Expires: time.Now().Add(life),
	})
}
