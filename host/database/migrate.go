package database

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	atlasmysql "ariga.io/atlas/sql/mysql"
	atlaspg "ariga.io/atlas/sql/postgres"
	atlasschema "ariga.io/atlas/sql/schema"
	atlassqlite "ariga.io/atlas/sql/sqlite"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/adminkernel/kernel/ent/migrate"
	"github.com/adminkernel/kernel/host/database/migrations"
)

// RevisionTable records the applied migration files: version, name,
// checksum, applied_at and execution_ms. The runner creates it; it is not
// part of the ent schema.
const RevisionTable = "sys_schema_revision"

// Errors of the migration runner (wrapped with the details).
var (
	// ErrChecksumMismatch: an applied file's content changed since it was applied.
	ErrChecksumMismatch = errors.New("an applied migration file was changed")
	// ErrSchemaAhead: the database has revisions this binary does not know.
	ErrSchemaAhead = errors.New("the database schema is newer than this binary")
	// ErrSchemaBehind: Production without code-first and pending files.
	ErrSchemaBehind = errors.New("the database schema is behind this binary")
	// ErrNotAdoptable: a database without revision table whose tables match no revision.
	ErrNotAdoptable = errors.New("the existing kernel tables match no migration revision")
)

// Revision is an applied migration, as recorded in sys_schema_revision.
type Revision struct {
	Version     int
	Name        string
	Checksum    string
	AppliedAt   time.Time
	ExecutionMS int64
	// CompatibleFrom is the oldest revision a binary must know to run
	// against a schema with this revision (migrations.File.CompatibleFrom,
	// recorded when it was applied; the revision itself when it was
	// recorded before the column existed).
	CompatibleFrom int
}

// MigrationStatus is where a database stands against the binary's files.
type MigrationStatus struct {
	// Applied are the recorded revisions, in version order. For a legacy
	// database (tables, no revision table) they are empty and Adopt says
	// at which revision it would be adopted.
	Applied []Revision
	// Pending are the files not applied yet, in version order.
	Pending []migrations.File
	// Legacy: kernel tables exist but no revision is recorded.
	Legacy bool
	// Adopt is the revision a legacy database matches (0 otherwise), and
	// Adoptable the files 1..Adopt whose changes its tables already have.
	Adopt     int
	Adoptable []migrations.File
	// Ahead are the recorded revisions newer than this binary's newest
	// file. The binary runs against them only when each is compatible with
	// it (CompatibleFrom at most its newest file: a rolling upgrade's
	// expand migrations); otherwise the status is ErrSchemaAhead.
	Ahead []Revision
	// noCompatColumn: the revision table predates its compatible_from
	// column (a printed script adds it first).
	noCompatColumn bool
}

// Current is the newest applied (or adoptable) revision, 0 for none.
func (s *MigrationStatus) Current() int {
	if s.Legacy {
		return s.Adopt
	}
	if len(s.Applied) == 0 {
		return 0
	}
	return s.Applied[len(s.Applied)-1].Version
}

// MigrationResult is what ApplyMigrations did.
type MigrationResult struct {
	// From is the revision before, To the revision after (0: no revision).
	From, To int
	// Applied is the number of files applied.
	Applied int
	// Adopted is the revision a legacy database was adopted at (0: none).
	Adopted int
	// Known is the binary's newest revision when the database is ahead of
	// it (a newer release's compatible migrations; 0 otherwise).
	Known int
}

