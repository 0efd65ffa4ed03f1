package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"entgo.io/ent/dialect"
	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
	"modernc.org/sqlite"

	"github.com/adminkernel/kernel/ent"
)

// SQLite primary result codes (sqlite3.h).
const (
	sqliteIOErr = 10 // SQLITE_IOERR
	sqliteFull  = 13 // SQLITE_FULL: "database or disk is full"
)

// IsStorageFull reports whether err (anywhere in its chain) says the
// database could not write because its storage is full:
//
//   - SQLite: SQLITE_FULL (a full disk, or PRAGMA max_page_count reached),
//     or an I/O error whose cause is ENOSPC;
//   - PostgreSQL: SQLSTATE 53100 disk_full;
//   - MySQL/MariaDB: 1021 ER_DISK_FULL, 1114 ER_RECORD_FILE_FULL ("The table
//     is full"), and 1030 "Got error 28 from storage engine" (28 = ENOSPC);
//   - any error wrapping syscall.ENOSPC.
//
// The central error handler answers these with 503 / 50001 StorageFull
// instead of 500 / 50000: the failure is the operator's to fix (free
// space), the client may retry later, and nothing was written.
func IsStorageFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // extended codes keep the primary code in the low byte
		case sqliteFull:
			return true
		case sqliteIOErr:
			return strings.Contains(strings.ToLower(se.Error()), "no space left")
		}
		return false
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		return pe.Code == "53100"
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1021, 1114:
			return true
		case 1030:
			return strings.Contains(me.Message, "error 28 ")
		}
	}
	return false
}

// StorageFullError is a driver error that IsStorageFull recognises, marked
// where the database layer sees it (the ent driver and every mutation of
// the client Open returns) so that the layers above need no driver
// knowledge: the central error handler asks any error for StorageFull().
// Its text is the driver error's text.
type StorageFullError struct{ Err error }

func (e *StorageFullError) Error() string { return e.Err.Error() }

// Unwrap returns the driver error.
func (e *StorageFullError) Unwrap() error { return e.Err }

// StorageFull reports true: the write was refused for lack of storage.
func (e *StorageFullError) StorageFull() bool { return true }

// MarkStorageFull returns err wrapped in a *StorageFullError when
// IsStorageFull recognises it (and it is not marked yet), else err.
func MarkStorageFull(err error) error {
	if err == nil {
		return nil
	}
	var sf *StorageFullError
	if errors.As(err, &sf) || !IsStorageFull(err) {
		return err
	}
	return &StorageFullError{Err: err}
}

// storageFullDriver marks the storage-full errors of the ent driver it
// wraps: statements, transactions and their commits.
type storageFullDriver struct{ dialect.Driver }

func (d storageFullDriver) Exec(ctx context.Context, query string, args, v any) error {
	return MarkStorageFull(d.Driver.Exec(ctx, query, args, v))
}

func (d storageFullDriver) Query(ctx context.Context, query string, args, v any) error {
	return MarkStorageFull(d.Driver.Query(ctx, query, args, v))
}

func (d storageFullDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, MarkStorageFull(err)
	}
	return storageFullTx{tx}, nil
}

// BeginTx starts a transaction with options (ent's Client.BeginTx); a
// wrapped driver without BeginTx gets Tx for a nil opts.
func (d storageFullDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	b, ok := d.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	})
	if !ok {
		if opts == nil {
			return d.Tx(ctx)
		}
		return nil, fmt.Errorf("database: the wrapped %T does not support BeginTx", d.Driver)
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, MarkStorageFull(err)
	}
	return storageFullTx{tx}, nil
}

type storageFullTx struct{ dialect.Tx }

func (t storageFullTx) Exec(ctx context.Context, query string, args, v any) error {
	return MarkStorageFull(t.Tx.Exec(ctx, query, args, v))
}

func (t storageFullTx) Query(ctx context.Context, query string, args, v any) error {
	return MarkStorageFull(t.Tx.Query(ctx, query, args, v))
}

func (t storageFullTx) Commit() error { return MarkStorageFull(t.Tx.Commit()) }

// markStorageFullMutations marks the storage-full errors of every mutation
// of c, including those the driver reports only while its result rows are
// read (INSERT ... RETURNING).
func markStorageFullMutations(c *ent.Client) {
	c.Use(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			v, err := next.Mutate(ctx, m)
			return v, MarkStorageFull(err)
		})
	})
}
