package database_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/migrate"
	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

func TestOpenRefusesSQLServer(t *testing.T) {
	for _, dbType := range []string{"SqlServer", "sqlserver", "SQLSERVER"} {
		t.Run(dbType, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Service.Database.DbType = dbType
			cfg.Service.Database.ConnectionString = "Server=db;Database=ak;User Id=sa;Password=TopSecret1"
			_, err := database.Open(context.Background(), &cfg, nil)
			if !errors.Is(err, database.ErrSQLServerUnsupported) {
				t.Fatalf("error = %v, want ErrSQLServerUnsupported", err)
			}
			msg := err.Error()
			for _, want := range []string{"SqlServer", "not supported yet", "no SQL Server dialect", "Sqlite", "MySql", "PostgreSQL"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "TopSecret1") {
				t.Errorf("message leaks the password: %s", msg)
			}
		})
	}
}

func TestOpenUnknownDbType(t *testing.T) {
	for _, dbType := range []string{"Oracle", "sqlite3", "Mongo"} {
		t.Run(dbType, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Service.Database.DbType = dbType
			_, err := database.Open(context.Background(), &cfg, nil)
			if !errors.Is(err, database.ErrUnknownDbType) {
				t.Fatalf("error = %v, want ErrUnknownDbType", err)
			}
			for _, want := range []string{dbType, "Sqlite", "MySql", "SqlServer", "PostgreSQL"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestOpenMissingConnectionString(t *testing.T) {
	for _, dbType := range []string{config.DBMySQL, config.DBPostgreSQL} {
		t.Run(dbType, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Service.Database.DbType = dbType
			cfg.Service.Database.ConnectionString = ""
			_, err := database.Open(context.Background(), &cfg, nil)
			if err == nil || !strings.Contains(err.Error(), "ConnectionString is required") {
				t.Fatalf("error = %v", err)
			}
		})
	}
}

func TestOpenUnreachableServerHidesPassword(t *testing.T) {
	tests := []struct{ dbType, conn string }{
		{config.DBMySQL, "Server=127.0.0.1;Port=1;Database=ak;User=u;Password=TopSecret1;Connection Timeout=2"},
		{config.DBPostgreSQL, "Host=127.0.0.1;Port=1;Database=ak;Username=u;Password=TopSecret1;SslMode=Disable;Timeout=2"},
	}
	for _, tt := range tests {
		t.Run(tt.dbType, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Service.Database.DbType = tt.dbType
			cfg.Service.Database.ConnectionString = config.Secret(tt.conn)
			_, err := database.Open(context.Background(), &cfg, nil)
			if err == nil {
				t.Fatal("Open succeeded against a closed port")
			}
			if strings.Contains(err.Error(), "TopSecret1") {
				t.Fatalf("error leaks the password: %v", err)
			}
			if !strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("error does not name the target: %v", err)
			}
		})
	}
}

func TestMigrate(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			if err := db.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			assertHasTables(t, db, false)
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			assertHasTables(t, db, true)
			// Idempotent: a second run changes nothing, and the planner sees
			// nothing left to do.
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("second Migrate: %v", err)
			}
			assertNoPendingDDL(t, db)
			assertUserRoundTrip(t, db.Client)
		})
	}
}

// TestWriteDDLAppliedByHand follows the Production path without code-first:
// print the DDL (no change to the database), run the statements by hand on
// the empty database, and check the kernel can use the result.
func TestWriteDDLAppliedByHand(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			var buf bytes.Buffer
			if err := db.WriteDDL(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			ddl := buf.String()
			assertHasTables(t, db, false) // printing created nothing
			if n := tableCount(t, db); n != 0 {
				t.Fatalf("WriteDDL left %d tables in the database", n)
			}
			for _, want := range []string{"CREATE TABLE", "sys_user", "sys_user_external", "sys_session", "sys_op_log", "UNIQUE"} {
				if !strings.Contains(ddl, want) {
					t.Fatalf("DDL lacks %q:\n%s", want, ddl)
				}
			}
			stmts := splitStatements(ddl)
			for _, stmt := range stmts {
				if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
					t.Fatalf("applying %q: %v", stmt, err)
				}
			}
			assertHasTables(t, db, true)
			assertNoPendingDDL(t, db)
			assertUserRoundTrip(t, db.Client)
			if got, want := tableCount(t, db), len(migrate.Tables); got != want {
				t.Errorf("%d tables after applying the DDL, want %d", got, want)
			}
		})
	}
}