// String is the one-line summary `adminkernel migrate` prints.
func (r MigrationResult) String() string {
	var b strings.Builder
	if r.Adopted > 0 {
		fmt.Fprintf(&b, "adopted the existing tables at revision %d; ", r.Adopted)
	}
	if r.Known > 0 {
		fmt.Fprintf(&b, "schema is at revision %d, newer than this binary's %d and compatible with it (a rolling upgrade); nothing to apply", r.To, r.Known)
	} else if r.Applied == 0 {
		fmt.Fprintf(&b, "schema is at revision %d; nothing to apply", r.To)
	} else {
		fmt.Fprintf(&b, "applied %d migration%s (from rev %d to %d)", r.Applied, plural(r.Applied), r.From, r.To)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// querier is what *sql.DB, *sql.Conn and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ApplyMigrations brings the database to the newest migration file: under a
// lock (PostgreSQL advisory lock, MySQL GET_LOCK, SQLite's write lock), it
// creates sys_schema_revision when missing, adopts a legacy database (kernel
// tables without revisions) at the revision its tables match, refuses a
// changed file or a revision this binary does not know, and applies the
// pending files in order, each recorded after it ran. On SQLite every file
// of the run is in one transaction, on PostgreSQL each file is one
// transaction; MySQL commits DDL statement by statement, so a file that
// fails halfway there leaves its earlier statements applied (and the file
// unrecorded) — see docs/operators/upgrade.md, "Upgrading".
func (d *DB) ApplyMigrations(ctx context.Context) (MigrationResult, error) {
	return d.ApplyMigrationsTo(ctx, 0)
}

// ApplyMigrationsTo is ApplyMigrations stopping after revision target (0:
// the newest). Upgrade tests use it to build a database of an older
// release; the kernel always applies everything.
func (d *DB) ApplyMigrationsTo(ctx context.Context, target int) (MigrationResult, error) {
	var res MigrationResult
	files, err := migrations.For(d.Dialect)
	if err != nil {
		return res, err
	}
	if target < 0 || target > len(files) {
		return res, fmt.Errorf("migrate: no revision %d (this binary has 1-%d)", target, len(files))
	}
	conn, err := d.SQL.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	defer func() { _ = conn.Close() }()
	unlock, err := d.lockMigrations(ctx, conn)
	if err != nil {
		return res, err
	}
	defer unlock()

	var q querier = conn
	var sqliteTx *sql.Tx
	if d.Dialect == dialect.SQLite {
		// _txlock=immediate: BEGIN IMMEDIATE takes the write lock now, so
		// a second migrator waits here and then sees the recorded files.
		if sqliteTx, err = conn.BeginTx(ctx, nil); err != nil {
			return res, fmt.Errorf("migrate: begin: %w", err)
		}
		defer func() { _ = sqliteTx.Rollback() }()
		q = sqliteTx
	}
	if _, err := q.ExecContext(ctx, revisionTableDDL(d.Dialect)); err != nil {
		return res, fmt.Errorf("migrate: create %s: %w", RevisionTable, err)
	}
	has, err := hasCompatColumn(ctx, q, d.Dialect)
	if err != nil {
		return res, err
	}
	if !has {
		if _, err := q.ExecContext(ctx, compatColumnDDL(d.Dialect)); err != nil {
			return res, fmt.Errorf("migrate: add %s.compatible_from: %w", RevisionTable, err)
		}
	}
	st, err := d.status(ctx, q, files, true)
	if err != nil {
		return res, err
	}
	if len(st.Ahead) > 0 {
		res.From, res.To, res.Known = st.Current(), st.Current(), len(files)
		d.log.Warn("the database schema is newer than this binary and compatible with it: finish the rolling upgrade",
			"revision", st.Current(), "binaryRevision", len(files))
		return res, nil
	}
	if st.Legacy {
		for _, f := range st.Adoptable {
			// The tables have the file's changes; its data step may not
			// have run (tables made by hand): after-steps are idempotent.
			if _, after := dataSteps(f.Version); after != nil {
				if err := after(ctx, d, q); err != nil {
					return res, fmt.Errorf("migrate: adopt %04d_%s: %w", f.Version, f.Name, err)
				}
			}
			if err := d.record(ctx, q, f, 0); err != nil {
				return res, err
			}
		}
		d.log.Info("adopted the existing kernel tables (created before versioned migrations)",
			"revision", st.Adopt, "name", files[st.Adopt-1].Name)
		res.Adopted = st.Adopt
	}
	res.From = st.Current()
	res.To = res.From
	for _, f := range st.Pending {
		if target > 0 && f.Version > target {
			break
		}
		if err := d.applyFile(ctx, conn, q, sqliteTx != nil, f); err != nil {
			return res, err
		}
		res.Applied++
		res.To = f.Version
	}
	if sqliteTx != nil {
		if err := sqliteTx.Commit(); err != nil {
			return res, fmt.Errorf("migrate: commit: %w", err)
		}
	}
	return res, nil
}

// MigrationStatus reads where the database stands; it writes nothing to the
// database (adopting a legacy database is only decided, see
// ApplyMigrations; deciding it for an older revision on PostgreSQL or MySQL
// uses a scratch schema or database that is dropped again).
func (d *DB) MigrationStatus(ctx context.Context) (*MigrationStatus, error) {
	files, err := migrations.For(d.Dialect)
	if err != nil {
		return nil, err
	}
	conn, err := d.SQL.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	defer func() { _ = conn.Close() }()
	return d.status(ctx, conn, files, false)
}

// WritePending writes to w the SQL `adminkernel migrate` would run
// (`adminkernel migrate --print`): the revision table when it is missing,
// then each pending file preceded by a comment naming it and followed by the
// INSERT that records it, so a script applied by hand leaves the database
// at the same recorded revision as the command. A legacy database gets the
// INSERTs of the revisions it would be adopted at. Nothing is written to the
// database. Go data steps (dataSteps) are named in a comment; the one of
// 0002 (filling sys_user.account_norm) also runs at every Production start.
func (d *DB) WritePending(ctx context.Context, w io.Writer) error {
	st, err := d.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if len(st.Pending) == 0 && !st.Legacy {
		fmt.Fprintf(&b, "-- schema is at revision %d; nothing to apply\n", st.Current())
	} else {
		fmt.Fprintf(&b, "%s;\n", revisionTableDDL(d.Dialect))
		if st.noCompatColumn {
			fmt.Fprintf(&b, "%s;\n", compatColumnDDL(d.Dialect))
		}
	}
	if st.Legacy {
		fmt.Fprintf(&b, "-- the existing tables match revision %d: record revisions 1-%d without running them\n", st.Adopt, st.Adopt)
		for _, f := range st.Adoptable {
			fmt.Fprintf(&b, "%s;\n", recordSQL(f))
		}
	}
	for _, f := range st.Pending {
		writeFile(&b, f)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// WriteAllMigrations writes every migration file of the DbType's dialect,
// in order, each followed by the INSERT that records it, after the revision
// table's CREATE, without connecting anywhere (`adminkernel migrate --print
// --offline`): the full DDL of an empty database.
func WriteAllMigrations(dbType string, w io.Writer) error {
	canonical, err := canonicalDbType(dbType)
	if err != nil {
		return err
	}
	entDialect := entDialectOf(canonical)
	files, err := migrations.For(entDialect)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "-- the kernel's schema for %s: every migration, each recorded in %s\n%s;\n", canonical, RevisionTable, revisionTableDDL(entDialect))
	for _, f := range files {
		writeFile(&b, f)
	}
	_, err = w.Write(b.Bytes())
	return err
}

func writeFile(b *bytes.Buffer, f migrations.File) {
	fmt.Fprintf(b, "-- migration %04d_%s\n", f.Version, f.Name)
	if note := dataStepNote(f.Version); note != "" {
		fmt.Fprintf(b, "-- %s\n", note)
	}
	b.Write(f.SQL)
	if len(f.SQL) > 0 && f.SQL[len(f.SQL)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "%s;\n", recordSQL(f))
}

// recordSQL is the INSERT recording f, for printed scripts (names are
// [a-z0-9_], checksums hex: nothing to escape).
func recordSQL(f migrations.File) string {
	return fmt.Sprintf("INSERT INTO %s (version, name, checksum, applied_at, execution_ms, compatible_from) VALUES (%d, '%s', '%s', CURRENT_TIMESTAMP, 0, %d)",
		RevisionTable, f.Version, f.Name, f.Checksum, f.CompatibleFrom)
}

// status reads the recorded revisions and compares them with files. When
// the database has kernel tables and no revisions, it decides the adoption.
// tableExists tells whether the revision table is known to exist.
func (d *DB) status(ctx context.Context, q querier, files []migrations.File, tableExists bool) (*MigrationStatus, error) {
	st := &MigrationStatus{}
	if !tableExists {
		has, err := hasTable(ctx, q, d.Dialect, RevisionTable)
		if err != nil {
			return nil, err
		}
		tableExists = has
	}
	if tableExists {
		withCompat, err := hasCompatColumn(ctx, q, d.Dialect)
		if err != nil {
			return nil, err
		}
		st.noCompatColumn = !withCompat
		applied, err := readRevisions(ctx, q, withCompat)
		if err != nil {
			return nil, err
		}
		st.Applied = applied
	}
	if len(st.Applied) == 0 {
		has, err := hasTable(ctx, q, d.Dialect, MarkerTable)
		if err != nil {
			return nil, err
		}
		if has {
			adopt, err := d.adoptable(ctx, q, files)
			if err != nil {
				return nil, err
			}
			st.Legacy, st.Adopt = true, adopt
			st.Adoptable, st.Pending = files[:adopt], files[adopt:]
			return st, nil
		}
		st.Pending = files
		return st, nil
	}
	known := len(files)
	var ahead []string
	for i, r := range st.Applied {
		if r.Version > known {
			st.Ahead = append(st.Ahead, r)
			if r.CompatibleFrom > known {
				ahead = append(ahead, fmt.Sprintf("%04d_%s (applied %s, needs a binary that knows revision %d)",
					r.Version, r.Name, r.AppliedAt.UTC().Format(time.RFC3339), r.CompatibleFrom))
			}
			continue
		}
		f := files[r.Version-1]
		if r.Version != i+1 {
			return nil, fmt.Errorf("migrate: %s lists revision %d at position %d: the table was edited by hand", RevisionTable, r.Version, i+1)
		}
		if r.Checksum != f.Checksum {
			return nil, fmt.Errorf("%w: revision %04d_%s was applied with checksum %s, the file in this binary has %s. "+
				"An applied migration must never change: restore the file, or add the change as a new migration",
				ErrChecksumMismatch, r.Version, r.Name, r.Checksum, f.Checksum)
		}
	}
	if len(ahead) > 0 {
		return nil, fmt.Errorf("%w: the database (%s %s) has revision%s %s that this binary (newest revision %d) does not know: "+
			"run the binary that applied them (or a newer one); an older binary runs against a newer schema only across "+
			"compatible (expand) migrations (docs/operators/upgrade.md, \"Rolling upgrades\")",
			ErrSchemaAhead, d.DbType, d.Target, plural(len(ahead)), strings.Join(ahead, ", "), known)
	}
	if len(st.Ahead) > 0 {
		return st, nil
	}
	st.Pending = files[len(st.Applied):]
	return st, nil
}

// adoptable returns the newest revision whose schema the existing kernel
// tables match: the newest when ent finds nothing to change, otherwise the
// newest older revision whose files, applied to a scratch database, leave
// no difference (Atlas diff) from the tables.
func (d *DB) adoptable(ctx context.Context, q querier, files []migrations.File) (int, error) {
	var plan bytes.Buffer
	drv := entsql.NewDriver(d.Dialect, entsql.Conn{ExecQuerier: q})
	if err := migrate.NewSchema(drv).WriteTo(ctx, &plan, migrateOptions...); err != nil {
		return 0, fmt.Errorf("migrate: compare the tables with the schema: %w", err)
	}
	if strings.TrimSpace(plan.String()) == "" {
		return len(files), nil
	}
	match, diffs, err := d.diffRevisions(ctx, q, files[:len(files)-1])
	if err != nil {
		return 0, err
	}
	if match > 0 {
		return match, nil
	}
	var nearest string
	if r := len(diffs); r > 0 {
		nearest = fmt.Sprintf("revision %d would need:\n%s", r, diffs[r-1])
	}
	return 0, fmt.Errorf("%w (%s %s): the tables were created without versioned migrations and differ from every revision; "+
		"the newest revision (%d) would need:\n%s\n%s\nbring the tables to one revision by hand, then run `adminkernel migrate`",
		ErrNotAdoptable, d.DbType, d.Target, len(files), strings.TrimSpace(plan.String()), nearest)
}

// applyFile runs one file: the data step before, its statements, the data
// step after, and its revision row. inTx: q is already the run's
// transaction (SQLite); otherwise PostgreSQL gets a transaction per file
// and MySQL runs on the connection.
func (d *DB) applyFile(ctx context.Context, conn *sql.Conn, q querier, inTx bool, f migrations.File) error {
	stmts, err := f.Statements()
	if err != nil {
		return err
	}
	var tx *sql.Tx
	if !inTx && d.Dialect == dialect.Postgres {
		if tx, err = conn.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("migrate %s: begin: %w", f.Path, err)
		}
		defer func() { _ = tx.Rollback() }()
		q = tx
	}
	start := time.Now()
	before, after := dataSteps(f.Version)
	if before != nil {
		if err := before(ctx, d, q); err != nil {
			return fmt.Errorf("migrate %04d_%s: %w", f.Version, f.Name, err)
		}
	}
	for i, s := range stmts {
		if _, err := q.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("migrate %04d_%s, statement %d of %d (%s): %w", f.Version, f.Name, i+1, len(stmts), clip(s), err)
		}
	}
	if after != nil {
		if err := after(ctx, d, q); err != nil {
			return fmt.Errorf("migrate %04d_%s: %w", f.Version, f.Name, err)
		}
	}
	elapsed := time.Since(start)
	if err := d.record(ctx, q, f, elapsed.Milliseconds()); err != nil {
		return err
	}
	if tx != nil {
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: commit: %w", f.Path, err)
		}
	}
	d.log.Info("migration applied", "version", f.Version, "name", f.Name, "statements", len(stmts), "ms", elapsed.Milliseconds())
	return nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// record inserts the revision row of f.
func (d *DB) record(ctx context.Context, q querier, f migrations.File, ms int64) error {
	query := "INSERT INTO " + RevisionTable + " (version, name, checksum, applied_at, execution_ms, compatible_from) VALUES (?, ?, ?, ?, ?, ?)"
	if d.Dialect == dialect.Postgres {
		query = "INSERT INTO " + RevisionTable + " (version, name, checksum, applied_at, execution_ms, compatible_from) VALUES ($1, $2, $3, $4, $5, $6)"
	}
	if _, err := q.ExecContext(ctx, query, f.Version, f.Name, f.Checksum, time.Now().UTC(), ms, f.CompatibleFrom); err != nil {
		return fmt.Errorf("migrate: record revision %04d_%s: %w", f.Version, f.Name, err)
	}
	return nil
}

// readRevisions reads the recorded revisions; withCompat: the table has
// its compatible_from column (a revision without a value is compatible
// only with binaries that know it).
func readRevisions(ctx context.Context, q querier, withCompat bool) ([]Revision, error) {
	compat := "NULL"
	if withCompat {
		compat = "compatible_from"
	}
	rows, err := q.QueryContext(ctx, "SELECT version, name, checksum, applied_at, execution_ms, "+compat+" FROM "+RevisionTable+" ORDER BY version")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", RevisionTable, err)
	}
	defer func() { _ = rows.Close() }()
	var out []Revision
	for rows.Next() {
		var (
			r    Revision
			from sql.NullInt64
		)
		if err := rows.Scan(&r.Version, &r.Name, &r.Checksum, &r.AppliedAt, &r.ExecutionMS, &from); err != nil {
			return nil, fmt.Errorf("read %s: %w", RevisionTable, err)
		}
		r.CompatibleFrom = r.Version
		if from.Valid {
			r.CompatibleFrom = int(from.Int64)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// hasCompatColumn reports whether the revision table has its
// compatible_from column (added after the table; a database migrated only
// by older binaries lacks it).
func hasCompatColumn(ctx context.Context, q querier, entDialect string) (bool, error) {
	var query string
	switch entDialect {
	case dialect.SQLite:
		query = "SELECT COUNT(*) FROM pragma_table_info('" + RevisionTable + "') WHERE name = 'compatible_from'"
	case dialect.MySQL:
		query = "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '" + RevisionTable + "' AND column_name = 'compatible_from'"
	case dialect.Postgres:
		query = "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '" + RevisionTable + "' AND column_name = 'compatible_from'"
	default:
		return false, fmt.Errorf("unsupported dialect %q", entDialect)
	}
	var n int
	if err := q.QueryRowContext(ctx, query).Scan(&n); err != nil {
		return false, fmt.Errorf("check %s.compatible_from: %w", RevisionTable, err)
	}
	return n > 0, nil
}

// compatColumnDDL adds the compatible_from column to a revision table
// created before it.
func compatColumnDDL(entDialect string) string {
	if entDialect == dialect.SQLite {
		return "ALTER TABLE " + RevisionTable + " ADD COLUMN compatible_from integer NULL"
	}
	return "ALTER TABLE " + RevisionTable + " ADD COLUMN compatible_from bigint NULL"
}

// revisionTableDDL is the runner's own bookkeeping table (not part of the
// ent schema, so not in the migration files).
func revisionTableDDL(entDialect string) string {
	switch entDialect {
	case dialect.Postgres:
		return "CREATE TABLE IF NOT EXISTS " + RevisionTable + " (version bigint NOT NULL PRIMARY KEY, name varchar(255) NOT NULL, " +
			"checksum varchar(64) NOT NULL, applied_at timestamptz NOT NULL, execution_ms bigint NOT NULL, compatible_from bigint NULL)"
	case dialect.MySQL:
		return "CREATE TABLE IF NOT EXISTS " + RevisionTable + " (version bigint NOT NULL PRIMARY KEY, name varchar(255) NOT NULL, " +
			"checksum varchar(64) NOT NULL, applied_at datetime(6) NOT NULL, execution_ms bigint NOT NULL, compatible_from bigint NULL) CHARSET utf8mb4 COLLATE utf8mb4_bin"
	default:
		return "CREATE TABLE IF NOT EXISTS " + RevisionTable + " (version integer NOT NULL PRIMARY KEY, name text NOT NULL, " +
			"checksum text NOT NULL, applied_at datetime NOT NULL, execution_ms integer NOT NULL, compatible_from integer NULL)"
	}
}

// migrationLockName names the lock that serialises migrators of one
// database (MySQL locks are server-wide: the database name is part of it).
const migrationLockName = "adminkernel.migrate"

// migrationLockKey is the PostgreSQL advisory lock key (advisory locks are
// per database): the bytes "akmigrat".
const migrationLockKey int64 = 0x616b6d6967726174

// lockMigrations takes the migration lock on conn (PostgreSQL, MySQL); on
// SQLite the run's BEGIN IMMEDIATE transaction is the lock.
func (d *DB) lockMigrations(ctx context.Context, conn *sql.Conn) (func(), error) {
	switch d.Dialect {
	case dialect.Postgres:
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
			return nil, fmt.Errorf("migrate: take the migration lock (pg_advisory_lock): %w", err)
		}
		return func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockKey)
		}, nil
	case dialect.MySQL:
		var got sql.NullInt64
		err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(LEFT(CONCAT(?, ':', COALESCE(DATABASE(), '')), 64), 600)", migrationLockName).Scan(&got)
		if err != nil {
			return nil, fmt.Errorf("migrate: take the migration lock (GET_LOCK): %w", err)
		}
		if !got.Valid || got.Int64 != 1 {
			return nil, errors.New("migrate: another migrator held the migration lock (GET_LOCK) for 10 minutes; try again when it is done")
		}
		return func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(LEFT(CONCAT(?, ':', COALESCE(DATABASE(), '')), 64))", migrationLockName)
		}, nil
	default:
		return func() {}, nil
	}
}

