package database_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/database/migrations"
)

// TestMigrationFilesAligned: every dialect has the same versions with the
// same names, and every file splits into statements.
func TestMigrationFilesAligned(t *testing.T) {
	var ref []migrations.File
	for _, d := range []string{dialect.SQLite, dialect.Postgres, dialect.MySQL} {
		files, err := migrations.For(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < 2 {
			t.Fatalf("%s: %d files, want at least 0001 and 0002", d, len(files))
		}
		if ref == nil {
			ref = files
		}
		if len(files) != len(ref) {
			t.Fatalf("%s has %d files, %s has %d", d, len(files), ref[0].Path, len(ref))
		}
		for i, f := range files {
			if f.Version != i+1 || f.Name != ref[i].Name {
				t.Errorf("%s: file %d is %04d_%s, want %04d_%s", d, i, f.Version, f.Name, i+1, ref[i].Name)
			}
			stmts, err := f.Statements()
			if err != nil {
				t.Fatal(err)
			}
			// A file without statements only stands for a Go data step
			// (an index of one dialect, which ent cannot declare).
			if len(stmts) == 0 && !database.HasDataStep(f.Version) {
				t.Errorf("%s has no statements and its version no data step", f.Path)
			}
			for _, s := range stmts {
				if strings.HasPrefix(s, "--") || strings.HasSuffix(s, ";") {
					t.Errorf("%s: statement not cleaned: %q", f.Path, s)
				}
			}
		}
	}
}

// oldRelease is a database of the previous release (cd93078): migration
// 0001 only, with rows in several tables written as that release wrote
// them (no account_norm column, no sys_session.must_change_password).
type oldRelease struct {
	users   map[int64]string // id -> account
	roles   []int64
	session string
	config  string
}

func seedOldRelease(t *testing.T, db *database.DB, exec func(string, ...any)) oldRelease {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	o := oldRelease{users: map[int64]string{101: "Admin", 102: "zhang.SAN", 103: "李雷", 104: "deleted.USER"}, roles: []int64{201, 202}}
	for id, account := range o.users {
		exec("INSERT INTO sys_user (id, create_time, account, name, password_hash) VALUES (?, ?, ?, ?, ?)", id, now, account, "name "+account, "hash-"+account)
	}
	exec("UPDATE sys_user SET is_delete = ?, delete_key = ? WHERE id = ?", true, 104, 104)
	// A deleted row whose account differs only in case from a live one is
	// no conflict.
	exec("INSERT INTO sys_user (id, create_time, account, name, password_hash, is_delete, delete_key) VALUES (?, ?, ?, ?, ?, ?, ?)", 105, now, "admin", "old admin", "x", true, 105)
	o.users[105] = "admin"
	exec("INSERT INTO sys_role (id, create_time, name, code) VALUES (?, ?, ?, ?)", 201, now, "Auditors", "auditor")
	exec("INSERT INTO sys_role (id, create_time, name, code) VALUES (?, ?, ?, ?)", 202, now, "Editors", "editor")
	exec("INSERT INTO sys_user_role (id, create_time, user_id, role_id) VALUES (?, ?, ?, ?)", 301, now, 102, 201)
	o.session = "sess-old-1"
	exec("INSERT INTO sys_session (id, session_id, user_id, login_method, create_time, last_seen_time, expires_at, refresh_token_hash, refresh_expires_at) "+
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", 401, o.session, 101, "password", now, now, now.Add(time.Hour), "refresh-hash", now.Add(24*time.Hour))
	o.config = "site.title"
	exec("INSERT INTO sys_config (id, create_time, config_key, name, config_value) VALUES (?, ?, ?, ?, ?)", 501, now, o.config, "Title", "Old release")
	return o
}

// check verifies every row survived the upgrade and the new columns hold
// what the data step and the defaults give them.
func (o oldRelease) check(t *testing.T, db *database.DB) {
	t.Helper()
	ctx := context.Background()
	c := db.Client
	users := c.SysUser.Query().AllX(ctx)
	if len(users) != len(o.users) {
		t.Fatalf("%d users after the upgrade, want %d", len(users), len(o.users))
	}
	for _, u := range users {
		want, ok := o.users[u.ID]
		if !ok || u.Account != want || u.PasswordHash != "hash-"+want && u.ID != 105 {
			t.Errorf("user %d = %q (hash %q), want account %q", u.ID, u.Account, u.PasswordHash, want)
		}
		if u.AccountNorm != strings.ToLower(want) {
			t.Errorf("user %d account_norm = %q, want %q", u.ID, u.AccountNorm, strings.ToLower(want))
		}
	}
	if n := c.SysRole.Query().CountX(ctx); n != len(o.roles) {
		t.Errorf("%d roles, want %d", n, len(o.roles))
	}
	if n := c.SysUserRole.Query().CountX(ctx); n != 1 {
		t.Errorf("%d user-role rows, want 1", n)
	}
	s := c.SysSession.Query().OnlyX(ctx)
	if s.SessionID != o.session || s.UserID != 101 || s.MustChangePassword {
		t.Errorf("session = %+v, want %s of user 101 without must_change_password", s, o.session)
	}
	cfg := c.SysConfig.Query().OnlyX(ctx)
	if cfg.ConfigKey != o.config || cfg.ConfigValue == nil || *cfg.ConfigValue != "Old release" {
		t.Errorf("config = %+v", cfg)
	}
	// The case-insensitive uniqueness of 0002 is in force on the old rows.
	if _, err := c.SysUser.Create().SetAccount("ZHANG.san").SetName("x").Save(ctx); err == nil {
		t.Error("a case variant of an upgraded account was accepted")
	}
	assertNoPendingDDL(t, db)
}

// execer returns a function running a statement with ? placeholders on db
// (rewritten to $n for PostgreSQL), failing the test on error.
func execer(t *testing.T, db *database.DB) func(string, ...any) {
	return func(q string, args ...any) {
		t.Helper()
		if db.Dialect == dialect.Postgres {
			var b strings.Builder
			n := 0
			for _, r := range q {
				if r == '?' {
					n++
					fmt.Fprintf(&b, "$%d", n)
					continue
				}
				b.WriteRune(r)
			}
			q = b.String()
		}
		if _, err := db.SQL.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func revisions(t *testing.T, db *database.DB) []int {
	t.Helper()
	rows, err := db.SQL.QueryContext(context.Background(), "SELECT version FROM "+database.RevisionTable+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func newest(t *testing.T, db *database.DB) int {
	t.Helper()
	files, err := migrations.For(db.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// TestUpgradeFromPreviousRelease: a database at revision 1 (the previous
// release's schema) with rows in several tables is brought to the newest
// revision by the migrate path; every row survives, account_norm is filled,
// and ent finds nothing left to change.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			res, err := db.ApplyMigrationsTo(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.From != 0 || res.To != 1 || res.Applied != 1 {
				t.Fatalf("to revision 1: %+v", res)
			}
			old := seedOldRelease(t, db, execer(t, db))

			st, err := db.MigrationStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Current() != 1 || len(st.Applied) != 1 || len(st.Pending) != newest(t, db)-1 || st.Pending[0].Version != 2 {
				t.Fatalf("status before the upgrade: current %d, applied %d, pending %d", st.Current(), len(st.Applied), len(st.Pending))
			}

			res, err = db.ApplyMigrations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := database.MigrationResult{From: 1, To: newest(t, db), Applied: newest(t, db) - 1}
			if res != want {
				t.Fatalf("upgrade = %+v, want %+v", res, want)
			}
			if got := res.String(); !strings.Contains(got, fmt.Sprintf("applied %d migration", want.Applied)) || !strings.Contains(got, fmt.Sprintf("from rev 1 to %d", want.To)) {
				t.Errorf("summary %q", got)
			}
			old.check(t, db)
			if got := revisions(t, db); len(got) != newest(t, db) || got[len(got)-1] != newest(t, db) {
				t.Fatalf("revisions %v", got)
			}
			// Again: nothing to apply, and it says so.
			res, err = db.ApplyMigrations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Applied != 0 || res.To != newest(t, db) || !strings.Contains(res.String(), fmt.Sprintf("schema is at revision %d; nothing to apply", res.To)) {
				t.Fatalf("second run = %+v (%s)", res, res)
			}
		})
	}
}

// TestUpgradeRefusesCaseDuplicates: live accounts differing only in case
// stop migration 0002 before it changes anything; nobody is renamed; once
// one is deleted the upgrade runs.
func TestUpgradeRefusesCaseDuplicates(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			if _, err := db.ApplyMigrationsTo(ctx, 1); err != nil {
				t.Fatal(err)
			}
			exec := execer(t, db)
			now := time.Now().UTC()
			exec("INSERT INTO sys_user (id, create_time, account, name) VALUES (?, ?, ?, ?)", 11, now, "Dupe", "first")
			exec("INSERT INTO sys_user (id, create_time, account, name) VALUES (?, ?, ?, ?)", 12, now, "dUPE", "second")

			err := db.Migrate(ctx)
			if !errors.Is(err, database.ErrAccountCaseDuplicates) {
				t.Fatalf("Migrate with case-variant accounts = %v, want ErrAccountCaseDuplicates", err)
			}
			for _, want := range []string{`"Dupe" (id 11)`, `"dUPE" (id 12)`, "Delete"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if got := revisions(t, db); len(got) != 1 {
				t.Fatalf("revisions after the refusal: %v, want [1]", got)
			}
			var accounts int
			if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys_user WHERE account IN ('Dupe', 'dUPE')").Scan(&accounts); err != nil || accounts != 2 {
				t.Fatalf("accounts = %d, %v; nobody may be renamed", accounts, err)
			}

			exec("UPDATE sys_user SET is_delete = ?, delete_key = ? WHERE id = ?", true, 11, 11)
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("Migrate after deleting the duplicate: %v", err)
			}
			if got := db.Client.SysUser.Query().Where(sysuser.AccountNorm("dupe"), sysuser.IsDelete(false)).OnlyX(ctx); got.ID != 12 {
				t.Fatalf("account_norm not back-filled: live dupe is %d, want 12", got.ID)
			}
		})
	}
}

