package database_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestMigrationFilesMatchEntSchema applies every SQLite migration file to an
// in-memory database and asks ent's differ what is left to reach the ent
// schema: anything means the schema changed without a new migration file.
// `make verify` runs it (no server needed); drift_server_test.go does the
// same on PostgreSQL and MariaDB.
func TestMigrationFilesMatchEntSchema(t *testing.T) {
	cfg := config.Defaults()
	cfg.Environment = config.Development
	cfg.ContentRoot = t.TempDir()
	cfg.Service.Database.DbType = config.DBSqlite
	cfg.Service.Database.ConnectionString = "Data Source=:memory:"
	assertFilesMatchSchema(t, dbtest.OpenConfig(t, &cfg))
}

func assertFilesMatchSchema(t *testing.T, db *database.DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.ApplyMigrations(ctx); err != nil {
		t.Fatal(err)
	}
	var plan bytes.Buffer
	if err := db.WriteDDL(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(plan.String()); s != "" {
		t.Fatalf("the ent schema changed without a migration file: with every %s migration applied, ent would still run:\n%s\n\n"+
			"Generate the next migration (PostgreSQL and MariaDB must answer, see host/database/migrations/README.md):\n"+
			"    go run ./host/database/migrations/gen -name <what_changed>", db.DbType, s)
	}
}