// hasTable reports whether table exists in the connection's current
// database / schema.
func hasTable(ctx context.Context, q querier, entDialect, table string) (bool, error) {
	var query string
	switch entDialect {
	case dialect.SQLite:
		query = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	case dialect.MySQL:
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	case dialect.Postgres:
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1"
	default:
		return false, fmt.Errorf("unsupported dialect %q", entDialect)
	}
	var n int
	if err := q.QueryRowContext(ctx, query, table).Scan(&n); err != nil {
		return false, fmt.Errorf("check for table %s: %w", table, err)
	}
	return n > 0, nil
}

// diffRevisions applies the files one after another to one scratch
// database of the same dialect (SQLite: in memory; PostgreSQL: a scratch
// schema in the same database; MySQL: a scratch database on the same
// server) and compares the existing kernel tables with the scratch schema
// after each: diffs[r-1] is the SQL that would turn the tables into
// revision r ("" when they match), and match the newest revision they
// match (0: none). A file without statements leaves the revision's schema
// as the one before it (its diff is repeated, not recomputed). Tables the
// revisions do not have (an application's own, the revision table) are
// left out of the comparison.
func (d *DB) diffRevisions(ctx context.Context, q querier, files []migrations.File) (match int, diffs []string, err error) {
	live, err := openAtlas(d.Dialect, q)
	if err != nil {
		return 0, nil, err
	}
	current, err := live.InspectSchema(ctx, "", nil)
	if err != nil {
		return 0, nil, fmt.Errorf("migrate: inspect the tables: %w", err)
	}
	err = d.withScratch(ctx, func(sq querier, name string) error {
		scratch, err := openAtlas(d.Dialect, sq)
		if err != nil {
			return err
		}
		for i, f := range files {
			stmts, err := f.Statements()
			if err != nil {
				return err
			}
			for _, s := range stmts {
				if _, err := sq.ExecContext(ctx, s); err != nil {
					return fmt.Errorf("migrate: replay %s on a scratch database: %w", f.Path, err)
				}
			}
			if len(stmts) == 0 && i > 0 {
				diffs = append(diffs, diffs[i-1])
			} else {
				want, err := scratch.InspectSchema(ctx, name, nil)
				if err != nil {
					return fmt.Errorf("migrate: inspect the scratch database: %w", err)
				}
				diff, err := diffSchemas(ctx, live, current, want, f.Version)
				if err != nil {
					return err
				}
				diffs = append(diffs, diff)
			}
			if diffs[i] == "" {
				match = f.Version
			}
		}
		return nil
	})
	return match, diffs, err
}

