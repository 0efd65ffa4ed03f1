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

// TestMySQLIndexes: on MySQL/MariaDB the migrations leave the user page's
// indexes, running their steps again changes nothing, and the ids of the
// page each one is for are read from it alone (EXPLAIN: the key and "Using
// index"); PostgreSQL has none of them (its trigram indexes serve the
// searches, its org index the scopes).
func TestMySQLIndexes(t *testing.T) {
	ctx := context.Background()
	db := dbtest.OpenMigrated(t, config.DBMySQL)
	pg := dbtest.OpenMigrated(t, config.DBPostgreSQL)
	count := func(name string) int {
		t.Helper()
		var n int
		if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS "+
			"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sys_user' AND INDEX_NAME = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	names, err := database.MySQLIndexes(ctx, db)
	if err != nil {
		t.Fatalf("the steps again: %v", err)
	}
	tests := []struct {
		index string
		page  string // the ids of a page it is for
	}{
		{"sysuser_search", "SELECT `id` FROM `sys_user` WHERE NOT `is_delete` AND " +
			"`account` COLLATE utf8mb4_general_ci LIKE '%u00012%' ORDER BY `create_time` DESC, `id` DESC LIMIT 20"},
		{"sysuser_scope", "SELECT `id` FROM `sys_user` WHERE NOT `is_delete` AND `org_id` IN (100000, 100010, 100011) " +
			"ORDER BY `create_time` DESC, `id` DESC LIMIT 20 OFFSET 1980"},
	}
	if len(names) != len(tests) {
		t.Fatalf("indexes %v, the test covers %d", names, len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.index, func(t *testing.T) {
			if n := count(tt.index); n != 1 {
				t.Fatalf("%s: %d indexes after migrating and running the step again, want 1", tt.index, n)
			}
			var id, selectType, table, typ string
			var possible, key, keyLen, ref, rows, extra *string
			if err := db.SQL.QueryRowContext(ctx, "EXPLAIN "+tt.page).
				Scan(&id, &selectType, &table, &typ, &possible, &key, &keyLen, &ref, &rows, &extra); err != nil {
				t.Fatal(err)
			}
			if key == nil || *key != tt.index || extra == nil || !strings.Contains(*extra, "Using index") {
				t.Fatalf("the page's ids are not read from %s alone: key %v, extra %v", tt.index, deref(key), deref(extra))
			}
			var n int
			if err := pg.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'sys_user' AND indexname = $1", tt.index).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("PostgreSQL has %s: the step is for MySQL only", tt.index)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
