package auth

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
)

type timeValue = time.Time

// entityTimeLayout is the contract's entity DateTime: ISO-8601 without an
// offset, in server-local time.
const entityTimeLayout = "2006-01-02T15:04:05"

func formatLocal(t time.Time) string { return t.Local().Format(entityTimeLayout) }

// userNames joins user names for a set of ids.
func userNames(ctx context.Context, client *ent.Client, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	users, err := client.SysUser.Query().Where(sysuser.IDIn(ids...)).
		Select(sysuser.FieldID, sysuser.FieldName).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out[u.ID] = u.Name
	}
	return out, nil
}