func TestPrintDDLSqliteCreatesNothing(t *testing.T) {
	cfg := config.Defaults()
	cfg.ContentRoot = t.TempDir()
	var buf bytes.Buffer
	if err := database.PrintDDL(context.Background(), &cfg, &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "CREATE TABLE `sys_user`") {
		t.Fatalf("DDL lacks sys_user:\n%s", buf.String())
	}
	if entries, _ := os.ReadDir(cfg.ContentRoot); len(entries) != 0 {
		t.Fatalf("PrintDDL created files: %v", entries)
	}

	// An existing, migrated file: nothing left to print.
	path := filepath.Join(cfg.ContentRoot, "data", "adminkernel.db")
	db := dbtest.OpenConfig(t, &cfg)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := database.PrintDDL(context.Background(), &cfg, &buf); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "nothing to apply") || strings.Contains(out, "CREATE") {
		t.Fatalf("PrintDDL on a migrated database printed:\n%s", out)
	}
}

func TestPrintDDLServer(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		if d == config.DBSqlite {
			continue
		}
		t.Run(d, func(t *testing.T) {
			cfg := dbtest.Config(t, d)
			cfg.Environment = config.Production
			var buf bytes.Buffer
			if err := database.PrintDDL(context.Background(), cfg, &buf); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "CREATE TABLE") {
				t.Fatalf("no DDL printed:\n%s", buf.String())
			}
			db := dbtest.OpenConfig(t, cfg)
			assertHasTables(t, db, false)
		})
	}
}

func TestEnsureSchema(t *testing.T) {
	tests := []struct {
		name        string
		environment string
		codeFirst   bool
		precreate   bool // tables exist before EnsureSchema
		wantErr     bool
		wantTables  bool
	}{
		{name: "Production without tables fails", environment: config.Production, wantErr: true},
		{name: "Production without tables, code-first creates", environment: config.Production, codeFirst: true, wantTables: true},
		{name: "Production with tables does nothing", environment: config.Production, precreate: true, wantTables: true},
		{name: "Production with tables, code-first migrates", environment: config.Production, codeFirst: true, precreate: true, wantTables: true},
		{name: "Development creates", environment: config.Development, wantTables: true},
		{name: "Staging creates", environment: config.Staging, wantTables: true},
		{name: "unknown environment counts as Production", environment: "Prod", wantErr: true},
	}
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx := context.Background()
					cfg := dbtest.Config(t, d)
					cfg.Environment = tt.environment
					cfg.Service.Database.EnableCodeFirstInProduction = tt.codeFirst
					db := dbtest.OpenConfig(t, cfg)
					if tt.precreate {
						if err := db.Migrate(ctx); err != nil {
							t.Fatal(err)
						}
					}
					err := database.EnsureSchema(ctx, cfg, db)
					if tt.wantErr {
						if !errors.Is(err, database.ErrSchemaMissing) {
							t.Fatalf("error = %v, want ErrSchemaMissing", err)
						}
						for _, want := range []string{
							"Service:Database:EnableCodeFirstInProduction=true",
							"adminkernel migrate --print",
							"adminkernel migrate`",
						} {
							if !strings.Contains(err.Error(), want) {
								t.Errorf("message lacks %q: %v", want, err)
							}
						}
					} else if err != nil {
						t.Fatal(err)
					}
					assertHasTables(t, db, tt.wantTables)
					if tt.wantTables {
						assertUserRoundTrip(t, db.Client)
					}
				})
			}
		})
	}
}

// TestEnsureSchemaProductionLeavesSchemaAlone: with the schema at the newest
// revision, Production (code-first off or on) changes nothing: the revision
// table, not the catalog, says what is applied, so even a table dropped by
// hand is not re-created (ent auto-migration no longer runs at startup).
func TestEnsureSchemaProductionLeavesSchemaAlone(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			cfg := dbtest.Config(t, d)
			db := dbtest.OpenConfig(t, cfg)
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL.ExecContext(ctx, "DROP TABLE sys_op_log"); err != nil {
				t.Fatal(err)
			}
			cfg.Environment = config.Production
			if err := database.EnsureSchema(ctx, cfg, db); err != nil {
				t.Fatal(err)
			}
			if n, want := tableCount(t, db), len(migrate.Tables)-1; n != want {
				t.Fatalf("%d tables, want %d (sys_op_log must stay missing)", n, want)
			}
			cfg.Service.Database.EnableCodeFirstInProduction = true
			if err := database.EnsureSchema(ctx, cfg, db); err != nil {
				t.Fatal(err)
			}
			if n, want := tableCount(t, db), len(migrate.Tables)-1; n != want {
				t.Fatalf("%d tables after code-first, want %d (nothing is pending)", n, want)
			}
		})
	}
}

