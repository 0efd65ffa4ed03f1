// Package database opens the kernel's database (SQLite, MySQL/MariaDB or
// PostgreSQL) from Service:Database, hands out the ent client, and owns the
// schema: the versioned migration files of ./migrations applied in order and
// recorded in sys_schema_revision (ApplyMigrations, behind `adminkernel
// migrate`), the adoption of databases created before them, and the startup
// policy (EnsureSchema: automatic outside Production, explicit opt-in or
// `adminkernel migrate` in Production).
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/go-sql-driver/mysql"
	"github.com/hashicorp/go-hclog"
	"github.com/lib/pq"
	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go)

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/internal/outage"
)

// DB is an open database: the ent client, the underlying *sql.DB and the
// dialect.
type DB struct {
	// Client is the ent client for the kernel's tables.
	Client *ent.Client
	// SQL is the connection pool under Client.
	SQL *sql.DB
	// Dialect is the ent dialect name: dialect.SQLite, dialect.MySQL or
	// dialect.Postgres.
	Dialect string
	// DbType is the canonical Service:Database:DbType (config.DBSqlite,
	// config.DBMySQL or config.DBPostgreSQL).
	DbType string
	// Target is a password-free description of what was opened (file path,
	// host/port/database), for logs and diagnostics.
	Target string

	log   hclog.Logger
	track *outage.Tracker
}

// Option adjusts Open.
type Option func(*options)

type options struct {
	wrap   func(dialect.Driver) dialect.Driver
	nextID func() int64
	track  *outage.Tracker // WithTracker (errors.go)
}

// WithDriver wraps the ent driver before the client is built, e.g. with a
// SQL logging or statistics driver. The wrapper must forward Dialect().
func WithDriver(wrap func(dialect.Driver) dialect.Driver) Option {
	return func(o *options) { o.wrap = wrap }
}

// ErrSQLServerUnsupported is returned by Open for DbType SqlServer.
var ErrSQLServerUnsupported = errors.New("Service:Database:DbType=SqlServer is accepted by the settings schema but not supported yet: " +
	"ent, the kernel's data layer, has no SQL Server dialect (and open-source Atlas cannot migrate SQL Server), " +
	"so there is no tested SQL Server path; supported DbTypes: " + supportedList())

// ErrUnknownDbType is returned (wrapped) by Open for an unrecognised DbType.
var ErrUnknownDbType = errors.New("unknown Service:Database:DbType")

func supportedList() string {
	return strings.Join([]string{config.DBSqlite, config.DBMySQL, config.DBPostgreSQL}, ", ")
}

// canonicalDbType maps a DbType (case-insensitive, empty = Sqlite) to its
// canonical spelling.
func canonicalDbType(t string) (string, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return config.DBSqlite, nil
	}
	for _, known := range config.DBTypes {
		if strings.EqualFold(t, known) {
			if known == config.DBSQLServer {
				return "", ErrSQLServerUnsupported
			}
			return known, nil
		}
	}
	return "", fmt.Errorf("%w %q: valid values are %s (SqlServer is accepted by the settings schema but not supported yet)",
		ErrUnknownDbType, t, strings.Join(config.DBTypes, ", "))
}

