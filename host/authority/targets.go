package authority

import (
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
)

// Targets checks an action of the request's caller on one user for areas
// that hold no Checker of their own (force logout lives with the login
// service): the user must be in the caller's data scope (41005), a
// super-admin only by a super-admin (42007), and within the caller's
// authority (41006).
type Targets struct {
	client *ent.Client
	scopes *datascope.Cache
	check  *Checker
}

// NewTargets builds the checker over the kernel's database and cache; the
// permission sets and scopes it reads are the cached ones every area uses
// (same keys, Service:Cache:PermissionMinutes).
func NewTargets(client *ent.Client, store cache.Store, cfg *config.Config) *Targets {
	ttl := 20 * time.Minute
	if cfg != nil && cfg.Service.Cache.PermissionMinutes > 0 {
		ttl = time.Duration(cfg.Service.Cache.PermissionMinutes) * time.Minute
	}
	scopes := datascope.New(client, store, ttl)
	return &Targets{client: client, scopes: scopes, check: New(client, authz.New(client, store, ttl, nil), scopes)}
}

// Visible returns the predicates selecting the users whose sessions the
// request's caller may list: nil for the super-admin or an unrestricted
// scope (everyone), else the caller's data scope (datascope.Scope.Users).
func (t *Targets) Visible(fc fiber.Ctx) ([]predicate.SysUser, error) {
	who, err := t.scopes.RequestCaller(fc)
	if err != nil {
		return nil, err
	}
	if who.SuperAdmin {
		return nil, nil
	}
	return who.Scope.Users(), nil
}

// Check applies the rules to userID for the caller authenticated on fc. A
// user that no longer exists (or is deleted) holds nothing and passes.
func (t *Targets) Check(fc fiber.Ctx, userID int64) error {
	who, err := t.scopes.RequestCaller(fc)
	if err != nil {
		return err
	}
	if who.SuperAdmin {
		return nil
	}
	ctx := fc.Context()
	u, err := t.client.SysUser.Query().Where(sysuser.ID(userID), sysuser.IsDelete(false)).
		Select(sysuser.FieldID, sysuser.FieldOrgID, sysuser.FieldIsSuperAdmin).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !who.Scope.ContainsUser(u.ID, u.OrgID) {
		return errcode.New(errcode.UserOutOfDataScope).With("id", u.ID)
	}
	if u.IsSuperAdmin {
		return errcode.New(errcode.SuperAdminProtected)
	}
	return t.check.Users(ctx, who, u.ID)
}
