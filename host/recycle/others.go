package recycle

import (
	"context"
	"errors"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/ent/sysdicttype"
	"github.com/adminkernel/kernel/ent/sysfile"
	"github.com/adminkernel/kernel/ent/sysjob"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/menu"
	"github.com/adminkernel/kernel/host/request"
)

// jobKind: deleted jobs. The delete paused the job; a restore leaves it
// paused (resume it with PUT /sys/job/{id}/enabled). A system job is never
// purged (47014); a purge removes the job's finished run records.
func (s *Service) jobKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysJob.Query().Where(sysjob.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysjob.FieldUpdateTime), ent.Desc(sysjob.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(j *ent.SysJob) (int64, string, *string, deleted) {
				return j.ID, j.Name, ptr(j.Code), deleted{when(j.UpdateTime, j.CreateTime), j.UpdateUserID}
			})
		},
		restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			j, err := s.client.SysJob.Query().Where(sysjob.ID(id), sysjob.IsDelete(true)).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			taken, err := s.client.SysJob.Query().Where(sysjob.Code(j.Code), sysjob.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return conflict().With("code", j.Code)
			}
			n, err := s.client.SysJob.Update().Where(sysjob.ID(id), sysjob.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetStatus(job.StatusPaused).ClearNextFireTime().
				SetUpdateUserID(who.UserID).Save(ctx)
			return affected(n, err, id)
		},
		purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			j, err := s.client.SysJob.Query().Where(sysjob.ID(id), sysjob.IsDelete(true)).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			if j.IsSystem {
				return errcode.New(errcode.JobProtected)
			}
			return database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
				n, err := tx.SysJob.Delete().Where(sysjob.ID(id), sysjob.IsDelete(true), sysjob.IsSystem(false)).Exec(ctx)
				if err := affected(n, err, id); err != nil {
					return err
				}
				// A run still going (deleted jobs' runs go on) keeps its row
				// until it ends; the log cleanup removes it later.
				_, err = tx.SysJobLog.Delete().Where(sysjoblog.JobID(id), sysjoblog.RunStatusNEQ(job.RunRunning)).Exec(ctx)
				return err
			})
		},
	}
}

// moduleKind: deleted modules. The built-in module is never purged
// (42013); a module that menu rows still name (deleted menus: live ones
// forbid the delete) is not purged either (42023); a purge clears the
// users' default module when it was this one.
func (s *Service) moduleKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysModule.Query().Where(sysmodule.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysmodule.FieldUpdateTime), ent.Desc(sysmodule.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(m *ent.SysModule) (int64, string, *string, deleted) {
				return m.ID, m.Title, ptr(m.Code), deleted{when(m.UpdateTime, m.CreateTime), m.UpdateUserID}
			})
		},
		restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			m, err := s.client.SysModule.Query().Where(sysmodule.ID(id), sysmodule.IsDelete(true)).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			taken, err := s.client.SysModule.Query().Where(sysmodule.Code(m.Code), sysmodule.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return conflict().With("code", m.Code)
			}
			n, err := s.client.SysModule.Update().Where(sysmodule.ID(id), sysmodule.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			if err := affected(n, err, id); err != nil {
				return err
			}
			_, err = menu.BumpGeneration(ctx, s.d.Store)
			return err
		},
		purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			if id == menu.SystemModuleID {
				return errcode.New(errcode.ModuleProtected)
			}
			attached, err := s.client.SysMenu.Query().Where(sysmenu.ModuleID(id)).Exist(ctx)
			if err != nil {
				return err
			}
			if attached {
				return errcode.New(errcode.ModuleHasMenus)
			}
			err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
				n, err := tx.SysModule.Delete().Where(sysmodule.ID(id), sysmodule.IsDelete(true)).Exec(ctx)
				if err := affected(n, err, id); err != nil {
					return err
				}
				return tx.SysUser.Update().Where(sysuser.DefaultModuleID(id)).ClearDefaultModuleID().Exec(ctx)
			})
			if err != nil {
				return err
			}
			_, err = menu.BumpGeneration(ctx, s.d.Store)
			return err
		},
	}
}