// applyByHand runs the statements of migration files 1..n without the
// runner: the tables a release before versioned migrations created.
func applyByHand(t *testing.T, db *database.DB, n int) {
	t.Helper()
	files, err := migrations.For(db.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files[:n] {
		stmts, err := f.Statements()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stmts {
			if _, err := db.SQL.ExecContext(context.Background(), s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
}

// TestAdoptLegacyDatabase: kernel tables without a revision table (ent
// auto-migration of an earlier build) are adopted at the revision they
// match, and only the later files run.
func TestAdoptLegacyDatabase(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			t.Run("previous release", func(t *testing.T) {
				ctx := context.Background()
				db := dbtest.Open(t, d)
				applyByHand(t, db, 1) // = the previous release's auto-migration
				old := seedOldRelease(t, db, execer(t, db))
				// A table of the application's own is no obstacle.
				execer(t, db)("CREATE TABLE app_inventory (id bigint NOT NULL PRIMARY KEY)")
				st, err := db.MigrationStatus(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !st.Legacy || st.Adopt != 1 || len(st.Pending) != newest(t, db)-1 {
					t.Fatalf("status: legacy %v adopt %d pending %d", st.Legacy, st.Adopt, len(st.Pending))
				}
				var printed bytes.Buffer
				if err := db.WritePending(ctx, &printed); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(printed.String(), "match revision 1") || !strings.Contains(printed.String(), "-- migration 0002_") {
					t.Fatalf("--print of a legacy database:\n%s", printed.String())
				}
				if has, err := tableExists(db, database.RevisionTable); err != nil || has {
					t.Fatalf("status or --print wrote to the database: revision table exists = %v (%v)", has, err)
				}
				res, err := db.ApplyMigrations(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if res.Adopted != 1 || res.From != 1 || res.To != newest(t, db) || res.Applied != newest(t, db)-1 {
					t.Fatalf("adoption = %+v", res)
				}
				if !strings.Contains(res.String(), "adopted the existing tables at revision 1") {
					t.Errorf("summary %q", res)
				}
				old.check(t, db)
				if got := revisions(t, db); len(got) != newest(t, db) {
					t.Fatalf("revisions %v", got)
				}
			})
			t.Run("development build at the newest schema", func(t *testing.T) {
				ctx := context.Background()
				db := dbtest.Open(t, d)
				var ddl bytes.Buffer
				if err := db.WriteDDL(ctx, &ddl); err != nil { // ent auto-migration of this build
					t.Fatal(err)
				}
				for _, s := range splitStatements(ddl.String()) {
					execer(t, db)(s)
				}
				res, err := db.ApplyMigrations(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if res.Adopted != newest(t, db) || res.Applied != 0 {
					t.Fatalf("adoption = %+v, want adopted at %d and nothing applied", res, newest(t, db))
				}
				assertUserRoundTrip(t, db.Client)
			})
			t.Run("matching no revision", func(t *testing.T) {
				ctx := context.Background()
				db := dbtest.Open(t, d)
				applyByHand(t, db, 1)
				// account_norm by hand, but not its index: 0002 would fail on
				// the existing column, revision 2 is not reached either.
				execer(t, db)("ALTER TABLE sys_user ADD COLUMN account_norm varchar(64) NULL")
				_, err := db.ApplyMigrations(ctx)
				if !errors.Is(err, database.ErrNotAdoptable) {
					t.Fatalf("error = %v, want ErrNotAdoptable", err)
				}
				if !strings.Contains(err.Error(), "sysuser_account_norm_delete_key") {
					t.Errorf("the message does not show the difference: %v", err)
				}
				if has, err := tableExists(db, database.RevisionTable); err != nil || (has && len(revisions(t, db)) != 0) {
					t.Fatalf("revisions recorded for an unadoptable database (%v)", err)
				}
			})
		})
	}
}

func tableExists(db *database.DB, name string) (bool, error) {
	q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1"
	switch db.Dialect {
	case dialect.SQLite:
		q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	case dialect.MySQL:
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	}
	var n int
	err := db.SQL.QueryRowContext(context.Background(), q, name).Scan(&n)
	return n > 0, err
}

// TestChangedMigrationRefused: an applied file whose checksum differs from
// the binary's is refused with a clear message.
func TestChangedMigrationRefused(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.OpenMigrated(t, d)
			execer(t, db)("UPDATE "+database.RevisionTable+" SET checksum = ? WHERE version = ?", "0000feed", 1)
			_, err := db.ApplyMigrations(ctx)
			if !errors.Is(err, database.ErrChecksumMismatch) {
				t.Fatalf("error = %v, want ErrChecksumMismatch", err)
			}
			for _, want := range []string{"0001_initial", "0000feed", "must never change"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message lacks %q: %v", want, err)
				}
			}
		})
	}
}