func TestUserExternalUniqueProviderSubject(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			c := dbtest.OpenMigrated(t, d).Client
			bind := func(userID int64, provider, subject string) (*ent.SysUserExternal, error) {
				return c.SysUserExternal.Create().SetUserID(userID).SetProvider(provider).SetSubject(subject).Save(ctx)
			}
			first, err := bind(10, "oidc", "alice")
			if err != nil {
				t.Fatal(err)
			}
			// Same identity, another user: rejected by the database.
			if _, err := bind(11, "oidc", "alice"); !ent.IsConstraintError(err) {
				t.Fatalf("duplicate (provider, subject): error = %v, want a constraint error", err)
			}
			// Same subject at another provider: fine.
			if _, err := bind(11, "code_host", "alice"); err != nil {
				t.Fatal(err)
			}
			// Same user, same provider, other subject: one binding per provider.
			if _, err := bind(10, "oidc", "alice2"); !ent.IsConstraintError(err) {
				t.Fatalf("second binding for (user, provider): error = %v, want a constraint error", err)
			}
			// Soft delete frees the key (contract §3.1 #9).
			if err := c.SysUserExternal.UpdateOne(first).SetIsDelete(true).SetDeleteKey(first.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			again, err := bind(11, "oidc", "alice")
			if err != nil {
				t.Fatalf("re-binding after soft delete: %v", err)
			}
			// Deleting the new binding too keeps both deleted rows.
			if err := c.SysUserExternal.UpdateOne(again).SetIsDelete(true).SetDeleteKey(again.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			// Restoring the first while a live row holds the key conflicts.
			if _, err := bind(12, "oidc", "alice"); err != nil {
				t.Fatal(err)
			}
			err = c.SysUserExternal.UpdateOne(first).SetIsDelete(false).SetDeleteKey(0).Exec(ctx)
			if !ent.IsConstraintError(err) {
				t.Fatalf("restore over a live key: error = %v, want a constraint error", err)
			}
			n, err := c.SysUserExternal.Query().Where(sysuserexternal.Provider("oidc"), sysuserexternal.Subject("alice")).Count(ctx)
			if err != nil || n != 3 {
				t.Fatalf("rows for (oidc, alice) = %d, %v; want 3", n, err)
			}
		})
	}
}

func TestUniqueAccountWithSoftDelete(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			c := dbtest.OpenMigrated(t, d).Client
			create := func() (*ent.SysUser, error) {
				return c.SysUser.Create().SetAccount("zhang").SetName("张三").Save(ctx)
			}
			u, err := create()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := create(); !ent.IsConstraintError(err) {
				t.Fatalf("duplicate live account: error = %v, want a constraint error", err)
			}
			if err := c.SysUser.UpdateOne(u).SetIsDelete(true).SetDeleteKey(u.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := create(); err != nil {
				t.Fatalf("re-creating a deleted account: %v", err)
			}
			live, err := c.SysUser.Query().Where(sysuser.Account("zhang"), sysuser.IsDelete(false)).Count(ctx)
			if err != nil || live != 1 {
				t.Fatalf("live rows = %d, %v", live, err)
			}
		})
	}
}

// --- helpers

func assertHasTables(t *testing.T, db *database.DB, want bool) {
	t.Helper()
	got, err := db.HasTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("HasTables = %v, want %v", got, want)
	}
}

