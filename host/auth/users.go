package auth

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/request"
)

type timeValue = time.Time

// entityTimeLayout is the contract's entity DateTime: ISO-8601 without an
// offset, in server-local time.

var formatLocal = request.EntityTime

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
