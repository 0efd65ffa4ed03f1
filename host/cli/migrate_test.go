package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/migrations"
)

// latestRevision is the number of the last migration (the same in every
// dialect).
func latestRevision(t *testing.T) int {
	t.Helper()
	files, err := migrations.For(dialect.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// appliedFrom1 is what migrate prints after applying the migrations from
// revision 1 to n.
func appliedFrom1(n int) string {
	s := ""
	if n-1 != 1 {
		s = "s"
	}
	return fmt.Sprintf("applied %d migration%s (from rev 1 to %d)", n-1, s, n)
}

// noSecrets clears the signing key and points the settings at Production:
// the migrate commands must not need any secret.
func noSecrets(t *testing.T) {
	t.Helper()
	t.Setenv("Service__Security__Jwt__SigningKey", "")
	t.Setenv("ADMINKERNEL_ENVIRONMENT", "Production")
}

// TestMigratePrintOfflineNeedsNothing: `migrate --print --offline` in
// Production, without a signing key and with a PostgreSQL server nobody
// listens on, prints the full PostgreSQL DDL and succeeds.
func TestMigratePrintOfflineNeedsNothing(t *testing.T) {
	noSecrets(t)
	t.Setenv("Service__Database__DbType", "PostgreSQL")
	t.Setenv("Service__Database__ConnectionString", "Host=127.0.0.1;Port=1;Database=nowhere;Username=u;Password=not-needed")
	dir := t.TempDir()
	out, _, err := run(t, context.Background(), host.Options{}, "migrate", "--print", "--offline", "--content-root", dir)
	if err != nil {
		t.Fatalf("migrate --print --offline: %v", err)
	}
	for _, want := range []string{`CREATE TABLE "sys_user"`, `CREATE TABLE "sys_session"`, "-- migration 0001_initial", "-- migration 0002_", `ADD COLUMN "account_norm"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%.600s", want, out)
		}
	}
	if strings.Contains(out, "`sys_user`") {
		t.Error("PostgreSQL DDL printed with MySQL/SQLite quoting")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("--offline wrote into the content root: %v", entries)
	}

	// The same settings without --offline do try the server, and say so.
	if _, _, err := run(t, context.Background(), host.Options{}, "migrate", "--print", "--content-root", dir); err == nil ||
		!strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("migrate --print against a closed port: %v, want a connection error naming it", err)
	}
	if _, _, err := run(t, context.Background(), host.Options{}, "migrate", "--offline", "--content-root", dir); err == nil ||
		!strings.Contains(err.Error(), "--print") {
		t.Fatalf("--offline alone: %v, want an error naming --print", err)
	}
}

// TestMigrateStatusPrintApply walks a SQLite database of the previous
// release through status, --print and migrate in Production without a
// signing key.
func TestMigrateStatusPrintApply(t *testing.T) {
	noSecrets(t)
	dir := t.TempDir()
	ctx := context.Background()
	dbFile := filepath.Join(dir, "data", "adminkernel.db")

	// No database yet: everything pending, and the file is not created.
	n := latestRevision(t)
	out, _, err := run(t, ctx, host.Options{}, "migrate", "status", "--content-root", dir)
	if err != nil {
		t.Fatalf("migrate status: %v", err)
	}
	if !strings.Contains(out, fmt.Sprintf("schema at revision 0 of %d; %d pending", n, n)) || !regexp.MustCompile(`0001\s+initial\s+pending`).MatchString(out) {
		t.Fatalf("status of a missing database:\n%s", out)
	}
	if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
		t.Fatalf("status created the database file (stat: %v)", err)
	}

	// The previous release's schema: revision 1.
	cfg := config.Defaults()
	cfg.ContentRoot = dir
	db, err := database.Open(ctx, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyMigrationsTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	out, _, err = run(t, ctx, host.Options{}, "migrate", "status", "--content-root", dir)
	if err != nil {
		t.Fatal(err)
	}
	applied := regexp.MustCompile(`0001\s+initial\s+applied\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d+`)
	if !strings.Contains(out, fmt.Sprintf("schema at revision 1 of %d; %d pending", n, n-1)) || !applied.MatchString(out) ||
		!regexp.MustCompile(`0002\s+account_norm_session_must_change_password\s+pending`).MatchString(out) {
		t.Fatalf("status at revision 1:\n%s", out)
	}

	out, _, err = run(t, ctx, host.Options{}, "migrate", "--print", "--content-root", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "-- migration 0002_") || !strings.Contains(out, "account_norm") || strings.Contains(out, "CREATE TABLE `sys_config`") {
		t.Fatalf("--print at revision 1 should print 0002 and 0003 only:\n%s", out)
	}

	out, _, err = run(t, ctx, host.Options{}, "migrate", "--content-root", dir)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if strings.TrimSpace(out) != appliedFrom1(n) {
		t.Fatalf("migrate printed %q", out)
	}
	out, _, err = run(t, ctx, host.Options{}, "migrate", "--content-root", dir)
	if err != nil || strings.TrimSpace(out) != fmt.Sprintf("schema is at revision %d; nothing to apply", n) {
		t.Fatalf("second migrate printed %q, %v", out, err)
	}
	out, _, err = run(t, ctx, host.Options{}, "migrate", "status", "--content-root", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, fmt.Sprintf("schema at revision %d of %d; 0 pending", n, n)) || strings.Contains(out, "pending\t") ||
		!regexp.MustCompile(`0002\s+account_norm_session_must_change_password\s+applied`).MatchString(out) {
		t.Fatalf("status after migrate:\n%s", out)
	}
}

// TestMigrateStatusLegacy: tables of the previous release's automatic
// creation (no revision table) are reported as adoptable, and migrate
// adopts them.
func TestMigrateStatusLegacy(t *testing.T) {
	noSecrets(t)
	dir := t.TempDir()
	ctx := context.Background()
	cfg := config.Defaults()
	cfg.ContentRoot = dir
	db, err := database.Open(ctx, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := migrations.For(db.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := files[0].Statements()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.SQL.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, ctx, host.Options{}, "migrate", "status", "--content-root", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, fmt.Sprintf("no revision recorded; the existing tables match revision 1 of %d", latestRevision(t))) ||
		!regexp.MustCompile(`0001\s+initial\s+present, not recorded`).MatchString(out) ||
		!regexp.MustCompile(`0002\s+\S+\s+pending`).MatchString(out) {
		t.Fatalf("status of a legacy database:\n%s", out)
	}
	out, _, err = run(t, ctx, host.Options{}, "migrate", "--content-root", dir)
	if err != nil || strings.TrimSpace(out) != "adopted the existing tables at revision 1; "+appliedFrom1(latestRevision(t)) {
		t.Fatalf("migrate of a legacy database printed %q, %v", out, err)
	}
}
