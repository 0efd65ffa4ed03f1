//go:build !unit

package database_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestSearchIndex: on MySQL/MariaDB the migrations leave sysuser_search,
// running its step again changes nothing, and the ids of a search page are
// read from it alone (EXPLAIN: the key and "Using index"); PostgreSQL has
// no such index (its trigram indexes serve the searches).
func TestSearchIndex(t *testing.T) {
	ctx := context.Background()
	db := dbtest.OpenMigrated(t, config.DBMySQL)
	count := func() int {
		t.Helper()
		var n int
		if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS "+
			"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sys_user' AND INDEX_NAME = 'sysuser_search'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("sysuser_search: %d indexes, want 1", n)
	}
	if err := database.SearchIndex(ctx, db); err != nil {
		t.Fatalf("the step again: %v", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after the step ran again: %d indexes, want 1", n)
	}
	var id, selectType, table, typ string
	var possible, key, keyLen, ref, rows, extra *string
	if err := db.SQL.QueryRowContext(ctx, "EXPLAIN SELECT `id` FROM `sys_user` WHERE NOT `is_delete` AND "+
		"`account` COLLATE utf8mb4_general_ci LIKE '%u00012%' ORDER BY `create_time` DESC, `id` DESC LIMIT 20").
		Scan(&id, &selectType, &table, &typ, &possible, &key, &keyLen, &ref, &rows, &extra); err != nil {
		t.Fatal(err)
	}
	if key == nil || *key != "sysuser_search" || extra == nil || !strings.Contains(*extra, "Using index") {
		t.Fatalf("the ids of an account search are not read from sysuser_search alone: key %v, extra %v", deref(key), deref(extra))
	}

	pg := dbtest.OpenMigrated(t, config.DBPostgreSQL)
	var n int
	if err := pg.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'sys_user' AND indexname = 'sysuser_search'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("PostgreSQL has sysuser_search: the step is for MySQL only")
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
