package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
)

// Cookie session mode (wire contract §1.6,
// Service:Security:Session:CookieMode): the refresh token travels in the
// HttpOnly cookie RefreshCookie instead of the body, and a readable
// CSRFCookie, rotated with it, must be echoed in CSRFHeader by every
// state-changing request that carries RefreshCookie (double submit).
const (
	RefreshCookie = "smart_rt"
	CSRFCookie    = "smart_csrf"
	CSRFHeader    = "X-Smart-CSRF"

	// SessionModeBody and SessionModeCookie are LoginOutput.SessionMode.
	SessionModeBody   = "body"
	SessionModeCookie = "cookie"

	csrfBytes = 32
	// stateKey names the Cookies in the Fiber app's State (Mount).
	stateKey = "adminkernel.auth.cookies"
)

// Cookies is the session-cookie policy of one kernel.
type Cookies struct {
	on bool
	// domain, when set, is the cookies' Domain; they are then
	// SameSite=None (and so Secure).
	domain string
	// httpsBase: CallbackBaseUrl is https, so the cookies are always
	// Secure; otherwise they are Secure when the request is https (directly
	// or through a trusted proxy), so that plain-http development works.
	httpsBase bool
}

// NewCookies returns the policy of cfg (validated).
func NewCookies(cfg *config.Config) *Cookies {
	s := cfg.Service.Security.Session
	return &Cookies{
		on:        s.CookieMode,
		domain:    strings.TrimSpace(s.CookieDomain),
		httpsBase: strings.HasPrefix(strings.ToLower(cfg.Service.ExternalAuth.CallbackBaseURL), "https://"),
	}
}

// On reports whether cookie mode is on.
func (k *Cookies) On() bool { return k != nil && k.on }

// Mount installs the policy on app, where WriteTokens finds it, and in
// cookie mode puts the CSRF check in front of every route under prefix
// (anonymous ones included: refresh). Call it before the routes are
// mounted.
func (k *Cookies) Mount(app *fiber.App, prefix string) {
	app.State().Set(stateKey, k)
	if k.On() {
		app.Use(prefix, k.checkCSRF)
	}
}

// checkCSRF refuses a POST, PUT, PATCH or DELETE that carries the refresh
// cookie unless CSRFHeader equals the CSRF cookie (constant time): HTTP
// 403 / 40023.
func (k *Cookies) checkCSRF(c fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete:
	default:
		return c.Next()
	}
	if c.Cookies(RefreshCookie) == "" {
		return c.Next()
	}
	want, got := c.Cookies(CSRFCookie), c.Get(CSRFHeader)
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errcode.New(errcode.CsrfInvalid)
	}
	return c.Next()
}

func (k *Cookies) cookie(c fiber.Ctx, name, value string, expires time.Time, httpOnly bool) {
	ck := &fiber.Cookie{
		Name: name, Value: value, Path: "/", Domain: k.domain,
		HTTPOnly: httpOnly, Secure: k.httpsBase || c.Scheme() == "https",
		SameSite: fiber.CookieSameSiteLaxMode,
	}
	if k.domain != "" {
		ck.SameSite = fiber.CookieSameSiteNoneMode // Fiber adds Secure
	}
	if expires.IsZero() {
		ck.MaxAge = -1 // cleared
	} else {
		ck.Expires = expires
		ck.MaxAge = max(int(time.Until(expires).Round(time.Second)/time.Second), 1)
	}
	c.Cookie(ck)
}

// set writes the refresh cookie and a fresh CSRF cookie, both expiring
// with the refresh token.
func (k *Cookies) set(c fiber.Ctx, refresh string, expires time.Time) error {
	raw := make([]byte, csrfBytes)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("auth: CSRF token: %w", err)
	}
	k.cookie(c, RefreshCookie, refresh, expires, true)
	k.cookie(c, CSRFCookie, base64.RawURLEncoding.EncodeToString(raw), expires, false)
	return nil
}

// Clear removes both session cookies (logout) when cookie mode is on.
func (k *Cookies) Clear(c fiber.Ctx) {
	if !k.On() {
		return
	}
	k.cookie(c, RefreshCookie, "", time.Time{}, true)
	k.cookie(c, CSRFCookie, "", time.Time{}, false)
}

// TokenOutput is what WriteTokens writes: a LoginOutput, or one already
// encoded as JSON (external login keeps it so under its one-time ticket).
type TokenOutput interface {
	*LoginOutput | json.RawMessage
}

// WriteTokens writes a token response (login, SMS login, refresh, the
// external ticket exchange): never cached by browsers or proxies, and in
// cookie mode (the policy Mount installed on the app) with the refresh
// token moved from the body into the smart_rt cookie, a rotated smart_csrf
// cookie, refreshToken "", sessionMode "cookie" and csrfRequired true. In
// body mode the output is written as it is (sessionMode "body").
func WriteTokens[T TokenOutput](c fiber.Ctx, out T) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
	k, _ := c.App().State().Get(stateKey)
	cookies, _ := k.(*Cookies)
	if !cookies.On() {
		return envelope.OK(c, out)
	}
	var lo LoginOutput
	switch v := any(out).(type) {
	case *LoginOutput:
		lo = *v
	case json.RawMessage:
		if err := json.Unmarshal(v, &lo); err != nil {
			return fmt.Errorf("auth: reading a stored token response: %w", err)
		}
	}
	if lo.RefreshToken == "" {
		return errors.New("auth: a token response without a refresh token")
	}
	if err := cookies.set(c, lo.RefreshToken, lo.RefreshExpiresAt.Time); err != nil {
		return err
	}
	lo.RefreshToken = ""
	lo.SessionMode = SessionModeCookie
	lo.CsrfRequired = true
	return envelope.OK(c, &lo)
}
