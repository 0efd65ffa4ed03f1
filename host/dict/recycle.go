package dict

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/ent/sysdicttype"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the dictionary area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the dictionary area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.dictKind(), "dict", []string{"POST:/api/v1/sys/dict/type", "PUT:/api/v1/sys/dict/type/{id}"}, "DELETE:/api/v1/sys/dict/type/{id}"),
		recycle.Codes(s.dictItemKind(), "dictitem", []string{"POST:/api/v1/sys/dict/item", "PUT:/api/v1/sys/dict/item/{id}"}, "DELETE:/api/v1/sys/dict/item/{id}"),
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
func (s *recycleBin) dictKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysDictType.Query().Where(sysdicttype.IsDelete(true)).
				Order(ent.Desc(sysdicttype.FieldUpdateTime), ent.Desc(sysdicttype.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(t *ent.SysDictType) (int64, string, *string, recycle.Deleted) {
				return t.ID, t.Name, recycle.Ptr(t.Code), recycle.Deleted{At: recycle.When(t.UpdateTime, t.CreateTime), By: t.UpdateUserID}
			})
		},
		Restore: s.restoreDictType,
		Purge:   s.purgeDictType,
	}
}

func (s *recycleBin) restoreDictType(ctx context.Context, who datascope.Caller, id int64) error {
	t, err := s.Client.SysDictType.Query().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).Only(ctx)
	if err := recycle.Missing(err, id); err != nil {
		return err
	}
	taken, err := s.Client.SysDictType.Query().Where(sysdicttype.Code(t.Code), sysdicttype.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return recycle.Conflict().With("code", t.Code)
	}
	err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysDictType.Update().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).
			SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		if t.UpdateTime == nil {
			return nil
		}
		_, err = tx.SysDictItem.Update().Where(sysdictitem.DictTypeCode(t.Code), sysdictitem.IsDelete(true),
			sysdictitem.UpdateTimeGTE(*t.UpdateTime), sysdictitem.UpdateTimeLTE(t.UpdateTime.Add(withType))).
			SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
		return recycle.RestoreErr(err)
	})
	if err != nil {
		return err
	}
	return Invalidate(ctx, s.D.Store, s.D.Events, t.Code)
}

func (s *recycleBin) purgeDictType(ctx context.Context, _ datascope.Caller, id int64) error {
	if id < SeedIDLimit {
		return errcode.New(errcode.SeedDataProtected)
	}
	t, err := s.Client.SysDictType.Query().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).Only(ctx)
	if err := recycle.Missing(err, id); err != nil {
		return err
	}
	err = database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		n, err := tx.SysDictType.Delete().Where(sysdicttype.ID(id), sysdicttype.IsDelete(true)).Exec(ctx)
		if err := recycle.Affected(n, err, id); err != nil {
			return err
		}
		live, err := tx.SysDictType.Query().Where(sysdicttype.Code(t.Code), sysdicttype.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		q := tx.SysDictItem.Delete().Where(sysdictitem.DictTypeCode(t.Code), sysdictitem.IsDelete(true),
			sysdictitem.IDGTE(SeedIDLimit))
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
	return Invalidate(ctx, s.D.Store, s.D.Events, t.Code)
}

// dictItemKind: deleted dictionary items (the kernel's addition to the
// contract's types). An item whose type is deleted answers 42032 (restore
// the type: that brings back the items deleted with it); a seeded item is
// never purged (43010).
func (s *recycleBin) dictItemKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysDictItem.Query().Where(sysdictitem.IsDelete(true)).
				Order(ent.Desc(sysdictitem.FieldUpdateTime), ent.Desc(sysdictitem.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(it *ent.SysDictItem) (int64, string, *string, recycle.Deleted) {
				return it.ID, it.Label, recycle.Ptr(it.DictTypeCode + ":" + it.Value), recycle.Deleted{At: recycle.When(it.UpdateTime, it.CreateTime), By: it.UpdateUserID}
			})
		},
		Restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			it, err := s.Client.SysDictItem.Query().Where(sysdictitem.ID(id), sysdictitem.IsDelete(true)).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			live, err := s.Client.SysDictType.Query().Where(sysdicttype.Code(it.DictTypeCode), sysdicttype.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if !live {
				return recycle.ParentDeleted("dict")
			}
			taken, err := s.Client.SysDictItem.Query().Where(sysdictitem.DictTypeCode(it.DictTypeCode),
				sysdictitem.Value(it.Value), sysdictitem.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return recycle.Conflict().With("value", it.Value)
			}
			n, err := s.Client.SysDictItem.Update().Where(sysdictitem.ID(id), sysdictitem.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			if err := recycle.Affected(n, err, id); err != nil {
				return err
			}
			return Invalidate(ctx, s.D.Store, s.D.Events, it.DictTypeCode)
		},
		Purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			if id < SeedIDLimit {
				return errcode.New(errcode.SeedDataProtected)
			}
			n, err := s.Client.SysDictItem.Delete().Where(sysdictitem.ID(id), sysdictitem.IsDelete(true)).Exec(ctx)
			return recycle.Affected(n, err, id)
		},
	}
}
