package pagetotal

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/hook"
	"github.com/adminkernel/kernel/ent/sysuser"
)

// Users is the table whose totals the user page caches. Its generation
// follows sys_user and sys_user_role (the page's role filter).
const Users = "sys_user"

// quiet are the sys_user columns no list filter or scope reads: a write
// that changes only these (a login's bookkeeping, a password, MFA) does not
// start a new generation, so logins do not empty the cache.
var quiet = map[string]bool{
	sysuser.FieldUpdateTime: true, sysuser.FieldUpdateUserID: true,
	sysuser.FieldPasswordHash: true, sysuser.FieldMustChangePassword: true, sysuser.FieldPasswordChangedAt: true,
	sysuser.FieldLastLoginTime: true, sysuser.FieldLastLoginIP: true,
	sysuser.FieldLoginFailCount: true, sysuser.FieldLockUntil: true,
	sysuser.FieldTotpEnabled: true, sysuser.FieldTotpSecret: true, sysuser.FieldForceTotp: true,
	sysuser.FieldDefaultModuleID: true, sysuser.FieldAvatar: true,
}

// Track installs the client hooks that bump Users on every write to
// sys_user (create, delete, and an update of any column a list may filter
// on: live/deleted, account, name, org, enabled, ...) and to
// sys_user_role. Call it once on the kernel's client, before it serves.
func Track(c *ent.Client, t *Totals) {
	if t == nil {
		return
	}
	c.SysUser.Use(func(next ent.Mutator) ent.Mutator {
		return hook.SysUserFunc(func(ctx context.Context, m *ent.SysUserMutation) (ent.Value, error) {
			if !m.Op().Is(ent.OpCreate|ent.OpDelete|ent.OpDeleteOne) && !touches(m.Fields(), m.ClearedFields()) {
				return next.Mutate(ctx, m)
			}
			tx, err := m.Tx()
			if err != nil {
				tx = nil
			}
			return t.after(ctx, tx, Users, func() (ent.Value, error) { return next.Mutate(ctx, m) })
		})
	})
	c.SysUserRole.Use(func(next ent.Mutator) ent.Mutator {
		return hook.SysUserRoleFunc(func(ctx context.Context, m *ent.SysUserRoleMutation) (ent.Value, error) {
			tx, err := m.Tx()
			if err != nil {
				tx = nil
			}
			return t.after(ctx, tx, Users, func() (ent.Value, error) { return next.Mutate(ctx, m) })
		})
	})
}

// touches reports whether an update changes a column other than the quiet
// ones.
func touches(fields, cleared []string) bool {
	for _, f := range fields {
		if !quiet[f] {
			return true
		}
	}
	for _, f := range cleared {
		if !quiet[f] {
			return true
		}
	}
	return false
}

// after runs the mutation and bumps table once it is committed: at once
// outside a transaction, after the commit inside one (once per
// transaction, however many rows it writes; nothing on rollback).
func (t *Totals) after(ctx context.Context, tx *ent.Tx, table string, mutate func() (ent.Value, error)) (ent.Value, error) {
	if tx == nil {
		v, err := mutate()
		t.Bump(ctx, table)
		return v, err
	}
	id := pendingKey{tx: tx, table: table}
	if _, loaded := t.pending.LoadOrStore(id, struct{}{}); !loaded {
		tx.OnCommit(func(next ent.Committer) ent.Committer {
			return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
				err := next.Commit(ctx, tx)
				t.pending.Delete(id)
				t.Bump(ctx, table) // even after a failed commit: a needless bump costs one count
				return err
			})
		})
		tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
			return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
				t.pending.Delete(id)
				return next.Rollback(ctx, tx)
			})
		})
	}
	return mutate()
}

type pendingKey struct {
	tx    *ent.Tx
	table string
}
