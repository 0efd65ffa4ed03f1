package database_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/adminkernel/kernel/host/database"
)

// sqliteFullError returns a genuine SQLITE_FULL from the driver: a table
// that outgrows PRAGMA max_page_count.
func sqliteFullError(t *testing.T) error {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	for _, q := range []string{"CREATE TABLE t (v BLOB)", "PRAGMA max_page_count = 8"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		if _, err := conn.ExecContext(ctx, "INSERT INTO t VALUES (randomblob(4000))"); err != nil {
			return err
		}
	}
	t.Fatal("100 inserts of 4 kB fitted in 8 pages")
	return nil
}

func TestIsStorageFull(t *testing.T) {
	full := sqliteFullError(t)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"SQLITE_FULL from the driver", full, true},
		{"SQLITE_FULL wrapped", fmt.Errorf("ent: committing: %w", full), true},
		{"ENOSPC", fmt.Errorf("write: %w", syscall.ENOSPC), true},
		{"PostgreSQL disk_full", &pq.Error{Code: "53100"}, true},
		{"PostgreSQL out_of_memory", &pq.Error{Code: "53200"}, false},
		{"PostgreSQL unique violation", &pq.Error{Code: "23505"}, false},
		{"MySQL ER_DISK_FULL", &mysql.MySQLError{Number: 1021}, true},
		{"MySQL table is full", fmt.Errorf("x: %w", &mysql.MySQLError{Number: 1114, Message: "The table 'sys_user' is full"}), true},
		{"MySQL error 28 from the engine", &mysql.MySQLError{Number: 1030, Message: "Got error 28 from storage engine"}, true},
		{"MySQL other engine error", &mysql.MySQLError{Number: 1030, Message: "Got error 122 from storage engine"}, false},
		{"MySQL duplicate", &mysql.MySQLError{Number: 1062}, false},
		{"text only", errors.New("database or disk is full"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := database.IsStorageFull(tt.err); got != tt.want {
				t.Errorf("IsStorageFull(%v) = %v, want %v", tt.err, got, tt.want)
			}
			// MarkStorageFull marks exactly these, once, keeping the text
			// and the chain; the central error handler only asks for
			// StorageFull().
			marked := database.MarkStorageFull(tt.err)
			var sf interface{ StorageFull() bool }
			if got := errors.As(marked, &sf) && sf.StorageFull(); got != tt.want {
				t.Errorf("MarkStorageFull(%v) marked = %v, want %v", tt.err, got, tt.want)
			}
			if tt.err == nil {
				if marked != nil {
					t.Errorf("MarkStorageFull(nil) = %v", marked)
				}
				return
			}
			if marked.Error() != tt.err.Error() || !errors.Is(marked, tt.err) {
				t.Errorf("MarkStorageFull(%v) = %v: text or chain changed", tt.err, marked)
			}
			if tt.want {
				var outer, inner *database.StorageFullError
				if !errors.As(database.MarkStorageFull(marked), &outer) || errors.As(outer.Err, &inner) {
					t.Errorf("MarkStorageFull marks %v twice", tt.err)
				}
			}
		})
	}
}
