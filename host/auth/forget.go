package auth

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/session"
)

// forgets: a purged user's sessions with their refresh tokens go.
func forgets(*module.Deps) []module.Forget {
	return []module.Forget{{Of: module.ForgetUser, What: "sessions", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
		return session.DeleteUser(ctx, tx, id)
	}}}
}
