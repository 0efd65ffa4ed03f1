//go:build !unit

package database_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func pingErr(t *testing.T, driverName, dsn string) error {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// killedConnErr returns the error of a statement on a connection the
// server terminated meanwhile (PostgreSQL pg_terminate_backend, MariaDB
// KILL), as the driver reports it.
func killedConnErr(t *testing.T, driverName, dsn, idQuery, killQuery string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("%s server needed: %v", driverName, err)
	}
	defer func() { _ = victim.Close() }()
	var id int64
	if err := victim.QueryRowContext(ctx, idQuery).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, killQuery, id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	_, err = victim.ExecContext(ctx, "SELECT 1")
	if err == nil {
		t.Fatal("a killed connection answered")
	}
	return err
}

// sqliteBusyErr returns a genuine SQLITE_BUSY: a write while another
// connection holds the write lock, with no busy timeout.
func sqliteBusyErr(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "CREATE TABLE t (v INT)"); err != nil {
		t.Fatal(err)
	}
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	if err == nil {
		t.Fatal("a write went through another connection's write lock")
	}
	return err
}

// TestIsUnavailable classifies real driver errors (refused dials, killed
// connections, statement errors, SQLite contention) and the server codes
// that cannot be provoked on a test server.
func TestIsUnavailable(t *testing.T) {
	pgAdmin := env(dbtest.EnvPostgres, dbtest.DefaultPostgres)
	myAdmin := env(dbtest.EnvMySQL, dbtest.DefaultMySQL)
	pgSyntax := pingErr(t, "postgres", pgAdmin) // nil when the server is up
	if pgSyntax != nil {
		t.Fatalf("PostgreSQL needed at %s: %v", pgAdmin, pgSyntax)
	}
	if err := pingErr(t, "mysql", myAdmin); err != nil {
		t.Fatalf("MySQL/MariaDB needed at %s: %v", myAdmin, err)
	}
	stmtErr := func(driverName, dsn, q string) error {
		db, err := sql.Open(driverName, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.ExecContext(context.Background(), q)
		if err == nil {
			t.Fatalf("%q succeeded", q)
		}
		return err
	}
	deadline, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-deadline.Done()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"PostgreSQL refused", pingErr(t, "postgres", "postgres://postgres@"+closedPort(t)+"/test?sslmode=disable&connect_timeout=5"), true},
		{"MySQL refused", pingErr(t, "mysql", "root@tcp("+closedPort(t)+")/test?timeout=5s"), true},
		{"PostgreSQL backend terminated", killedConnErr(t, "postgres", pgAdmin, "SELECT pg_backend_pid()", "SELECT pg_terminate_backend($1)"), true},
		{"MariaDB connection killed", killedConnErr(t, "mysql", myAdmin, "SELECT CONNECTION_ID()", "KILL ?"), true},
		{"PostgreSQL syntax error", stmtErr("postgres", pgAdmin, "SELEC 1"), false},
		{"PostgreSQL unknown table", stmtErr("postgres", pgAdmin, "SELECT * FROM no_such_table_here"), false},
		{"MySQL syntax error", stmtErr("mysql", myAdmin, "SELEC 1"), false},
		{"SQLite busy", sqliteBusyErr(t), false},
		{"SQLite full", sqliteFullError(t), false},
		{"PostgreSQL 57P01 admin shutdown", &pq.Error{Code: "57P01"}, true},
		{"PostgreSQL 57P02 crash shutdown", &pq.Error{Code: "57P02"}, true},
		{"PostgreSQL 57P03 cannot connect now", &pq.Error{Code: "57P03"}, true},
		{"PostgreSQL 08006 connection failure", &pq.Error{Code: "08006"}, true},
		{"PostgreSQL 53300 too many connections", &pq.Error{Code: "53300"}, true},
		{"PostgreSQL 53100 disk full", &pq.Error{Code: "53100"}, false},
		{"PostgreSQL 40001 serialization failure", &pq.Error{Code: "40001"}, false},
		{"PostgreSQL 57014 query cancelled", &pq.Error{Code: "57014"}, false},
		{"MySQL 1040 too many connections", &mysql.MySQLError{Number: 1040}, true},
		{"MySQL 1053 shutdown in progress", &mysql.MySQLError{Number: 1053}, true},
		{"MySQL 2006 gone away", &mysql.MySQLError{Number: 2006}, true},
		{"MySQL 1213 deadlock", &mysql.MySQLError{Number: 1213}, false},
		{"MySQL 1205 lock wait timeout", &mysql.MySQLError{Number: 1205}, false},
		{"cancelled context", context.Canceled, false},
		{"expired context", deadline.Err(), false},
		{"sql.ErrNoRows", sql.ErrNoRows, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := database.IsUnavailable(tt.err); got != tt.want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
		if tt.err != nil {
			if got := database.IsUnavailable(fmt.Errorf("ent: %w", tt.err)); got != tt.want {
				t.Errorf("%s wrapped: IsUnavailable = %v, want %v", tt.name, got, tt.want)
			}
		}
	}
	if database.IsUnavailable(errors.New("connection refused")) {
		t.Error("a plain string is not classified by its text")
	}
}