// TestSchemaPolicy: EnsureSchema against a database behind and ahead of the
// binary, per environment.
func TestSchemaPolicy(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			t.Run("Production refuses a database behind", func(t *testing.T) {
				ctx := context.Background()
				cfg := dbtest.Config(t, d)
				db := dbtest.OpenConfig(t, cfg)
				if _, err := db.ApplyMigrationsTo(ctx, 1); err != nil {
					t.Fatal(err)
				}
				cfg.Environment = config.Production
				err := database.EnsureSchema(ctx, cfg, db)
				if !errors.Is(err, database.ErrSchemaBehind) {
					t.Fatalf("error = %v, want ErrSchemaBehind", err)
				}
				for _, want := range []string{"at revision 1", "0002_account_norm", "`adminkernel migrate`", "EnableCodeFirstInProduction"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message lacks %q: %v", want, err)
					}
				}
				if got := revisions(t, db); len(got) != 1 {
					t.Fatalf("Production changed the schema: revisions %v", got)
				}
				cfg.Service.Database.EnableCodeFirstInProduction = true
				if err := database.EnsureSchema(ctx, cfg, db); err != nil {
					t.Fatal(err)
				}
				if got := revisions(t, db); len(got) != newest(t, db) {
					t.Fatalf("code-first applied up to %v", got)
				}
				// Up to date: Production without code-first starts.
				cfg.Service.Database.EnableCodeFirstInProduction = false
				if err := database.EnsureSchema(ctx, cfg, db); err != nil {
					t.Fatal(err)
				}
			})
			for _, env := range []string{config.Development, config.Production} {
				t.Run(env+" refuses a database ahead", func(t *testing.T) {
					ctx := context.Background()
					cfg := dbtest.Config(t, d)
					db := dbtest.OpenConfig(t, cfg)
					if err := db.Migrate(ctx); err != nil {
						t.Fatal(err)
					}
					future := newest(t, db) + 1
					execer(t, db)("INSERT INTO "+database.RevisionTable+" (version, name, checksum, applied_at, execution_ms) VALUES (?, ?, ?, ?, ?)",
						future, "from_the_future", "abc", time.Now().UTC(), 1)
					cfg.Environment = env
					err := database.EnsureSchema(ctx, cfg, db)
					if !errors.Is(err, database.ErrSchemaAhead) {
						t.Fatalf("error = %v, want ErrSchemaAhead", err)
					}
					if want := fmt.Sprintf("%04d_from_the_future", future); !strings.Contains(err.Error(), want) {
						t.Errorf("message lacks %q: %v", want, err)
					}
				})
			}
		})
	}
}