func assertNoPendingDDL(t *testing.T, db *database.DB) {
	t.Helper()
	var buf bytes.Buffer
	if err := db.WriteDDL(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(buf.String()); s != "" {
		t.Fatalf("schema not up to date; planner wants:\n%s", s)
	}
}

// assertUserRoundTrip writes and reads a user with every kind of column.
func assertUserRoundTrip(t *testing.T, c *ent.Client) {
	t.Helper()
	ctx := context.Background()
	login := time.Date(2030, 5, 6, 7, 8, 9, 123456000, time.UTC)
	u, err := c.SysUser.Create().
		SetAccount("round.trip").
		SetName("往返 Round Trip").
		SetNickname("rt").
		SetPasswordHash("pbkdf2$x").
		SetIsSuperAdmin(true).
		SetPhone("13800000000").
		SetOrgID(3).
		SetLastLoginTime(login).
		Save(ctx)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	if u.ID < 4096 {
		t.Errorf("generated id %d below 4096", u.ID)
	}
	got, err := c.SysUser.Query().Where(sysuser.Account("round.trip"), sysuser.IsDelete(false)).Only(ctx)
	if err != nil {
		t.Fatalf("read user: %v", err)
	}
	switch {
	case got.ID != u.ID, got.Name != "往返 Round Trip", got.Nickname == nil || *got.Nickname != "rt",
		!got.IsSuperAdmin, !got.Enabled, got.MustChangePassword, got.OrgID == nil || *got.OrgID != 3,
		got.PositionID != nil, got.PasswordHash != "pbkdf2$x", got.DeleteKey != 0:
		t.Fatalf("read back %+v", got)
	}
	if got.LastLoginTime == nil || !got.LastLoginTime.Equal(login) {
		t.Errorf("last_login_time = %v, want %v (microseconds kept)", got.LastLoginTime, login)
	}
	if time.Since(got.CreateTime).Abs() > time.Minute {
		t.Errorf("create_time = %v", got.CreateTime)
	}
	// Explicit seed id.
	if _, err := c.SysUser.Create().SetID(1).SetAccount("seed").SetName("seed").Save(ctx); err != nil {
		t.Fatalf("explicit id: %v", err)
	}
	if _, err := c.SysUser.Get(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func splitStatements(ddl string) []string {
	var out []string
	for _, s := range strings.Split(ddl, ";\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// tableCount counts the kernel's tables (the revision table left out).
func tableCount(t *testing.T, db *database.DB) int {
	t.Helper()
	var q string
	switch db.DbType {
	case config.DBSqlite:
		q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'sys%' AND name <> 'sys_schema_revision'"
	case config.DBMySQL:
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name <> 'sys_schema_revision'"
	default:
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> 'sys_schema_revision'"
	}
	var n int
	if err := db.SQL.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTimeComparisonAcrossZones: times written in one zone compare correctly
// with parameters in another (SQLite stores text; it must be normalised).
func TestTimeComparisonAcrossZones(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	newYork := time.FixedZone("UTC-5", -5*3600)
	base := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			c := dbtest.OpenMigrated(t, d).Client
			// Three sessions expiring 1 s apart, written in different zones
			// and with and without fractional seconds.
			expiries := []time.Time{
				base.In(shanghai),
				base.Add(1500 * time.Millisecond).In(newYork),
				base.Add(2 * time.Second),
			}
			for i, exp := range expiries {
				if _, err := c.SysSession.Create().SetUserID(int64(i + 1)).SetLoginMethod("password").
					SetExpiresAt(exp).SetRefreshTokenHash(fmt.Sprintf("h%d", i)).SetRefreshExpiresAt(exp).
					Save(ctx); err != nil {
					t.Fatal(err)
				}
			}
			tests := []struct {
				after time.Time
				want  int
			}{
				{base.Add(-time.Millisecond).In(newYork), 3},
				{base.In(time.UTC), 2},
				{base.Add(time.Second).In(shanghai), 2},
				{base.Add(1600 * time.Millisecond).In(newYork), 1},
				{base.Add(2 * time.Second).In(shanghai), 0},
			}
			for _, tt := range tests {
				n, err := c.SysSession.Query().Where(syssession.ExpiresAtGT(tt.after)).Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n != tt.want {
					t.Errorf("expires_at > %v: %d rows, want %d", tt.after, n, tt.want)
				}
			}
			first, err := c.SysSession.Query().Order(ent.Asc(syssession.FieldExpiresAt)).First(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !first.ExpiresAt.Equal(base) || first.UserID != 1 {
				t.Errorf("earliest session = user %d at %v", first.UserID, first.ExpiresAt)
			}
			if len(first.SessionID) != 43 {
				t.Errorf("generated session_id %q, want 43 characters", first.SessionID)
			}
		})
	}
}