// Open opens the database described by cfg.Service.Database and checks that
// it answers. It does not touch the schema (see EnsureSchema). log may be
// nil. Passwords are never logged nor put in errors by this package.
func Open(ctx context.Context, cfg *config.Config, log hclog.Logger, opts ...Option) (*DB, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dbCfg := cfg.Service.Database
	dbType, err := canonicalDbType(dbCfg.DbType)
	if err != nil {
		return nil, err
	}
	conn := strings.TrimSpace(dbCfg.ConnectionString.Reveal())

	var (
		db          *sql.DB
		entDialect  string
		target      string
		ignoredKeys []string
	)
	switch dbType {
	case config.DBSqlite:
		if conn == "" {
			conn = config.Defaults().Service.Database.ConnectionString.Reveal()
		}
		source, err := sqliteSource(conn)
		if err != nil {
			return nil, err
		}
		path, err := resolveSqlitePath(source, cfg.ContentRoot)
		if err != nil {
			return nil, fmt.Errorf("resolve the Sqlite path %q: %w", source, err)
		}
		if path != memoryPath {
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				return nil, fmt.Errorf("create the directory of the Sqlite database: %w", err)
			}
			if err := privateSqliteFiles(path, log); err != nil {
				return nil, err
			}
		}
		db, err = sql.Open("sqlite", SqliteDSN(path))
		if err != nil {
			return nil, fmt.Errorf("open Sqlite database %s: %w", path, err)
		}
		if path == memoryPath {
			// Every connection to :memory: is a separate database: keep one.
			db.SetMaxOpenConns(1)
			db.SetMaxIdleConns(1)
			db.SetConnMaxIdleTime(0)
			db.SetConnMaxLifetime(0)
		}
		entDialect, target = dialect.SQLite, path
	case config.DBMySQL:
		if conn == "" {
			return nil, errors.New("Service:Database:ConnectionString is required for DbType MySql")
		}
		mcfg, ignored, err := mysqlConfig(conn)
		if err != nil {
			return nil, err
		}
		connector, err := mysql.NewConnector(mcfg)
		if err != nil {
			return nil, fmt.Errorf("MySql connection string: %w", err)
		}
		db = sql.OpenDB(connector)
		db.SetConnMaxIdleTime(5 * time.Minute)
		entDialect, target, ignoredKeys = dialect.MySQL, describeMySQL(mcfg), ignored
	case config.DBPostgreSQL:
		if conn == "" {
			return nil, errors.New("Service:Database:ConnectionString is required for DbType PostgreSQL")
		}
		dsn, ignored, err := postgresDSN(conn)
		if err != nil {
			return nil, err
		}
		pcfg, err := pq.NewConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL connection string: %w", err)
		}
		connector, err := pq.NewConnectorConfig(pcfg)
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL connection string: %w", err)
		}
		db = sql.OpenDB(connector)
		db.SetConnMaxIdleTime(5 * time.Minute)
		entDialect, target, ignoredKeys = dialect.Postgres, describePostgres(pcfg), ignored
	}
	if target != memoryPath {
		if dbCfg.MaxOpenConns > 0 {
			db.SetMaxOpenConns(dbCfg.MaxOpenConns)
		}
		db.SetMaxIdleConns(idleConns(dbCfg.MaxOpenConns, dbCfg.MaxIdleConns))
	}
	if len(ignoredKeys) > 0 {
		log.Warn("connection string keys without an equivalent were ignored", "dbType", dbType, "keys", strings.Join(ignoredKeys, ","))
	}

	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to the %s database %s: %w", dbType, target, err)
	}

	var drv dialect.Driver = entsql.OpenDB(entDialect, db)
	if o.wrap != nil {
		drv = o.wrap(drv)
	}
	log.Info("database opened", "dbType", dbType, "target", target)
	if o.track == nil {
		o.track = NewTracker(nil)
	}
	client := ent.NewClient(ent.Driver(storageFullDriver{Driver: drv, track: o.track}))
	client.Use(IDHook(o.nextID))
	InstallHooks(client)
	markStorageFullMutations(client, o.track)
	return &DB{
		Client:  client,
		SQL:     db,
		Dialect: entDialect,
		DbType:  dbType,
		Target:  target,
		log:     log,
		track:   o.track,
	}, nil
}

// defaultIdleConns is the pool's idle connections without a cap on open
// ones (Service:Database:MaxIdleConns 0 and MaxOpenConns 0).
const defaultIdleConns = 32

// idleConns is the number of connections the pool keeps between queries.
// database/sql's own default is two: under more concurrent requests than
// that, every query past the second opened a connection and closed it
// again (a new server process per query on PostgreSQL), which halved the
// refresh throughput under sixteen clients. Idle connections still close
// after five minutes unused on PostgreSQL and MySQL (SetConnMaxIdleTime).
func idleConns(maxOpen, maxIdle int) int {
	switch {
	case maxIdle > 0:
		return maxIdle // database/sql lowers it to maxOpen when that is smaller
	case maxOpen > 0:
		return maxOpen
	default:
		return defaultIdleConns
	}
}

// sqliteFileMode is the mode of the SQLite database and its -wal and -shm
// companions: they hold password hashes, sessions and settings, so only the
// service's own user may read them.
const sqliteFileMode os.FileMode = 0o600

// privateSqliteFiles creates the database file with mode 0600 when it is
// missing (SQLite then creates -wal and -shm with the same permission bits)
// and narrows an existing database, -wal or -shm file whose mode lets the
// group or others in to 0600, logging it at Info. A file the service cannot
// narrow (another owner) is logged as a warning and left alone: the database
// may still be usable, and refusing to start over it would be worse.
func privateSqliteFiles(path string, log hclog.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return fmt.Errorf("create the Sqlite database %s: %w", path, err)
		}
		log.Info("Sqlite database file created", "path", path, "mode", sqliteFileMode.String())
	case !errors.Is(err, os.ErrExist):
		return fmt.Errorf("create the Sqlite database %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&^sqliteFileMode == 0 {
			continue
		}
		if err := os.Chmod(p, sqliteFileMode); err != nil {
			log.Warn("the Sqlite file is readable by others and could not be narrowed", "path", p, "mode", st.Mode().Perm().String(), "error", err)
			continue
		}
		log.Info("Sqlite file mode narrowed", "path", p, "from", st.Mode().Perm().String(), "to", sqliteFileMode.String())
	}
	return nil
}

// Close closes the client and the connection pool.
func (d *DB) Close() error {
	err := d.Client.Close()
	// Client.Close closes the *sql.DB through the ent driver; closing it
	// again is a no-op, but covers a wrapper that does not forward Close.
	if err2 := d.SQL.Close(); err == nil {
		err = err2
	}
	return err
}

// Ping checks that the database answers (readiness probe). It reports to
// the availability tracker like any statement: a ping that answers during
// an outage ends it (logged), a refused one is marked ErrUnavailable.
func (d *DB) Ping(ctx context.Context) error {
	op := d.track.Begin()
	return mark(d.track, op, d.SQL.PingContext(ctx))
}
