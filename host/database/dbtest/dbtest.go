// Package dbtest gives each test a fresh, empty, isolated database on any of
// the kernel's dialects.
//
//   - Sqlite: a file in t.TempDir().
//   - PostgreSQL: a database ak_test_<random> created on the server named by
//     ADMINKERNEL_TEST_POSTGRES (default
//     postgres://postgres@127.0.0.1:5432/test?sslmode=disable) and dropped in
//     t.Cleanup.
//   - MySql (MariaDB/MySQL): the same on ADMINKERNEL_TEST_MYSQL (default
//     root@tcp(127.0.0.1:3306)/test).
//
// Dialects returns the dialects to run: all three unless
// ADMINKERNEL_TEST_DIALECTS holds a comma list (e.g. "sqlite" on a machine
// without servers). An unreachable server fails the test with a message
// naming the variable to set; it is never skipped silently.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/snowflake"
)

// Environment variables read by this package.
const (
	EnvDialects = "ADMINKERNEL_TEST_DIALECTS"
	EnvPostgres = "ADMINKERNEL_TEST_POSTGRES"
	EnvMySQL    = "ADMINKERNEL_TEST_MYSQL"

	DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultMySQL    = "root@tcp(127.0.0.1:3306)/test"
)

// AllDialects lists every testable DbType.
var AllDialects = []string{config.DBSqlite, config.DBPostgreSQL, config.DBMySQL}

// Dialects returns the DbTypes to test (config.DBSqlite, config.DBPostgreSQL,
// config.DBMySQL): all of them, or those listed in ADMINKERNEL_TEST_DIALECTS
// (comma-separated, case-insensitive; aliases postgres, pg, mariadb).
func Dialects(t testing.TB) []string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(EnvDialects))
	if v == "" {
		return append([]string(nil), AllDialects...)
	}
	var out []string
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		d, ok := canonical(name)
		if !ok {
			t.Fatalf("%s=%q: unknown dialect %q (use sqlite, postgresql, mysql)", EnvDialects, v, name)
		}
		if !contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s=%q names no dialect (use sqlite, postgresql, mysql)", EnvDialects, v)
	}
	return out
}

func canonical(name string) (string, bool) {
	switch strings.ToLower(name) {
	case "sqlite", "sqlite3":
		return config.DBSqlite, true
	case "postgresql", "postgres", "pg", "pgsql":
		return config.DBPostgreSQL, true
	case "mysql", "mariadb":
		return config.DBMySQL, true
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Config returns a Development configuration whose Service:Database points at
// a fresh, empty database of dbType (created now, dropped in t.Cleanup) and
// whose ContentRoot is a temporary directory. Tests adjust it (Environment,
// EnableCodeFirstInProduction, ...) before database.Open.
func Config(t testing.TB, dbType string) *config.Config {
	t.Helper()
	d, ok := canonical(dbType)
	if !ok {
		t.Fatalf("dbtest: unknown dialect %q", dbType)
	}
	cfg := config.Defaults()
	cfg.Environment = config.Development
	cfg.ContentRoot = t.TempDir()
	cfg.Service.Database.DbType = d
	switch d {
	case config.DBSqlite:
		cfg.Service.Database.ConnectionString = "Data Source=data/test.db"
	case config.DBPostgreSQL:
		cfg.Service.Database.ConnectionString = config.Secret(createPostgres(t))
	case config.DBMySQL:
		cfg.Service.Database.ConnectionString = config.Secret(createMySQL(t))
	}
	return &cfg
}

// Open returns an open, empty database of dbType (no tables), closed in
// t.Cleanup.
func Open(t testing.TB, dbType string) *database.DB {
	t.Helper()
	return OpenConfig(t, Config(t, dbType))
}

// OpenMigrated returns an open database of dbType with the kernel's tables
// created (no rows), closed in t.Cleanup.
func OpenMigrated(t testing.TB, dbType string) *database.DB {
	t.Helper()
	db := Open(t, dbType)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("dbtest: migrate %s: %v", dbType, err)
	}
	return db
}

// OpenConfig opens cfg's database and closes it in t.Cleanup. Created rows
// get their ids from a generator of the database's own, on worker
// Service:Snowflake:WorkerId.
func OpenConfig(t testing.TB, cfg *config.Config) *database.DB {
	t.Helper()
	ids, err := snowflake.New(cfg.Service.Snowflake.WorkerID)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	db, err := database.Open(context.Background(), cfg, nil, database.WithIDs(ids.Next))
	if err != nil {
		t.Fatalf("dbtest: open %s: %v", cfg.Service.Database.DbType, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ak_test_" + hex.EncodeToString(b[:])
}

func unreachable(t testing.TB, server, env, target string, err error) {
	t.Helper()
	t.Fatalf("dbtest: the %s test server is unreachable at %s: %v\n"+
		"Start it, point %s at a reachable server (a user allowed to CREATE DATABASE), "+
		"or restrict the dialects under test, e.g. %s=sqlite.",
		server, target, err, env, EnvDialects)
}

// createPostgres creates an empty database and returns a connection string
// for it; the database is dropped in t.Cleanup (registered before the
// caller's Close, so it runs after it).
func createPostgres(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvPostgres)
	if admin == "" {
		admin = DefaultPostgres
	}
	pcfg, err := pq.NewConfig(admin)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", EnvPostgres, err)
	}
	target := fmt.Sprintf("%s:%d/%s", pcfg.Host, pcfg.Port, pcfg.Database)
	connector, err := pq.NewConnectorConfig(pcfg)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", EnvPostgres, err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		unreachable(t, "PostgreSQL", EnvPostgres, target, err)
	}
	name := randomName()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("dbtest: create PostgreSQL database %s: %v", name, err)
	}
	t.Cleanup(func() {
		db := sql.OpenDB(connector)
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop PostgreSQL database %s: %v", name, err)
		}
	})
	return withPostgresDatabase(admin, name)
}

// withPostgresDatabase returns the admin connection string pointed at db.
func withPostgresDatabase(admin, db string) string {
	lower := strings.ToLower(admin)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		if u, err := url.Parse(admin); err == nil {
			u.Path = "/" + db
			return u.String()
		}
	}
	// key=value form: a later dbname overrides an earlier one.
	return admin + " dbname=" + db
}

// createMySQL creates an empty database and returns a go-sql-driver DSN for
// it; the database is dropped in t.Cleanup.
func createMySQL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvMySQL)
	if admin == "" {
		admin = DefaultMySQL
	}
	mcfg, err := mysql.ParseDSN(admin)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", EnvMySQL, err)
	}
	if mcfg.Timeout == 0 {
		mcfg.Timeout = 10 * time.Second
	}
	target := fmt.Sprintf("%s(%s)/%s", mcfg.Net, mcfg.Addr, mcfg.DBName)
	connector, err := mysql.NewConnector(mcfg)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", EnvMySQL, err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		unreachable(t, "MySQL/MariaDB", EnvMySQL, target, err)
	}
	name := randomName()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		t.Fatalf("dbtest: create MySQL database %s: %v", name, err)
	}
	t.Cleanup(func() {
		db := sql.OpenDB(connector)
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("dbtest: drop MySQL database %s: %v", name, err)
		}
	})
	c := mcfg.Clone()
	c.DBName = name
	return c.FormatDSN()
}