// TestConcurrentMigrate: two migrators (two replicas starting at once) on
// one empty database: each file is applied exactly once, both succeed.
func TestConcurrentMigrate(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			cfg := dbtest.Config(t, d)
			dbs := []*database.DB{dbtest.OpenConfig(t, cfg), dbtest.OpenConfig(t, cfg)}
			results := make([]database.MigrationResult, len(dbs))
			errs := make([]error, len(dbs))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, db := range dbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					results[i], errs[i] = db.ApplyMigrations(context.Background())
				}()
			}
			close(start)
			wg.Wait()
			total := 0
			for i, err := range errs {
				if err != nil {
					t.Fatalf("migrator %d: %v", i, err)
				}
				total += results[i].Applied
			}
			if total != newest(t, dbs[0]) {
				t.Fatalf("files applied %d times in all (%+v), want %d: each exactly once", total, results, newest(t, dbs[0]))
			}
			if got := revisions(t, dbs[0]); len(got) != newest(t, dbs[0]) {
				t.Fatalf("revisions %v", got)
			}
			assertNoPendingDDL(t, dbs[0])
		})
	}
}

// TestWriteAllMigrationsOffline: the full script of each dialect without a
// connection, in order, naming the data step.
func TestWriteAllMigrationsOffline(t *testing.T) {
	for dbType, quote := range map[string]string{config.DBSqlite: "`sys_user`", config.DBPostgreSQL: `"sys_user"`, config.DBMySQL: "`sys_user`"} {
		var b bytes.Buffer
		if err := database.WriteAllMigrations(dbType, &b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		first, second := strings.Index(out, "-- migration 0001_initial"), strings.Index(out, "-- migration 0002_")
		if first < 0 || second < first || !strings.Contains(out, "CREATE TABLE "+quote) || !strings.Contains(out, "account_norm") {
			t.Errorf("%s script:\n%.400s", dbType, out)
		}
		if !strings.Contains(out, "fill sys_user.account_norm") {
			t.Errorf("%s script does not name the data step", dbType)
		}
	}
	if err := database.WriteAllMigrations("Oracle", &bytes.Buffer{}); !errors.Is(err, database.ErrUnknownDbType) {
		t.Fatalf("unknown DbType: %v", err)
	}
}

// applyScript runs a printed script statement by statement, as a DBA's
// tool would.
func applyScript(t *testing.T, db *database.DB, script string) {
	t.Helper()
	stmts, err := migrations.File{Path: "printed", SQL: []byte(script)}.Statements()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.SQL.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestPrintedScriptsAppliedByHand: the scripts of `migrate --print` (pending
// files of a database at revision 1) and `migrate --print --offline` (every
// file, empty database), applied by hand, leave the database recorded at the
// newest revision with nothing left for ent; a Production start then fills
// account_norm of the old rows (the Go data step the script cannot run).
func TestPrintedScriptsAppliedByHand(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			t.Run("pending", func(t *testing.T) {
				ctx := context.Background()
				cfg := dbtest.Config(t, d)
				db := dbtest.OpenConfig(t, cfg)
				if _, err := db.ApplyMigrationsTo(ctx, 1); err != nil {
					t.Fatal(err)
				}
				old := seedOldRelease(t, db, execer(t, db))
				var script bytes.Buffer
				if err := db.WritePending(ctx, &script); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(script.String(), "-- migration 0001_") {
					t.Fatalf("the script repeats an applied file:\n%s", script.String())
				}
				applyScript(t, db, script.String())
				st, err := db.MigrationStatus(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Current() != newest(t, db) || len(st.Pending) != 0 {
					t.Fatalf("after the script: revision %d, %d pending", st.Current(), len(st.Pending))
				}
				cfg.Environment = config.Production
				if err := database.EnsureSchema(ctx, cfg, db); err != nil {
					t.Fatal(err)
				}
				old.check(t, db)
			})
			t.Run("offline", func(t *testing.T) {
				ctx := context.Background()
				db := dbtest.Open(t, d)
				var script bytes.Buffer
				if err := database.WriteAllMigrations(db.DbType, &script); err != nil {
					t.Fatal(err)
				}
				applyScript(t, db, script.String())
				st, err := db.MigrationStatus(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Legacy || st.Current() != newest(t, db) || len(st.Pending) != 0 {
					t.Fatalf("after the offline script: legacy %v, revision %d, %d pending", st.Legacy, st.Current(), len(st.Pending))
				}
				assertNoPendingDDL(t, db)
				assertUserRoundTrip(t, db.Client)
			})
		})
	}
}

// TestOlderBinaryOnCompatibleSchema: the revisions a newer release applied
// (rows this binary has no file for) are accepted when each is compatible
// with this binary's newest file (a rolling upgrade across expand
// migrations), in every environment and by migrate, status and the printed
// script; one incompatible revision among them refuses, naming only it.
func TestOlderBinaryOnCompatibleSchema(t *testing.T) {
	type future struct {
		name string
		from int // compatible_from relative to this binary's newest file (0: NULL)
	}
	tests := []struct {
		name    string
		future  []future
		refused string // the future revision named by ErrSchemaAhead ("" = accepted)
	}{
		{name: "one expand revision", future: []future{{"add_a", 1}}},
		{name: "two expand revisions", future: []future{{"add_a", 1}, {"add_b", 1}}},
		{name: "an older compatibility floor", future: []future{{"add_a", -2}}},
		{name: "a contract revision", future: []future{{"add_a", 1}, {"drop_x", 3}}, refused: "drop_x"},
		{name: "recorded without compatibility", future: []future{{"legacy_row", 0}}, refused: "legacy_row"},
	}
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx := context.Background()
					cfg := dbtest.Config(t, d)
					db := dbtest.OpenConfig(t, cfg)
					if err := db.Migrate(ctx); err != nil {
						t.Fatal(err)
					}
					known := newest(t, db)
					for i, f := range tt.future {
						// from 1 = "compatible with this binary" (its newest
						// file), 3 = two revisions later, -2 = older.
						var from any
						if f.from != 0 {
							from = known + f.from - 1
						}
						execer(t, db)("INSERT INTO "+database.RevisionTable+" (version, name, checksum, applied_at, execution_ms, compatible_from) VALUES (?, ?, ?, ?, ?, ?)",
							known+i+1, f.name, "abc", time.Now().UTC(), 1, from)
					}
					for _, env := range []string{config.Development, config.Production} {
						cfg.Environment = env
						err := database.EnsureSchema(ctx, cfg, db)
						if tt.refused == "" {
							if err != nil {
								t.Fatalf("%s: %v", env, err)
							}
							continue
						}
						if !errors.Is(err, database.ErrSchemaAhead) {
							t.Fatalf("%s: error = %v, want ErrSchemaAhead", env, err)
						}
						if !strings.Contains(err.Error(), tt.refused) {
							t.Errorf("%s: message lacks %q: %v", env, tt.refused, err)
						}
						for _, f := range tt.future {
							if f.name != tt.refused && strings.Contains(err.Error(), f.name) {
								t.Errorf("%s: message names the compatible revision %q: %v", env, f.name, err)
							}
						}
					}
					if tt.refused != "" {
						return
					}
					res, err := db.ApplyMigrations(ctx)
					if err != nil {
						t.Fatal(err)
					}
					top := known + len(tt.future)
					if res.Known != known || res.To != top || res.Applied != 0 {
						t.Errorf("migrate = %+v, want nothing applied, at %d, known %d", res, top, known)
					}
					if !strings.Contains(res.String(), "newer than this binary") {
						t.Errorf("summary %q does not say the schema is newer", res)
					}
					st, err := db.MigrationStatus(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if len(st.Ahead) != len(tt.future) || len(st.Pending) != 0 || st.Current() != top {
						t.Errorf("status: %d ahead, %d pending, at %d", len(st.Ahead), len(st.Pending), st.Current())
					}
					if got := revisions(t, db); len(got) != top {
						t.Errorf("revisions %v changed", got)
					}
				})
			}
		})
	}
}

