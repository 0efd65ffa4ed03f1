package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"entgo.io/ent/dialect"
	"github.com/go-sql-driver/mysql"
	"github.com/hashicorp/go-hclog"
	"github.com/lib/pq"
	"modernc.org/sqlite"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/outage"
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

// ErrUnavailable is matched (errors.Is) by the errors of a database that
// could not be reached (see IsUnavailable). The database layer marks them
// where it sees them (the ent driver, every mutation, Ping); the central
// error handler answers them with 503 / 50003 DatabaseUnavailable and
// Retry-After, without an exception-log row.
var ErrUnavailable = errors.New("database: unavailable")

// IsUnavailable reports whether err (anywhere in its chain) says the
// database server could not be reached or cannot serve now, as opposed to
// a failed statement:
//
//   - no connection: driver.ErrBadConn, the MySQL driver's ErrInvalidConn,
//     a connection closed under the driver (EOF, reset, broken pipe), any
//     network error (dial refused or timed out, DNS);
//   - PostgreSQL: SQLSTATE class 08 (connection exception), 57P01
//     admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (the
//     server is starting or in recovery), 53300 too_many_connections;
//   - MySQL/MariaDB: 1040 too many connections, 1053 server shutdown in
//     progress, 1927 connection killed (MariaDB), and the client-side
//     2002/2003/2006/2013 (cannot connect, server has gone away, lost
//     connection) when a driver reports them as server errors.
//
// Not an outage: SQLite errors (a local file: SQLITE_BUSY after the busy
// timeout is contention, a locked or unopenable file is the operator's
// problem, not something that comes back by itself), lock-wait timeouts
// and deadlocks, a cancelled or expired caller context, and every other
// SQL error.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return false
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(string(pe.Code), "08")
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1040, 1053, 1927, 2002, 2003, 2006, 2013:
			return true
		}
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// NewTracker returns the availability tracker of the database ("database",
// 503 / 50003 DatabaseUnavailable, ErrUnavailable), logging to log.
func NewTracker(log hclog.Logger) *outage.Tracker {
	return outage.New(outage.Options{Name: "database", Code: errcode.DatabaseUnavailable, Kind: ErrUnavailable, Log: log})
}

// WithTracker makes the database report its availability to t (one WARN per
// outage, one INFO when it is back). Without it Open makes a silent one:
// the errors are marked all the same.
func WithTracker(t *outage.Tracker) Option {
	return func(o *options) { o.track = t }
}

// mark returns err marked as a full storage or an unavailable database
// (reported to t), or as is; a nil err or an answer of the server reports
// to t that the database is up for an operation begun at op.
func mark(t *outage.Tracker, op outage.Op, err error) error {
	if err == nil {
		t.Succeeded(op)
		return nil
	}
	if err = MarkStorageFull(err); IsStorageFull(err) {
		t.Succeeded(op)
		return err
	}
	if IsUnavailable(err) {
		return t.Failed(err)
	}
	var pe *pq.Error
	var me *mysql.MySQLError
	if errors.As(err, &pe) || errors.As(err, &me) {
		t.Succeeded(op)
	}
	return err
}

// storageFullDriver marks the storage-full and unavailable errors of the
// ent driver it wraps (statements, transactions and their commits) and
// reports the database's availability to track.
type storageFullDriver struct {
	dialect.Driver
	track *outage.Tracker
}

func (d storageFullDriver) Exec(ctx context.Context, query string, args, v any) error {
	op := d.track.Begin()
	return mark(d.track, op, d.Driver.Exec(ctx, query, args, v))
}

func (d storageFullDriver) Query(ctx context.Context, query string, args, v any) error {
	op := d.track.Begin()
	return mark(d.track, op, d.Driver.Query(ctx, query, args, v))
}

func (d storageFullDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	op := d.track.Begin()
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, mark(d.track, op, err)
	}
	d.track.Succeeded(op)
	return storageFullTx{tx, d.track}, nil
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
	op := d.track.Begin()
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, mark(d.track, op, err)
	}
	d.track.Succeeded(op)
	return storageFullTx{tx, d.track}, nil
}

// contexters are the database/sql-shaped methods of ent's drivers (the
// sql/execquery feature: ent.Client.QueryContext, ent.Tx.ExecContext);
// the wrappers forward them, marking errors like Exec and Query.
type contexters interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func execContext(d any, track *outage.Tracker, ctx context.Context, query string, args []any) (sql.Result, error) {
	c, ok := d.(contexters)
	if !ok {
		return nil, fmt.Errorf("database: the wrapped %T does not support ExecContext", d)
	}
	op := track.Begin()
	res, err := c.ExecContext(ctx, query, args...)
	return res, mark(track, op, err)
}

func queryContext(d any, track *outage.Tracker, ctx context.Context, query string, args []any) (*sql.Rows, error) {
	c, ok := d.(contexters)
	if !ok {
		return nil, fmt.Errorf("database: the wrapped %T does not support QueryContext", d)
	}
	op := track.Begin()
	rows, err := c.QueryContext(ctx, query, args...)
	return rows, mark(track, op, err)
}

// ExecContext forwards to the wrapped driver.
func (d storageFullDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return execContext(d.Driver, d.track, ctx, query, args)
}

// QueryContext forwards to the wrapped driver.
func (d storageFullDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return queryContext(d.Driver, d.track, ctx, query, args)
}

// ExecContext forwards to the wrapped transaction.
func (t storageFullTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return execContext(t.Tx, t.track, ctx, query, args)
}

// QueryContext forwards to the wrapped transaction.
func (t storageFullTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return queryContext(t.Tx, t.track, ctx, query, args)
}

type storageFullTx struct {
	dialect.Tx
	track *outage.Tracker
}

func (t storageFullTx) Exec(ctx context.Context, query string, args, v any) error {
	op := t.track.Begin()
	return mark(t.track, op, t.Tx.Exec(ctx, query, args, v))
}

func (t storageFullTx) Query(ctx context.Context, query string, args, v any) error {
	op := t.track.Begin()
	return mark(t.track, op, t.Tx.Query(ctx, query, args, v))
}

func (t storageFullTx) Commit() error {
	op := t.track.Begin()
	return mark(t.track, op, t.Tx.Commit())
}

// markStorageFullMutations marks the storage-full and unavailable errors of
// every mutation of c, including those the driver reports only while its
// result rows are read (INSERT ... RETURNING).
func markStorageFullMutations(c *ent.Client, track *outage.Tracker) {
	c.Use(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			v, err := next.Mutate(ctx, m)
			if err == nil {
				return v, nil
			}
			if _, marked := outage.As(err); marked {
				return v, err
			}
			return v, mark(track, 0, err)
		})
	})
}
