package module

import (
	"context"
	"errors"
	"time"

	"github.com/adminkernel/kernel/host/datascope"
)

// PortalGenerationKey is the counter of the portal generation: cached
// portal entries carry it in their keys, so bumping it makes every user's
// modules list and sidebar recomputed on the next request (counters are
// exempt from eviction and never go backwards).
const PortalGenerationKey = "portal:gen"

// BumpPortal starts a new portal generation and returns its number.
func (d *Deps) BumpPortal(ctx context.Context) (int64, error) {
	return d.Store.Incr(ctx, PortalGenerationKey, 1, 0)
}

// Scopes returns a data-scope cache over the kernel's database and cache,
// entries kept for Service:Cache:PermissionMinutes like permission sets.
func (d *Deps) Scopes() *datascope.Cache {
	return datascope.New(d.Client, d.Store, time.Duration(d.Config.Service.Cache.PermissionMinutes)*time.Minute)
}

// InvalidateAccess is called after a committed change to what users may
// do (roles, grants, role holders, a role's enabled flag): it drops their
// cached permission sets and data scopes and starts a new portal
// generation, so the change holds on their next request.
func (d *Deps) InvalidateAccess(ctx context.Context, userIDs ...int64) error {
	if len(userIDs) == 0 {
		return nil
	}
	_, err := d.BumpPortal(ctx)
	return errors.Join(d.Perms.Invalidate(ctx, userIDs...), datascope.Invalidate(ctx, d.Store, userIDs...), err)
}
