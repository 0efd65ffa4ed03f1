package job

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysjob"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
)

// recycleBin hangs the job area's recycle-bin types (module.RecycleKind) on the
// bin's helpers (host/recycle).
type recycleBin struct {
	*recycle.Bin
}

// recycleKinds are the job area's types of the recycle bin, with the area codes a
// restore and a purge need besides the bin's own (docs/developers/recycle.md).
func recycleKinds(d *module.Deps) []module.RecycleKind {
	s := &recycleBin{recycle.NewBin(d)}
	return []module.RecycleKind{
		recycle.Codes(s.jobKind(), "job", []string{"POST:/api/v1/sys/job", "PUT:/api/v1/sys/job/{id}"}, "DELETE:/api/v1/sys/job/{id}"),
	}
}

// jobKind: deleted jobs. The delete paused the job; a restore leaves it
// paused (resume it with PUT /sys/job/{id}/enabled). A system job is never
// purged (47014); a purge removes the job's finished run records.
func (s *recycleBin) jobKind() module.RecycleKind {
	return module.RecycleKind{
		Page: func(ctx context.Context, _ datascope.Caller, p request.Page) ([]recycle.Item, int, error) {
			q := s.Client.SysJob.Query().Where(sysjob.IsDelete(true)).
				Order(ent.Desc(sysjob.FieldUpdateTime), ent.Desc(sysjob.FieldID))
			return recycle.PageQuery(ctx, s.Client, p, q, func(j *ent.SysJob) (int64, string, *string, recycle.Deleted) {
				return j.ID, j.Name, recycle.Ptr(j.Code), recycle.Deleted{At: recycle.When(j.UpdateTime, j.CreateTime), By: j.UpdateUserID}
			})
		},
		Restore: func(ctx context.Context, who datascope.Caller, id int64) error {
			j, err := s.Client.SysJob.Query().Where(sysjob.ID(id), sysjob.IsDelete(true)).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			taken, err := s.Client.SysJob.Query().Where(sysjob.Code(j.Code), sysjob.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return recycle.Conflict().With("code", j.Code)
			}
			n, err := s.Client.SysJob.Update().Where(sysjob.ID(id), sysjob.IsDelete(true)).
				SetIsDelete(false).SetDeleteKey(0).SetStatus(StatusPaused).ClearNextFireTime().
				SetUpdateUserID(who.UserID).Save(ctx)
			return recycle.Affected(n, err, id)
		},
		Purge: func(ctx context.Context, _ datascope.Caller, id int64) error {
			j, err := s.Client.SysJob.Query().Where(sysjob.ID(id), sysjob.IsDelete(true)).Only(ctx)
			if err := recycle.Missing(err, id); err != nil {
				return err
			}
			if j.IsSystem {
				return errcode.New(errcode.JobProtected)
			}
			return database.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
				n, err := tx.SysJob.Delete().Where(sysjob.ID(id), sysjob.IsDelete(true), sysjob.IsSystem(false)).Exec(ctx)
				if err := recycle.Affected(n, err, id); err != nil {
					return err
				}
				// A run still going (deleted jobs' runs go on) keeps its row
				// until it ends; the log cleanup removes it later.
				_, err = tx.SysJobLog.Delete().Where(sysjoblog.JobID(id), sysjoblog.RunStatusNEQ(RunRunning)).Exec(ctx)
				return err
			})
		},
	}
}
