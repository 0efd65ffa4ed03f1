// Package usernames joins user names to the ids a log or list row carries
// (operator, creator), deleted users included.
package usernames

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
)

// Of returns the names of the given users, deleted ones included, keyed by
// id; ids may repeat and unknown ids are left out. One query, none when ids
// is empty.
func Of(ctx context.Context, client *ent.Client, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	seen := make(map[int64]bool, len(ids))
	uniq := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	users, err := client.SysUser.Query().Where(sysuser.IDIn(uniq...)).
		Select(sysuser.FieldID, sysuser.FieldName).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out[u.ID] = u.Name
	}
	return out, nil
}
