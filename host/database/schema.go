package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"entgo.io/ent/dialect/sql/schema"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/migrate"
	"github.com/adminkernel/kernel/host/database/migrations"
)

// MarkerTable is the table whose presence means "the kernel's schema exists".
const MarkerTable = "sys_user"

// ErrSchemaMissing is returned (wrapped) by EnsureSchema in Production when
// the tables do not exist and automatic creation is not allowed.
var ErrSchemaMissing = errors.New("the database has no kernel tables")

// migrateOptions never drop anything: columns and indexes that the schema no
// longer declares are left in place.
var migrateOptions = []schema.MigrateOption{
	migrate.WithDropColumn(false),
	migrate.WithDropIndex(false),
}

// HasTables reports whether the kernel's tables exist (checks sys_user in the
// connection's current database / schema).
func (d *DB) HasTables(ctx context.Context) (bool, error) {
	return hasTable(ctx, d.SQL, d.Dialect, MarkerTable)
}

// Migrate applies the pending migration files (ApplyMigrations) and logs
// what it did. It never drops columns, indexes or tables.
func (d *DB) Migrate(ctx context.Context) error {
	res, err := d.ApplyMigrations(ctx)
	if err != nil {
		return fmt.Errorf("migrate the %s schema: %w", d.DbType, err)
	}
	d.log.Info(res.String(), "dbType", d.DbType, "revision", res.To)
	return nil
}

// WriteDDL writes to w the statements ent's auto-migration would still run
// to bring this database to the ent schema, without running them: nothing
// when the schema is up to date. The migration files are generated from
// exactly this difference (migrations/gen), and the drift check (make
// verify) asks it of a database with every file applied. The database is
// only read (catalog inspection through ent's schema.WriteDriver). Each
// statement ends with ";" and a newline.
func (d *DB) WriteDDL(ctx context.Context, w io.Writer) error {
	if err := d.Client.Schema.WriteTo(ctx, w, migrateOptions...); err != nil {
		return fmt.Errorf("plan the %s schema: %w", d.DbType, err)
	}
	return nil
}

// EnsureSchema applies the schema policy at startup:
//
//   - any environment: refuse a database whose revisions this binary does
//     not know (ErrSchemaAhead) or whose applied files changed
//     (ErrChecksumMismatch);
//   - outside Production (Development, Staging), and in Production with
//     Service:Database:EnableCodeFirstInProduction: apply the pending
//     migration files (the path of `adminkernel migrate`);
//   - Production otherwise: start when nothing is pending; refuse with
//     ErrSchemaMissing (no tables) or ErrSchemaBehind (pending files, listed)
//     naming `adminkernel migrate`.
func EnsureSchema(ctx context.Context, cfg *config.Config, db *DB) error {
	codeFirst := cfg.Service.Database.EnableCodeFirstInProduction
	if !cfg.IsProduction() || codeFirst {
		res, err := db.ApplyMigrations(ctx)
		if err != nil {
			return fmt.Errorf("migrate the %s schema: %w", db.DbType, err)
		}
		if res.Applied > 0 || res.Adopted > 0 {
			db.log.Info(res.String(), "environment", cfg.Environment, "codeFirstInProduction", codeFirst)
		} else {
			db.log.Debug(res.String(), "environment", cfg.Environment)
		}
		return nil
	}
	st, err := db.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	switch {
	case len(st.Pending) == 0:
		if len(st.Ahead) > 0 {
			db.log.Warn("the database schema is newer than this binary and compatible with it: finish the rolling upgrade",
				"revision", st.Current(), "binaryRevision", st.Current()-len(st.Ahead))
		}
		if st.Legacy {
			db.log.Warn("the tables match the newest migration but no revision is recorded; `adminkernel migrate` records it",
				"revision", st.Adopt)
		}
		// A script from `adminkernel migrate --print` applied by hand lacks
		// the Go data step of 0002: fill sys_user.account_norm here (it
		// touches only rows where it is NULL).
		if err := db.backfillAccountNorm(ctx, db.SQL); err != nil {
			db.log.Warn("could not fill sys_user.account_norm; run `adminkernel migrate`", "error", err)
		}
		return nil
	case !st.Legacy && len(st.Applied) == 0:
		return fmt.Errorf("%w (%s, %s) and tables are not created automatically in the %s environment: "+
			"either set Service:Database:EnableCodeFirstInProduction=true (environment variable "+
			"Service__Database__EnableCodeFirstInProduction=true) to let the service create them, "+
			"or create them by hand: `adminkernel migrate --print` prints the DDL to run, "+
			"`adminkernel migrate` applies it",
			ErrSchemaMissing, db.DbType, db.Target, cfg.Environment)
	default:
		names := make([]string, len(st.Pending))
		for i, f := range st.Pending {
			names[i] = fmt.Sprintf("%04d_%s", f.Version, f.Name)
		}
		return fmt.Errorf("%w (%s, %s): the database is at revision %d and %d migration%s pending (%s); "+
			"migrations are not applied automatically in the %s environment: run `adminkernel migrate` "+
			"(`adminkernel migrate --print` prints the SQL first), or set Service:Database:EnableCodeFirstInProduction=true",
			ErrSchemaBehind, db.DbType, db.Target, st.Current(), len(st.Pending), map[bool]string{true: " is", false: "s are"}[len(st.Pending) == 1],
			strings.Join(names, ", "), cfg.Environment)
	}
}

// PrintDDL writes the SQL that `adminkernel migrate` would run on the
// configured database (`adminkernel migrate --print`): the pending migration
// files, read from sys_schema_revision; nothing is written to the database.
// For SQLite, when the file does not exist yet, every file is printed and
// no file or directory is created.
func PrintDDL(ctx context.Context, cfg *config.Config, w io.Writer) error {
	dbType, err := canonicalDbType(cfg.Service.Database.DbType)
	if err != nil {
		return err
	}
	if dbType == config.DBSqlite {
		exists, err := sqliteFileExists(cfg)
		if err != nil {
			return err
		}
		if !exists {
			return WriteAllMigrations(dbType, w)
		}
	}
	db, err := Open(ctx, cfg, nil)
	if err != nil {
		return err
	}
	err = db.WritePending(ctx, w)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadMigrationStatus reports where the configured database stands against
// the migration files (`adminkernel migrate status`) without writing to it.
// A SQLite file that does not exist yet is not created: every file is
// pending.
func ReadMigrationStatus(ctx context.Context, cfg *config.Config) (*MigrationStatus, error) {
	dbType, err := canonicalDbType(cfg.Service.Database.DbType)
	if err != nil {
		return nil, err
	}
	if dbType == config.DBSqlite {
		exists, err := sqliteFileExists(cfg)
		if err != nil {
			return nil, err
		}
		if !exists {
			files, err := migrations.For(entDialectOf(dbType))
			if err != nil {
				return nil, err
			}
			return &MigrationStatus{Pending: files}, nil
		}
	}
	db, err := Open(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	st, err := db.MigrationStatus(ctx)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// sqliteFileExists reports whether the configured SQLite file exists.
func sqliteFileExists(cfg *config.Config) (bool, error) {
	conn := strings.TrimSpace(cfg.Service.Database.ConnectionString.Reveal())
	if conn == "" {
		conn = config.Defaults().Service.Database.ConnectionString.Reveal()
	}
	source, err := sqliteSource(conn)
	if err != nil {
		return false, err
	}
	path, err := resolveSqlitePath(source, cfg.ContentRoot)
	if err != nil {
		return false, err
	}
	if path == memoryPath {
		return false, nil
	}
	switch _, err := os.Stat(path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}
