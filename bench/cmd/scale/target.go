package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/adminkernel/kernel/host/database"
)

// target is the database under test.
type target struct {
	kind   string // postgres | mysql | sqlite
	dsn    string // the kernel's connection string (a driver DSN; for SQLite "Data Source=<path>")
	db     *sql.DB
	exists bool // the database was there before this run
}

func (t *target) close() { _ = t.db.Close() }

// ph returns the n-th (1-based) placeholder of the dialect.
func (t *target) ph(n int) string {
	if t.kind == "postgres" {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// openTarget creates the database when it is missing (dropping it first
// with -refill) and opens it.
func openTarget(ctx context.Context, o options) (*target, error) {
	t := &target{kind: o.db}
	switch o.db {
	case "postgres":
		admin := o.admin
		if admin == "" {
			admin = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
		}
		adm, err := sql.Open("postgres", admin)
		if err != nil {
			return nil, err
		}
		defer adm.Close()
		if o.refill {
			if _, err := adm.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(o.name)+" WITH (FORCE)"); err != nil {
				return nil, fmt.Errorf("dropping %s: %w", o.name, err)
			}
		}
		var n int
		if err := adm.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", o.name).Scan(&n); err != nil {
			return nil, fmt.Errorf("PostgreSQL at %s: %w", admin, err)
		}
		t.exists = n > 0
		if !t.exists {
			if _, err := adm.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(o.name)); err != nil {
				return nil, err
			}
		}
		u, err := url.Parse(admin)
		if err != nil {
			return nil, err
		}
		u.Path = "/" + o.name
		t.dsn = u.String()
		t.db, err = sql.Open("postgres", t.dsn)
		if err != nil {
			return nil, err
		}
	case "mysql":
		admin := o.admin
		if admin == "" {
			admin = "root@tcp(127.0.0.1:3306)/test"
		}
		cfg, err := mysql.ParseDSN(admin)
		if err != nil {
			return nil, err
		}
		adm, err := sql.Open("mysql", admin)
		if err != nil {
			return nil, err
		}
		defer adm.Close()
		quoted := "`" + strings.ReplaceAll(o.name, "`", "``") + "`"
		if o.refill {
			if _, err := adm.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoted); err != nil {
				return nil, fmt.Errorf("dropping %s: %w", o.name, err)
			}
		}
		var n int
		if err := adm.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", o.name).Scan(&n); err != nil {
			return nil, fmt.Errorf("MariaDB at %s: %w", admin, err)
		}
		t.exists = n > 0
		if !t.exists {
			if _, err := adm.ExecContext(ctx, "CREATE DATABASE "+quoted+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
				return nil, err
			}
		}
		c := cfg.Clone()
		c.DBName = o.name
		c.ParseTime = true
		t.dsn = c.FormatDSN()
		t.db, err = sql.Open("mysql", t.dsn)
		if err != nil {
			return nil, err
		}
	case "sqlite":
		// The kernel's own file format: a file under -out, opened with the
		// kernel's DSN (WAL, times as text in UTC) while the kernel runs.
		path, err := filepath.Abs(filepath.Join(o.out, o.name+".db"))
		if err != nil {
			return nil, err
		}
		if o.refill {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("removing %s: %w", path+suffix, err)
				}
			}
		}
		_, statErr := os.Stat(path)
		t.exists = statErr == nil
		t.dsn = "Data Source=" + path
		t.db, err = sql.Open("sqlite", database.SqliteDSN(path))
		if err != nil {
			return nil, err
		}
	}
	t.db.SetMaxOpenConns(4)
	return t, t.db.PingContext(ctx)
}

// count answers SELECT count(*) FROM table.
func (t *target) count(ctx context.Context, table string) (int, error) {
	var n int
	err := t.db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	return n, err
}
