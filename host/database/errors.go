package database

import (
	"errors"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
	"modernc.org/sqlite"
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