// configKind: deleted config rows; restoring or purging one drops its
// cached value and publishes the change (the config service's Invalidate).
func (s *Service) configKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysConfig.Query().Where(sysconfig.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysconfig.FieldUpdateTime), ent.Desc(sysconfig.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(c *ent.SysConfig) (int64, string, *string, deleted) {
				return c.ID, c.Name, ptr(c.ConfigKey), deleted{when(c.UpdateTime, c.CreateTime), c.UpdateUserID}
			})
		},
		restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			c, err := s.client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			taken, err := s.client.SysConfig.Query().Where(sysconfig.ConfigKey(c.ConfigKey), sysconfig.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return conflict().With("key", c.ConfigKey)
			}
			n, err := s.client.SysConfig.Update().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			if err := affected(n, err, id); err != nil {
				return err
			}
			return s.d.Settings.Invalidate(ctx, c.ConfigKey)
		},
		purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			c, err := s.client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			n, err := s.client.SysConfig.Delete().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).Exec(ctx)
			if err := affected(n, err, id); err != nil {
				return err
			}
			return s.d.Settings.Invalidate(ctx, c.ConfigKey)
		},
	}
}

// withType is how long after its type a dictionary item deleted with it
// may have been written (one transaction: milliseconds in practice).
const withType = time.Minute

// dictKind: deleted dictionary types. The delete soft-deleted the type's
// live items with it; a restore brings those back too (the items deleted in
// that same delete: not those deleted one by one before, which stay in the
// bin as dictItem rows). A seeded type is never purged (43010); a purge
// removes the type's items deleted with it, and every deleted item of its
// code when no live type holds the code any more.
func (s *Service) dictKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysDictType.Query().Where(sysdicttype.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysdicttype.FieldUpdateTime), ent.Desc(sysdicttype.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(t *ent.SysDictType) (int64, string, *string, deleted) {
				return t.ID, t.Name, ptr(t.Code), deleted{when(t.UpdateTime, t.CreateTime), t.UpdateUserID}
			})
		},
		restore: s.restoreDictType,
		purge:   s.purgeDictType,
	}
}

func (s *Service) restoreDictType(ctx context.Context, who datascope.Caller, id int64) error {
	t, err := s.client.SysDictType.Query().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).Only(ctx)
	if err := missing(err, id); err != nil {
		return err
	}
	taken, err := s.client.SysDictType.Query().Where(sysdicttype.Code(t.Code), sysdicttype.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return conflict().With("code", t.Code)
	}
	err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		n, err := tx.SysDictType.Update().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).
			SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
		if err := affected(n, err, id); err != nil {
			return err
		}
		if t.UpdateTime == nil {
			return nil
		}
		_, err = tx.SysDictItem.Update().Where(sysdictitem.DictTypeCode(t.Code), sysdictitem.IsDelete(true),
			sysdictitem.UpdateTimeGTE(*t.UpdateTime), sysdictitem.UpdateTimeLTE(t.UpdateTime.Add(withType))).
			SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
		return restoreErr(err)
	})
	if err != nil {
		return err
	}
	return dict.Invalidate(ctx, s.d.Store, s.d.Events, t.Code)
}

