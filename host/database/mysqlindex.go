package database

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
)

// mysqlIndex is an index of MySQL/MariaDB alone, created by the Go step of
// a migration whose files hold no statement: ent's schema cannot declare an
// index for one dialect.
type mysqlIndex struct {
	version int    // the migration whose after-step creates it
	name    string // on sys_user
	columns []string
}

// Statement is its CREATE INDEX.
func (ix mysqlIndex) Statement() string {
	return "CREATE INDEX `" + ix.name + "` ON `sys_user` (`" + strings.Join(ix.columns, "`, `") + "`)"
}

// Plain is the statement without quoting, for notes printed next to any
// dialect's DDL.
func (ix mysqlIndex) Plain() string {
	return "CREATE INDEX " + ix.name + " ON sys_user (" + strings.Join(ix.columns, ", ") + ")"
}

// mysqlIndexes are the user page's MySQL/MariaDB indexes, by migration.
//
//   - 0013 sysuser_search lets the Name and Account filters (LIKE '%…%',
//     which no index can seek) be answered from an index alone: the count
//     and the page's ids are read from its ~45 MB per million users, in the
//     page's order, instead of from the table (~450 MB per million users, a
//     random read per row when the order index is walked). PostgreSQL has
//     trigram indexes for the same filters (trigramVersion); SQLite scans.
//   - 0014 sysuser_scope does the same for a data scope (org_id IN (…)): a
//     deep page of "my organisation and below" walks the order index and
//     tested each entry's org_id with a random read of its row (~20 000 of
//     them for page 100 of a 10 % scope); with org_id in the index the walk
//     reads nothing else (docs/design/benchmarks.md, "A million users and sessions"). PostgreSQL's
//     planner reads the org index and sorts, which is within the target.
var mysqlIndexes = []mysqlIndex{
	{version: 13, name: "sysuser_search", columns: []string{"is_delete", "create_time", "id", "account", "name"}},
	{version: 14, name: "sysuser_scope", columns: []string{"is_delete", "create_time", "id", "org_id"}},
}

// mysqlIndexOf is the index whose step migration version runs.
func mysqlIndexOf(version int) (mysqlIndex, bool) {
	for _, ix := range mysqlIndexes {
		if ix.version == version {
			return ix, true
		}
	}
	return mysqlIndex{}, false
}

// createMySQLIndex is the after-step of ix.version: idempotent (MySQL has
// no CREATE INDEX IF NOT EXISTS), and a no-op on the other dialects.
func (d *DB) createMySQLIndex(ctx context.Context, q querier, ix mysqlIndex) error {
	if d.Dialect != dialect.MySQL {
		return nil
	}
	var n int
	err := q.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sys_user' AND INDEX_NAME = ?",
		ix.name).Scan(&n)
	if err != nil {
		return fmt.Errorf("look for the index %s: %w", ix.name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := q.ExecContext(ctx, ix.Statement()); err != nil {
		return fmt.Errorf("%s: %w", ix.Statement(), err)
	}
	return nil
}
