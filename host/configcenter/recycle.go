package configcenter

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the config center's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the config center's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.configKind(), "config", []string{"POST:/api/v1/sys/config", "PUT:/api/v1/sys/config/{id}"}, "DELETE:/api/v1/sys/config/{id}"),
	}
}

// configKind: deleted config rows; restoring or purging one drops its
// cached value and publishes the change (the config service's Invalidate).
func (s *recycleBin) configKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysConfig.Query().Where(sysconfig.IsDelete(true)).
				Order(ent.Desc(sysconfig.FieldUpdateTime), ent.Desc(sysconfig.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(c *ent.SysConfig) (int64, string, *string, recycle.Deleted) {
				return c.ID, c.Name, recycle.Ptr(c.ConfigKey), recycle.Deleted{At: recycle.When(c.UpdateTime, c.CreateTime), By: c.UpdateUserID}
			})
		},
		Restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			c, err := s.Client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			taken, err := s.Client.SysConfig.Query().Where(sysconfig.ConfigKey(c.ConfigKey), sysconfig.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return recycle.Conflict().With("key", c.ConfigKey)
			}
			n, err := s.Client.SysConfig.Update().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			if err := recycle.Affected(n, err, id); err != nil {
				return err
			}
			return s.D.Settings.Invalidate(ctx, c.ConfigKey)
		},
		Purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			c, err := s.Client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			n, err := s.Client.SysConfig.Delete().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).Exec(ctx)
			if err := recycle.Affected(n, err, id); err != nil {
				return err
			}
			return s.D.Settings.Invalidate(ctx, c.ConfigKey)
		},
	}
}