func (s *Service) purgeDictType(ctx context.Context, _ datascope.Caller, id int64) error {
	if id < dict.SeedIDLimit {
		return errcode.New(errcode.SeedDataProtected)
	}
	t, err := s.client.SysDictType.Query().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).Only(ctx)
	if err := missing(err, id); err != nil {
		return err
	}
	err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		n, err := tx.SysDictType.Delete().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).Exec(ctx)
		if err := affected(n, err, id); err != nil {
			return err
		}
		live, err := tx.SysDictType.Query().Where(sysdicttype.Code(t.Code), sysdicttype.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		q := tx.SysDictItem.Delete().Where(sysdictitem.DictTypeCode(t.Code), sysdictitem.IsDelete(true),
			sysdictitem.IDGTE(dict.SeedIDLimit))
		if live {
			if t.UpdateTime == nil {
				return nil
			}
			q.Where(sysdictitem.UpdateTimeGTE(*t.UpdateTime), sysdictitem.UpdateTimeLTE(t.UpdateTime.Add(withType)))
		}
		_, err = q.Exec(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return dict.Invalidate(ctx, s.d.Store, s.d.Events, t.Code)
}

// dictItemKind: deleted dictionary items (the kernel's addition to the
// contract's types). An item whose type is deleted answers 42032 (restore
// the type: that brings back the items deleted with it); a seeded item is
// never purged (43010).
func (s *Service) dictItemKind() kind {
	return kind{
		page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysDictItem.Query().Where(sysdictitem.IsDelete(true))
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysdictitem.FieldUpdateTime), ent.Desc(sysdictitem.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(it *ent.SysDictItem) (int64, string, *string, deleted) {
				return it.ID, it.Label, ptr(it.DictTypeCode + ":" + it.Value), deleted{when(it.UpdateTime, it.CreateTime), it.UpdateUserID}
			})
		},
		restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			it, err := s.client.SysDictItem.Query().Where(sysdictitem.ID(id), sysdictitem.IsDelete(true)).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			live, err := s.client.SysDictType.Query().Where(sysdicttype.Code(it.DictTypeCode), sysdicttype.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if !live {
				return parentDeleted("dict")
			}
			taken, err := s.client.SysDictItem.Query().Where(sysdictitem.DictTypeCode(it.DictTypeCode),
				sysdictitem.Value(it.Value), sysdictitem.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return conflict().With("value", it.Value)
			}
			n, err := s.client.SysDictItem.Update().Where(sysdictitem.ID(id), sysdictitem.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			if err := affected(n, err, id); err != nil {
				return err
			}
			return dict.Invalidate(ctx, s.d.Store, s.d.Events, it.DictTypeCode)
		},
		purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			if id < dict.SeedIDLimit {
				return errcode.New(errcode.SeedDataProtected)
			}
			n, err := s.client.SysDictItem.Delete().Where(sysdictitem.ID(id), sysdictitem.IsDelete(true)).Exec(ctx)
			return affected(n, err, id)
		},
	}
}

// fileKind: deleted files visible to the caller (the files area's data
// scope: 42020 for a file outside it). A purge removes the row, then the
// stored content when no other file row names it (an instant upload shares
// the content of an earlier one).
func (s *Service) fileKind() kind {
	return kind{
		page: func(ctx context.Context, who datascope.Caller, p request.Page) ([]Item, int, error) {
			q := s.client.SysFile.Query().Where(sysfile.IsDelete(true)).Where(file.Visible(who)...)
			total, err := q.Clone().Count(ctx)
			if err != nil {
				return nil, 0, err
			}
			rows, err := q.Order(ent.Desc(sysfile.FieldUpdateTime), ent.Desc(sysfile.FieldID)).
				Offset(p.Offset()).Limit(p.Size).All(ctx)
			return page(ctx, s, total, rows, err, func(f *ent.SysFile) (int64, string, *string, deleted) {
				return f.ID, f.OriginalName, nonEmpty(f.Extension), deleted{when(f.UpdateTime, f.CreateTime), f.UpdateUserID}
			})
		},
		restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			n, err := s.client.SysFile.Update().Where(sysfile.ID(id), sysfile.IsDelete(true)).Where(file.Visible(who)...).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			return affected(n, err, id)
		},
		purge: func(ctx context.Context, who datascope.Caller, id int64) error {
			f, err := s.client.SysFile.Query().Where(sysfile.ID(id), sysfile.IsDelete(true)).Where(file.Visible(who)...).Only(ctx)
			if err := missing(err, id); err != nil {
				return err
			}
			n, err := s.client.SysFile.Delete().Where(sysfile.ID(id), sysfile.IsDelete(true)).Exec(ctx)
			if err := affected(n, err, id); err != nil {
				return err
			}
			shared, err := s.client.SysFile.Query().Where(sysfile.StoragePath(f.StoragePath)).Exist(ctx)
			if err != nil || shared {
				return err
			}
			if err := s.files.Delete(ctx, f.StoragePath); err != nil && !errors.Is(err, storage.ErrNotFound) {
				// The row is gone (the purge happened); the content stays
				// behind, which an operator can remove.
				s.log.Warn("the content of a purged file could not be removed", "file_id", id, "error", err)
			}
			return nil
		},
	}
}
