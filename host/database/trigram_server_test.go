//go:build !unit

package database_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestTrigramIndexes: on PostgreSQL the migrations leave GIN trigram
// indexes on sys_user.name and sys_user.account, and the user searches'
// ILIKE '%…%' can use them (the planner is left only bitmap scans to show
// that the index matches the predicate, not to judge its cost).
func TestTrigramIndexes(t *testing.T) {
	db := dbtest.OpenMigrated(t, config.DBPostgreSQL)
	ctx := context.Background()
	for _, name := range []string{"sysuser_name_trgm", "sysuser_account_trgm"} {
		var def string
		if err := db.SQL.QueryRowContext(ctx, "SELECT indexdef FROM pg_indexes WHERE tablename = 'sys_user' AND indexname = $1", name).Scan(&def); err != nil {
			t.Fatalf("index %s: %v", name, err)
		}
		t.Logf("%s: %s", name, def)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	// Only a bitmap scan is left to the planner, and no btree index can
	// serve ILIKE '%…%' as an index condition.
	for _, set := range []string{"SET enable_seqscan = off", "SET enable_indexscan = off", "SET enable_indexonlyscan = off"} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	for _, col := range []string{"name", "account"} {
		plan := explain(t, conn, `EXPLAIN SELECT count(id) FROM sys_user WHERE `+col+` ILIKE '%quinlan%'`)
		if want := "sysuser_" + col + "_trgm"; !strings.Contains(plan, want) {
			t.Fatalf("the %s search does not use %s:\n%s", col, want, plan)
		}
	}
}

// explain returns the plan of q, one line per row.
func explain(t *testing.T, conn *sql.Conn, q string) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var plan string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan += line + "\n"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
