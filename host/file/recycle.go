package file

import (
	"context"
	"errors"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysfile"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the files area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
	files storage.Storage
}

// recycleKinds are the files area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps, files storage.Storage) []module.RecycleKind {
	s := &recycleBin{Bin: recycle.NewBin(d), files: files}
	return []module.RecycleKind{
		recycle.Codes(s.fileKind(), "file", []string{"POST:/api/v1/sys/file/upload"}, "DELETE:/api/v1/sys/file/{id}"),
	}
}

// fileKind: deleted files visible to the caller (the files area's data
// scope: 42020 for a file outside it). A purge removes the row, then the
// stored content when no other file row names it (an instant upload shares
// the content of an earlier one).
func (s *recycleBin) fileKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, who datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysFile.Query().Where(sysfile.IsDelete(true)).Where(Visible(who)...).
				Order(ent.Desc(sysfile.FieldUpdateTime), ent.Desc(sysfile.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(f *ent.SysFile) (int64, string, *string, recycle.Deleted) {
				return f.ID, f.OriginalName, recycle.NonEmpty(f.Extension), recycle.Deleted{At: recycle.When(f.UpdateTime, f.CreateTime), By: f.UpdateUserID}
			})
		},
		Restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			n, err := s.Client.SysFile.Update().Where(sysfile.ID(id), sysfile.IsDelete(true)).Where(Visible(who)...).
				SetIsDelete(false).SetDeleteKey(0).SetUpdateUserID(who.UserID).Save(ctx)
			return recycle.Affected(n, err, id)
		},
		Purge: func(ctx context.Context, who datascope.Caller, id int64) error {
			f, err := s.Client.SysFile.Query().Where(sysfile.ID(id), sysfile.IsDelete(true)).Where(Visible(who)...).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			n, err := s.Client.SysFile.Delete().Where(sysfile.ID(id), sysfile.IsDelete(true)).Exec(ctx)
			if err := recycle.Affected(n, err, id); err != nil {
				return err
			}
			shared, err := s.Client.SysFile.Query().Where(sysfile.StoragePath(f.StoragePath)).Exist(ctx)
			if err != nil || shared {
				return err
			}
			if err := s.files.Delete(ctx, f.StoragePath); err != nil && !errors.Is(err, storage.ErrNotFound) {
				// The row is gone (the purge happened); the content stays
				// behind, which an operator can remove.
				s.Log.Warn("the content of a purged file could not be removed", "file_id", id, "error", err)
			}
			return nil
		},
	}
}
