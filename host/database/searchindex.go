package database

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect"
)

// searchIndexVersion is the migration whose Go step adds the MySQL/MariaDB
// index of the user searches (its files hold no statement: ent's schema
// cannot declare an index for one dialect).
const searchIndexVersion = 13

// searchIndexName is the index searchIndex creates.
const searchIndexName = "sysuser_search"

// searchIndexStatement creates the index that lets MySQL/MariaDB answer the
// user page's Name and Account filters (LIKE '%…%', which no index can
// seek) from an index alone: the count and the page's ids are read from
// its ~45 MB per million users, in the page's order, instead of from the
// table (~450 MB per million users, a random read per row when the order
// index is walked). PostgreSQL has trigram indexes for the same filters
// (trigramVersion); SQLite scans.
const searchIndexStatement = "CREATE INDEX `" + searchIndexName + "` ON `sys_user` (`is_delete`, `create_time`, `id`, `account`, `name`)"

// searchIndex is the after-step of searchIndexVersion: idempotent (MySQL
// has no CREATE INDEX IF NOT EXISTS), and a no-op on the other dialects.
func (d *DB) searchIndex(ctx context.Context, q querier) error {
	if d.Dialect != dialect.MySQL {
		return nil
	}
	var n int
	err := q.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sys_user' AND INDEX_NAME = ?",
		searchIndexName).Scan(&n)
	if err != nil {
		return fmt.Errorf("look for the index %s: %w", searchIndexName, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := q.ExecContext(ctx, searchIndexStatement); err != nil {
		return fmt.Errorf("%s: %w", searchIndexStatement, err)
	}
	return nil
}
