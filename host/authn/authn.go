// Package authn authenticates requests: it reads the Bearer access token,
// verifies it, checks that its session is still active and, for
// permission routes, that the user holds the route's permission code. It
// supplies the route.Guards the route table mounts every protected route
// behind, and hands the authenticated caller to handlers as a Principal.
//
// Failures are business errors for the central error handler: a missing,
// malformed, invalid or expired token and a revoked or expired session give
// HTTP 401 with errcode.TokenInvalid (40006), so that the UI refreshes; a
// missing permission gives HTTP 403 with errcode.NoPermission (41001). A
// session whose user must change the password (session.PasswordChange,
// carried in the cached session mark) gives HTTP 403 with
// errcode.PasswordChangeRequired (40028) on every Session and Permission
// route except passwordChangeRoutes; Token routes (logout) are not affected.
// A failure to read the session or the permissions is returned as is (HTTP
// 500): the guard fails closed and never lets a request through unchecked.
package authn

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/token"
)

// Tokens verifies access tokens (*token.Issuer).
type Tokens interface {
	Verify(raw string) (token.Claims, error)
}

// Sessions reports whether a session is still active (*session.Service).
// It must answer from a cache on the hot path.
type Sessions interface {
	Active(ctx context.Context, sid string) (bool, error)
}

// SessionStates is implemented by a Sessions that knows which sessions may
// only be used to change the password (*session.Service). With it, such a
// session is refused with HTTP 403 / 40028 PasswordChangeRequired on every
// Session and Permission route except passwordChangeRoutes.
type SessionStates interface {
	State(ctx context.Context, sid string) (session.State, error)
}

// passwordChangeRoutes are the routes (method and template) a session that
// must change its password may still use besides the Token routes (logout):
// the change itself, the profile, and the password policy the change form
// shows (it reveals nothing the 42019 answer would not).
var passwordChangeRoutes = map[string]bool{
	"PUT /api/v1/personal/password":          true,
	"GET /api/v1/personal/profile":           true,
	"GET /api/v1/sys/config/password-policy": true,
}

// Permissions reports whether a user holds a permission code
// (*authz.Resolver).
type Permissions interface {
	Has(ctx context.Context, userID int64, code string) (bool, error)
}

// Principal is the authenticated caller.
type Principal struct {
	UserID    int64
	Account   string
	SessionID string
	// SuperAdmin is the token's sadm claim.
	SuperAdmin bool
	// ExpiresAt is the access token's expiry.
	ExpiresAt time.Time
}

// principalKey is the Fiber Locals key of the Principal.
type principalKey struct{}

// From returns the caller authenticated by a guard earlier in the chain.
// ok is false on anonymous routes. The strings are the caller's own
// copies: they may be kept after the handler returns.
func From(c fiber.Ctx) (Principal, bool) {
	p, ok := c.RequestCtx().UserValue(principalKey{}).(*Principal)
	if !ok || p == nil {
		return Principal{}, false
	}
	return *p, true
}

// Reasons a request is refused with 40006, for logs.
var (
	ErrNoToken         = errors.New("authn: no Bearer token in the Authorization header")
	ErrSessionInactive = errors.New("authn: the session is revoked or expired")
)

// Options configures an Authenticator.
type Options struct {
	// Log receives refusals: token and session refusals at Debug, missing
	// permissions at Info (nil = discard).
	Log hclog.Logger
}

// Authenticator builds the guards. It is safe for concurrent use.
type Authenticator struct {
	tokens   Tokens
	sessions Sessions
	states   SessionStates // sessions, when it implements SessionStates
	perms    Permissions
	log      hclog.Logger
}

// New returns an Authenticator. sessions and perms may be nil: the guards
// that need them are then not supplied, so mounting a route that requires
// them fails instead of running it with weaker protection.
func New(tokens Tokens, sessions Sessions, perms Permissions, opts Options) *Authenticator {
	a := &Authenticator{tokens: tokens, sessions: sessions, perms: perms, log: opts.Log}
	a.states, _ = sessions.(SessionStates)
	if a.log == nil {
		a.log = hclog.NewNullLogger()
	}
	return a
}

// Guards returns the middleware of each access level for route.Table.Mount:
// Token (a valid token; the session is not re-checked, for logout),
// Session (a valid token whose session is active) and Permission (Session
// plus the route's permission code; the super-admin passes).
func (a *Authenticator) Guards() route.Guards {
	g := route.Guards{
		route.Token: func(route.Route) fiber.Handler { return a.Token() },
	}
	if a.sessions != nil {
		g[route.Session] = func(r route.Route) fiber.Handler { return a.session(passwordChangeAllowed(r)) }
		if a.perms != nil {
			g[route.Permission] = func(r route.Route) fiber.Handler {
				return a.permission(r.PermissionCode(), passwordChangeAllowed(r))
			}
		}
	}
	return g
}

// Token requires a valid access token and does not look at the session.
func (a *Authenticator) Token() fiber.Handler {
	return func(c fiber.Ctx) error {
		if _, err := a.authenticate(c, false, true); err != nil {
			return err
		}
		return c.Next()
	}
}