// TestRevisionTableGainsCompatibility: a revision table created before its
// compatible_from column (an older binary migrated the database) gets the
// column at the next migrate; the revisions recorded from then on carry
// their compatibility, the earlier ones read as compatible with themselves
// only, and the printed script of a database lacking the column adds it.
func TestRevisionTableGainsCompatibility(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			if _, err := db.ApplyMigrationsTo(ctx, 1); err != nil {
				t.Fatal(err)
			}
			execer(t, db)("ALTER TABLE " + database.RevisionTable + " DROP COLUMN compatible_from")
			var script bytes.Buffer
			if err := db.WritePending(ctx, &script); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(script.String(), "ADD COLUMN compatible_from") {
				t.Errorf("the printed script does not add the column:\n%.400s", script.String())
			}
			st, err := db.MigrationStatus(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Applied) != 1 || st.Applied[0].CompatibleFrom != 1 {
				t.Fatalf("status without the column: %+v", st.Applied)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			files, err := migrations.For(db.Dialect)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.SQL.QueryContext(ctx, "SELECT version, compatible_from FROM "+database.RevisionTable+" ORDER BY version")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = rows.Close() }()
			for rows.Next() {
				var (
					v    int
					from sql.NullInt64
				)
				if err := rows.Scan(&v, &from); err != nil {
					t.Fatal(err)
				}
				switch {
				case v == 1 && from.Valid:
					t.Errorf("revision 1 (recorded before the column) has compatible_from %d", from.Int64)
				case v > 1 && (!from.Valid || int(from.Int64) != files[v-1].CompatibleFrom):
					t.Errorf("revision %d: compatible_from %v, want %d", v, from, files[v-1].CompatibleFrom)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUpgradeRefusesPhoneDuplicates: live users sharing a phone stop
// migration 0016 (UNIQUE(phone, delete_key)) before it changes anything;
// nobody's phone is cleared but blank ones; once one is deleted the
// upgrade runs and a second live holder is refused by the index.
func TestUpgradeRefusesPhoneDuplicates(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			if _, err := db.ApplyMigrationsTo(ctx, 15); err != nil {
				t.Fatal(err)
			}
			exec := execer(t, db)
			now := time.Now().UTC()
			exec("INSERT INTO sys_user (id, create_time, account, account_norm, name, phone) VALUES (?, ?, ?, ?, ?, ?)", 21, now, "victim", "victim", "v", "13800000021")
			exec("INSERT INTO sys_user (id, create_time, account, account_norm, name, phone) VALUES (?, ?, ?, ?, ?, ?)", 22, now, "copier", "copier", "c", "13800000021")
			exec("INSERT INTO sys_user (id, create_time, account, account_norm, name, phone) VALUES (?, ?, ?, ?, ?, ?)", 23, now, "blank1", "blank1", "b", "")
			exec("INSERT INTO sys_user (id, create_time, account, account_norm, name, phone) VALUES (?, ?, ?, ?, ?, ?)", 24, now, "blank2", "blank2", "b", " ")

			err := db.Migrate(ctx)
			if !errors.Is(err, database.ErrPhoneDuplicates) {
				t.Fatalf("Migrate with a shared phone = %v, want ErrPhoneDuplicates", err)
			}
			for _, want := range []string{`"victim" (id 21)`, `"copier" (id 22)`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if got := revisions(t, db); got[len(got)-1] != 15 {
				t.Fatalf("revisions after the refusal: %v, want up to 15", got)
			}
			exec("UPDATE sys_user SET is_delete = ?, delete_key = ? WHERE id = ?", true, 22, 22)
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("Migrate after deleting the copier: %v", err)
			}
			var blanks int
			if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys_user WHERE id IN (23, 24) AND phone IS NULL").Scan(&blanks); err != nil || blanks != 2 {
				t.Fatalf("blank phones left = %d, %v; want NULL", 2-blanks, err)
			}
			if err := db.Client.SysUser.UpdateOneID(23).SetPhone("13800000021").Exec(ctx); err == nil {
				t.Fatal("a second live user took the phone; want the unique index to refuse it")
			}
		})
	}
}
