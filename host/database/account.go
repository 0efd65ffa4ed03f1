package database

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/hook"
	"github.com/adminkernel/kernel/ent/schema"
)

// Accounts are unique case-insensitively: sys_user.account_norm holds the
// lower-cased account (schema.NormalizeAccount) and UNIQUE(account_norm,
// delete_key) refuses a second live "superadmin" beside "superAdmin" on
// every dialect (SQLite and PostgreSQL compare case-sensitively, MariaDB's
// collation does not).
//
// account_norm is filled on create by a client hook (InstallHooks, run by
// Open on every client it builds) and back-filled by the data step of
// migration 0002 (dataSteps) for rows written before the column existed.
// That migration refuses to run while live users differ only in the case of
// their accounts: it never renames anyone.

// ErrAccountCaseDuplicates is returned (wrapped) by Migrate (migration 0002) when live users
// have accounts that differ only in case.
var ErrAccountCaseDuplicates = errors.New("live users have accounts that differ only in letter case")

// InstallHooks registers the kernel's client hooks: account_norm follows
// account on every user create (account is immutable, so no update changes
// it).
func InstallHooks(c *ent.Client) {
	c.SysUser.Use(func(next ent.Mutator) ent.Mutator {
		return hook.SysUserFunc(func(ctx context.Context, m *ent.SysUserMutation) (ent.Value, error) {
			if m.Op().Is(ent.OpCreate) {
				if a, ok := m.Account(); ok {
					m.SetAccountNorm(schema.NormalizeAccount(a))
				}
			}
			return next.Mutate(ctx, m)
		})
	})
}

type userRow struct {
	id      int64
	account string
}

// liveUsers reads the id and account of every live user (nil when the
// table does not exist yet).
func (d *DB) liveUsers(ctx context.Context, q querier, onlyUnnormalised bool) ([]userRow, error) {
	has, err := hasTable(ctx, q, d.Dialect, MarkerTable)
	if err != nil || !has {
		return nil, err
	}
	query := "SELECT id, account FROM sys_user WHERE delete_key = 0"
	if onlyUnnormalised {
		query = "SELECT id, account FROM sys_user WHERE account_norm IS NULL"
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read the accounts: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []userRow
	for rows.Next() {
		var r userRow
		if err := rows.Scan(&r.id, &r.account); err != nil {
			return nil, fmt.Errorf("read the accounts: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// checkAccountCase fails with ErrAccountCaseDuplicates, naming every group
// of live accounts that differ only in case, and what to do about them.
func (d *DB) checkAccountCase(ctx context.Context, q querier) error {
	users, err := d.liveUsers(ctx, q, false)
	if err != nil {
		return err
	}
	groups := map[string][]userRow{}
	for _, u := range users {
		n := schema.NormalizeAccount(u.account)
		groups[n] = append(groups[n], u)
	}
	var dups []string
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		parts := make([]string, len(g))
		for i, u := range g {
			parts[i] = fmt.Sprintf("%q (id %d)", u.account, u.id)
		}
		sort.Strings(parts)
		dups = append(dups, strings.Join(parts, ", "))
	}
	if len(dups) == 0 {
		return nil
	}
	sort.Strings(dups)
	return fmt.Errorf("%w: %s. Accounts are now unique regardless of case; the schema was not changed. "+
		"Delete or disable-and-delete all but one user of each group (or recreate them under distinct names) "+
		"through the user administration, then start the service (or run `adminkernel migrate`) again",
		ErrAccountCaseDuplicates, strings.Join(dups, "; "))
}

// backfillAccountNorm fills account_norm of the rows written before the
// column existed.
func (d *DB) backfillAccountNorm(ctx context.Context, q querier) error {
	users, err := d.liveUsers(ctx, q, true)
	if err != nil {
		return err
	}
	update := "UPDATE sys_user SET account_norm = ? WHERE id = ?"
	if d.Dialect == dialect.Postgres {
		update = "UPDATE sys_user SET account_norm = $1 WHERE id = $2"
	}
	for _, u := range users {
		if _, err := q.ExecContext(ctx, update, schema.NormalizeAccount(u.account), u.id); err != nil {
			return fmt.Errorf("fill sys_user.account_norm of user %d: %w", u.id, err)
		}
	}
	if len(users) > 0 {
		d.log.Info("filled the normalised account of existing users", "users", len(users))
	}
	return nil
}

// dataStep is Go code a migration runs before or after its statements, on
// the migration's transaction (or connection on MySQL).
type dataStep func(ctx context.Context, d *DB, q querier) error

// dataSteps returns the Go steps of a migration version: 0002 refuses
// accounts that differ only in case before adding account_norm and its
// unique index, and fills account_norm afterwards (with
// schema.NormalizeAccount, which SQL's LOWER does not match beyond ASCII on
// every dialect); 0009 adds PostgreSQL's trigram indexes, 0013 and 0014
// MySQL's user page indexes (mysqlIndexes): the indexes of one dialect that
// ent cannot declare.
func dataSteps(version int) (before, after dataStep) {
	if ix, ok := mysqlIndexOf(version); ok {
		return nil, func(ctx context.Context, d *DB, q querier) error { return d.createMySQLIndex(ctx, q, ix) }
	}
	switch version {
	case 2:
		return func(ctx context.Context, d *DB, q querier) error { return d.checkAccountCase(ctx, q) },
			func(ctx context.Context, d *DB, q querier) error { return d.backfillAccountNorm(ctx, q) }
	case trigramVersion:
		return nil, func(ctx context.Context, d *DB, q querier) error { return d.trigramIndexes(ctx, q) }
	case phoneVersion:
		return func(ctx context.Context, d *DB, q querier) error { return d.checkPhones(ctx, q) }, nil
	}
	return nil, nil
}

// dataStepNote describes the Go steps of a version for printed SQL.
func dataStepNote(version int) string {
	if ix, ok := mysqlIndexOf(version); ok {
		return "plus a Go data step on MySQL/MariaDB (run by `adminkernel migrate` and at start): " +
			ix.Plain() + " unless it exists"
	}
	if version == trigramVersion {
		return "plus a Go data step on PostgreSQL (run by `adminkernel migrate` and at start): " +
			"CREATE EXTENSION IF NOT EXISTS pg_trgm and GIN trigram indexes on sys_user.name and sys_user.account"
	}
	if version == phoneVersion {
		return "plus a Go data step before it (run by `adminkernel migrate`, not by this script): blank phones become NULL; " +
			"live users sharing a phone stop the migration"
	}
	if version == 2 {
		return "plus Go data steps (run by `adminkernel migrate`, not by this script): before, refuse live accounts that differ only in case; " +
			"after, fill sys_user.account_norm of existing rows (also done at every Production start)"
	}
	return ""
}