// Session requires a valid access token whose session is still active.
// A session that must change its password is refused with 40028.
func (a *Authenticator) Session() fiber.Handler { return a.session(false) }

func (a *Authenticator) session(passwordChange bool) fiber.Handler {
	if a.sessions == nil {
		panic("authn: the Session guard needs a Sessions")
	}
	return func(c fiber.Ctx) error {
		if _, err := a.authenticate(c, true, passwordChange); err != nil {
			return err
		}
		return c.Next()
	}
}

// Permission requires what Session requires plus the permission code; a
// token carrying sadm passes without it.
// A session that must change its password is refused with 40028.
func (a *Authenticator) Permission(code string) fiber.Handler { return a.permission(code, false) }

func (a *Authenticator) permission(code string, passwordChange bool) fiber.Handler {
	if a.sessions == nil || a.perms == nil {
		panic("authn: the Permission guard needs a Sessions and a Permissions")
	}
	return func(c fiber.Ctx) error {
		p, err := a.authenticate(c, true, passwordChange)
		if err != nil {
			return err
		}
		if !p.SuperAdmin {
			ok, err := a.perms.Has(c.Context(), p.UserID, code)
			if err != nil {
				return err
			}
			if !ok {
				a.log.Info("permission denied", "user_id", p.UserID, "code", code)
				return errcode.New(errcode.NoPermission)
			}
		}
		return c.Next()
	}
}

// passwordChangeAllowed reports whether a session that must change its
// password may use r.
func passwordChangeAllowed(r route.Route) bool {
	return passwordChangeRoutes[r.Method+" "+r.Path]
}

// authenticate verifies the request's token (and session) and stores the
// Principal. With checkSession, a session restricted to changing the
// password passes only when passwordChange is true (40028 otherwise).
func (a *Authenticator) authenticate(c fiber.Ctx, checkSession, passwordChange bool) (*Principal, error) {
	raw, ok := BearerToken(c.Get(fiber.HeaderAuthorization))
	if !ok {
		return nil, a.refuse(c, ErrNoToken)
	}
	claims, err := a.tokens.Verify(raw)
	if err != nil {
		return nil, a.refuse(c, err)
	}
	if checkSession {
		if err := a.checkSession(c, claims, passwordChange); err != nil {
			return nil, err
		}
	}
	// claims' strings are fresh copies made by Verify, never views of the
	// request buffer.
	p := &Principal{
		UserID:     claims.UserID,
		Account:    claims.Account,
		SessionID:  claims.SessionID,
		SuperAdmin: claims.SuperAdmin,
		ExpiresAt:  claims.ExpiresAt,
	}
	// The request's user values are what c.Locals reads; setting them
	// directly spares Locals' variadic allocation on the hot path.
	c.RequestCtx().SetUserValue(principalKey{}, p)
	return p, nil
}

func (a *Authenticator) checkSession(c fiber.Ctx, claims token.Claims, passwordChange bool) error {
	if a.states == nil {
		active, err := a.sessions.Active(c.Context(), claims.SessionID)
		if err != nil {
			return err
		}
		if !active {
			return a.refuse(c, ErrSessionInactive)
		}
		return nil
	}
	st, err := a.states.State(c.Context(), claims.SessionID)
	if err != nil {
		return err
	}
	switch st {
	case session.Inactive:
		return a.refuse(c, ErrSessionInactive)
	case session.PasswordChange:
		if !passwordChange {
			a.log.Debug("password change required", "user_id", claims.UserID, "method", c.Method(), "path", c.Path())
			return errcode.New(errcode.PasswordChangeRequired)
		}
	}
	return nil
}

// refuse answers 401 / 40006 with the RFC 6750 challenge.
func (a *Authenticator) refuse(c fiber.Ctx, reason error) error {
	if errors.Is(reason, ErrNoToken) {
		c.Set(fiber.HeaderWWWAuthenticate, "Bearer")
	} else {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="invalid_token"`)
	}
	if a.log.IsDebug() {
		a.log.Debug("request refused", "method", c.Method(), "path", c.Path(), "reason", reason)
	}
	return errcode.New(errcode.TokenInvalid).Wrap(reason)
}

// BearerToken extracts the token from an Authorization header value of the
// form "Bearer <token>" (scheme case-insensitive, RFC 7235 §2.1). Anything
// else (another scheme, no token, a token with spaces or commas) gives
// false. The result is a view of header: copy it before keeping it.
func BearerToken(header string) (string, bool) {
	const scheme = "bearer"
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) || header[len(scheme)] != ' ' {
		return "", false
	}
	tok := strings.Trim(header[len(scheme):], " ")
	if tok == "" || strings.IndexByte(tok, ' ') >= 0 || strings.IndexByte(tok, '\t') >= 0 || strings.IndexByte(tok, ',') >= 0 {
		return "", false
	}
	return tok, true
}

// Require returns the caller authenticated by the route's guard, or 40006
// when there is none (a handler mounted without a guard by mistake).
func Require(c fiber.Ctx) (Principal, error) {
	p, ok := From(c)
	if !ok {
		return p, errcode.New(errcode.TokenInvalid)
	}
	return p, nil
}
