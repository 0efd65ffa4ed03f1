package datascope

import (
	"context"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/errcode"
)

// Caller is an authenticated administrator and their data scope, as the
// scoped admin areas (users, roles) check it.
type Caller struct {
	UserID     int64
	SuperAdmin bool
	Scope      Scope
}

// Caller resolves the data scope of an authenticated user: unrestricted for
// the super-admin, else the (cached) scope of their roles.
func (c *Cache) Caller(ctx context.Context, userID int64, superAdmin bool) (Caller, error) {
	if superAdmin {
		return Caller{UserID: userID, SuperAdmin: true, Scope: Everything(userID)}, nil
	}
	sc, err := c.Scope(ctx, userID)
	if err != nil {
		return Caller{}, err
	}
	return Caller{UserID: userID, Scope: sc}, nil
}

// RequestCaller is Caller for the principal authenticated on the request
// (errcode.TokenInvalid when there is none).
func (c *Cache) RequestCaller(fc fiber.Ctx) (Caller, error) {
	p, ok := authn.From(fc)
	if !ok {
		return Caller{}, errcode.New(errcode.TokenInvalid)
	}
	return c.Caller(fc.Context(), p.UserID, p.SuperAdmin)
}
