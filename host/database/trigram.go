package database

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect"
)

// trigramVersion is the migration whose Go step adds the PostgreSQL trigram
// indexes of the user searches (the file itself holds what ent generates:
// the btree indexes of the user and session pages).
const trigramVersion = 9

// trigramStatements create the pg_trgm extension and the GIN indexes that
// serve the user page's Name and Account filters (ILIKE '%…%', ent's
// ContainsFold on PostgreSQL) on a million users. ent's schema cannot
// declare an index for one dialect only, and MySQL/MariaDB and SQLite have
// no index for a substring match: there the filters scan (see
// docs/design/benchmarks.md, "A million users").
var trigramStatements = []string{
	`CREATE EXTENSION IF NOT EXISTS pg_trgm`,
	`CREATE INDEX IF NOT EXISTS "sysuser_name_trgm" ON "sys_user" USING gin ("name" gin_trgm_ops)`,
	`CREATE INDEX IF NOT EXISTS "sysuser_account_trgm" ON "sys_user" USING gin ("account" gin_trgm_ops)`,
}

// trigramIndexes is the after-step of trigramVersion: idempotent, and a
// no-op on the other dialects.
func (d *DB) trigramIndexes(ctx context.Context, q querier) error {
	if d.Dialect != dialect.Postgres {
		return nil
	}
	for _, stmt := range trigramStatements {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w (pg_trgm ships with PostgreSQL and is a trusted extension since PostgreSQL 13: "+
				"the kernel's database user needs the CREATE privilege on the database, or a database owner runs "+
				"CREATE EXTENSION pg_trgm in it once; then start the service or run `adminkernel migrate` again)", stmt, err)
		}
	}
	return nil
}