// diffSchemas returns the SQL that would turn current into want, revision
// r ("" when they match), comparing only the tables want has. current is
// prepared for the comparison in place (its name is want's, its realm,
// attributes and objects are dropped: the same for every revision); its
// table list is narrowed on a copy.
func diffSchemas(ctx context.Context, live atlasmigrate.Driver, current, want *atlasschema.Schema, r int) (string, error) {
	current.Views, current.Funcs, current.Procs, current.Objects = nil, nil, nil, nil
	want.Views, want.Funcs, want.Procs, want.Objects = nil, nil, nil, nil
	current.Name = want.Name
	current.Attrs, want.Attrs = nil, nil
	current.Realm, want.Realm = nil, nil
	keep := map[string]bool{}
	for _, t := range want.Tables {
		keep[t.Name] = true
	}
	narrowed := *current
	narrowed.Tables = nil
	for _, t := range current.Tables {
		if keep[t.Name] {
			narrowed.Tables = append(narrowed.Tables, t)
		}
	}
	changes, err := live.SchemaDiff(&narrowed, want)
	if err != nil {
		return "", fmt.Errorf("migrate: compare the tables with revision %d: %w", r, err)
	}
	if len(changes) == 0 {
		return "", nil
	}
	plan, err := live.PlanChanges(ctx, "diff", changes)
	if err != nil {
		return fmt.Sprintf("%d differences", len(changes)), nil //nolint:nilerr // the differences are the answer; their SQL is only a description
	}
	var b strings.Builder
	for _, c := range plan.Changes {
		fmt.Fprintf(&b, "%s;\n", c.Cmd)
	}
	return strings.TrimSpace(b.String()), nil
}

