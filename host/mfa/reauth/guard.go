package reauth

import (
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
)

// Guard is the per-route factory for route.Table.Around, run after the
// access guard (so the caller is known and holds the permission): nil for
// anonymous and Token routes and for Session routes not marked +R. For the
// others, while TOTP is switched on, a session without an open window is
// refused with HTTP 403 / 40024 when the route is marked +R or its
// permission code is on the administrators' high-sensitivity list. With
// TOTP off the check costs one cached settings read.
func (s *Service) Guard(r route.Route) fiber.Handler {
	switch {
	case r.Access == route.Permission:
	case r.Access == route.Session && r.Reauth:
	default:
		return nil
	}
	marked := r.Reauth
	code := r.PermissionCode()
	return func(c fiber.Ctx) error {
		ctx := c.Context()
		if !s.enabled(ctx) {
			return c.Next()
		}
		if !marked {
			listed, err := s.d.Sensitive.Has(ctx, code)
			if err != nil {
				return err
			}
			if !listed {
				return c.Next()
			}
		}
		p, err := authn.Require(c)
		if err != nil {
			return err
		}
		open, err := s.d.Windows.IsOpen(ctx, p.UserID, p.SessionID)
		if err != nil {
			return err
		}
		if !open {
			s.d.Log.Debug("re-authentication required", "user_id", p.UserID, "code", code)
			return errcode.New(errcode.ReauthRequired)
		}
		return c.Next()
	}
}
