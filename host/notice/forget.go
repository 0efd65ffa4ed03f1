package notice

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysnotice"
	"github.com/adminkernel/kernel/ent/sysnoticeread"
	"github.com/adminkernel/kernel/ent/sysnoticereceiver"
	"github.com/adminkernel/kernel/ent/sysnoticewatermark"
	"github.com/adminkernel/kernel/host/module"
)

// forgets are the notice area's shares of other areas' purges: a purged
// user's read marks and watermark go, and a purged user or role leaves the
// receiver lists of the notices addressed to users or roles.
func forgets(*module.Deps) []module.Forget {
	return []module.Forget{
		{Of: module.ForgetUser, What: "notice read marks", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			if _, err := tx.SysNoticeRead.Delete().Where(sysnoticeread.UserID(id)).Exec(ctx); err != nil {
				return err
			}
			_, err := tx.SysNoticeWatermark.Delete().Where(sysnoticewatermark.UserID(id)).Exec(ctx)
			return err
		}},
		{Of: module.ForgetUser, What: "notice receivers", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			return dropReceiver(ctx, tx, id, ReceiversUsers)
		}},
		{Of: module.ForgetRole, What: "notice receivers", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			return dropReceiver(ctx, tx, id, ReceiversRoles)
		}},
	}
}

// dropReceiver removes the receiver rows naming id in notices addressed
// to receivers of type typ (a user id and a role id may be equal).
func dropReceiver(ctx context.Context, tx *ent.Tx, id int64, typ int) error {
	rows, err := tx.SysNoticeReceiver.Query().Where(sysnoticereceiver.ReceiverID(id)).All(ctx)
	if err != nil || len(rows) == 0 {
		return err
	}
	notices := make([]int64, len(rows))
	for i, r := range rows {
		notices[i] = r.NoticeID
	}
	of, err := tx.SysNotice.Query().Where(sysnotice.IDIn(notices...), sysnotice.ReceiverType(typ)).IDs(ctx)
	if err != nil || len(of) == 0 {
		return err
	}
	_, err = tx.SysNoticeReceiver.Delete().Where(sysnoticereceiver.ReceiverID(id), sysnoticereceiver.NoticeIDIn(of...)).Exec(ctx)
	return err
}
