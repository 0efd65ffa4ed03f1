package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/migrate"
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
	var query string
	switch d.Dialect {
	case dialect.SQLite:
		query = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	case dialect.MySQL:
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	case dialect.Postgres:
		query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1"
	default:
		return false, fmt.Errorf("HasTables: unsupported dialect %q", d.Dialect)
	}
	var n int
	if err := d.SQL.QueryRowContext(ctx, query, MarkerTable).Scan(&n); err != nil {
		return false, fmt.Errorf("check for table %s: %w", MarkerTable, err)
	}
	return n > 0, nil
}

// Migrate creates missing tables, columns and indexes and alters changed
// columns (ent auto-migration). It never drops columns, indexes or tables.
//
// Before changing anything it checks that no two live users have accounts
// that differ only in case (ErrAccountCaseDuplicates names them); after the
// change it fills sys_user.account_norm of older rows.
func (d *DB) Migrate(ctx context.Context) error {
	if err := d.checkAccountCase(ctx); err != nil {
		return fmt.Errorf("migrate the %s schema: %w", d.DbType, err)
	}
	if err := d.Client.Schema.Create(ctx, migrateOptions...); err != nil {
		return fmt.Errorf("migrate the %s schema: %w", d.DbType, err)
	}
	if err := d.backfillAccountNorm(ctx); err != nil {
		return fmt.Errorf("migrate the %s schema: %w", d.DbType, err)
	}
	return nil
}

// WriteDDL writes to w the statements Migrate would run on this database,
// without running them: against an empty database, every CREATE TABLE and
// CREATE INDEX of the kernel's schema in the configured dialect; against an
// up-to-date database, nothing. The database is only read (catalog
// inspection through ent's schema.WriteDriver, whose Exec goes to w); it is
// never written. Each statement ends with ";" and a newline.
func (d *DB) WriteDDL(ctx context.Context, w io.Writer) error {
	if err := d.Client.Schema.WriteTo(ctx, w, migrateOptions...); err != nil {
		return fmt.Errorf("plan the %s schema: %w", d.DbType, err)
	}
	return nil
}

// EnsureSchema applies the schema policy at startup:
//
//   - outside Production (Development, Staging): Migrate;
//   - Production with the tables present: Migrate only when
//     Service:Database:EnableCodeFirstInProduction is true, otherwise leave
//     the schema alone;
//   - Production without the tables: Migrate when EnableCodeFirstInProduction
//     is true, otherwise fail with ErrSchemaMissing naming both ways out.
func EnsureSchema(ctx context.Context, cfg *config.Config, db *DB) error {
	codeFirst := cfg.Service.Database.EnableCodeFirstInProduction
	if !cfg.IsProduction() {
		db.log.Debug("migrating the schema", "environment", cfg.Environment)
		return db.Migrate(ctx)
	}
	has, err := db.HasTables(ctx)
	if err != nil {
		return err
	}
	switch {
	case codeFirst:
		db.log.Info("migrating the schema (EnableCodeFirstInProduction)", "tablesExisted", has)
		return db.Migrate(ctx)
	case has:
		db.log.Debug("schema present; automatic migration is off in Production")
		// Tables created or updated by hand (`adminkernel migrate --print`)
		// lack the data step of Migrate: fill sys_user.account_norm here.
		if err := db.backfillAccountNorm(ctx); err != nil {
			db.log.Warn("could not fill sys_user.account_norm; run `adminkernel migrate`", "error", err)
		}
		return nil
	default:
		return fmt.Errorf("%w (%s, %s) and tables are not created automatically in the %s environment: "+
			"either set Service:Database:EnableCodeFirstInProduction=true (environment variable "+
			"Service__Database__EnableCodeFirstInProduction=true) to let the service create them, "+
			"or create them by hand: `adminkernel migrate --print` prints the DDL to run, "+
			"`adminkernel migrate` applies it",
			ErrSchemaMissing, db.DbType, db.Target, cfg.Environment)
	}
}

// PrintDDL writes the DDL that `adminkernel migrate` would run on the
// configured database, without changing that database (`adminkernel migrate
// --print`). For a server database it connects and inspects the catalog
// read-only (see WriteDDL): an empty database gets the full CREATE script.
// For SQLite, an existing file is inspected the same way; when the file does
// not exist yet, the script is planned against an empty in-memory database so
// that no file or directory is created.
func PrintDDL(ctx context.Context, cfg *config.Config, w io.Writer) error {
	target := cfg
	if dbType, err := canonicalDbType(cfg.Service.Database.DbType); err != nil {
		return err
	} else if dbType == config.DBSqlite {
		exists, err := sqliteFileExists(cfg)
		if err != nil {
			return err
		}
		if !exists {
			c := *cfg
			c.Service.Database.DbType = config.DBSqlite
			c.Service.Database.ConnectionString = "Data Source=" + memoryPath
			target = &c
		}
	}
	db, err := Open(ctx, target, nil)
	if err != nil {
		return err
	}
	err = db.WriteDDL(ctx, w)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
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