func openAtlas(entDialect string, q querier) (atlasmigrate.Driver, error) {
	var (
		drv atlasmigrate.Driver
		err error
	)
	switch entDialect {
	case dialect.SQLite:
		drv, err = atlassqlite.Open(q)
	case dialect.Postgres:
		drv, err = atlaspg.Open(q)
	case dialect.MySQL:
		drv, err = atlasmysql.Open(q)
	default:
		err = fmt.Errorf("unsupported dialect %q", entDialect)
	}
	if err != nil {
		return nil, fmt.Errorf("migrate: open the schema inspector: %w", err)
	}
	return drv, nil
}

// withScratch runs fn on an empty scratch database of the same dialect and
// removes it afterwards. name is the schema name to inspect.
func (d *DB) withScratch(ctx context.Context, fn func(q querier, name string) error) error {
	switch d.Dialect {
	case dialect.SQLite:
		db, err := sql.Open("sqlite", SqliteDSN(memoryPath))
		if err != nil {
			return fmt.Errorf("migrate: scratch database: %w", err)
		}
		db.SetMaxOpenConns(1)
		defer func() { _ = db.Close() }()
		return fn(db, "main")
	case dialect.Postgres, dialect.MySQL:
		conn, err := d.SQL.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrate: scratch database: %w", err)
		}
		defer func() { _ = conn.Close() }()
		name := scratchName()
		var create, use, drop, back string
		if d.Dialect == dialect.Postgres {
			create = "CREATE SCHEMA " + name
			use = "SET search_path TO " + name
			drop = "DROP SCHEMA IF EXISTS " + name + " CASCADE"
			back = "RESET search_path"
		} else {
			var current sql.NullString
			if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&current); err != nil {
				return fmt.Errorf("migrate: scratch database: %w", err)
			}
			create = "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
			use = "USE " + name
			drop = "DROP DATABASE IF EXISTS " + name
			back = "USE `" + strings.ReplaceAll(current.String, "`", "``") + "`"
		}
		if _, err := conn.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("migrate: deciding which revision the existing tables match needs a scratch %s (%s): %w; "+
				"grant the privilege for the upgrade, or run `adminkernel migrate` as a user who has it",
				map[bool]string{true: "schema", false: "database"}[d.Dialect == dialect.Postgres], create, err)
		}
		cleanup := context.WithoutCancel(ctx)
		defer func() {
			_, _ = conn.ExecContext(cleanup, back)
			if _, err := conn.ExecContext(cleanup, drop); err != nil {
				d.log.Warn("could not drop the scratch schema; drop it by hand", "name", name, "error", err)
			}
		}()
		if _, err := conn.ExecContext(ctx, use); err != nil {
			return fmt.Errorf("migrate: scratch database: %w", err)
		}
		return fn(conn, name)
	}
	return fmt.Errorf("unsupported dialect %q", d.Dialect)
}

func scratchName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ak_scratch_" + hex.EncodeToString(b[:])
}

func entDialectOf(dbType string) string {
	switch dbType {
	case "PostgreSQL":
		return dialect.Postgres
	case "MySql":
		return dialect.MySQL
	default:
		return dialect.SQLite
	}
}
