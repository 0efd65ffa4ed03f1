package sqllog_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/database/sqllog"
	"github.com/adminkernel/kernel/host/snowflake"
)

const (
	secretHash  = "secret-hash-value"
	secretHash2 = "second-secret-hash"
	dupHash     = "duplicate-secret-hash"
)

// openLogged opens cfg's database with the SQL log around the ent driver.
func openLogged(t *testing.T, cfg *config.Config, opts sqllog.Options) *database.DB {
	t.Helper()
	ids, err := snowflake.New(0)
	if err != nil {
		t.Fatal(err)
	}
	db, err := database.Open(context.Background(), cfg, nil, database.WithDriver(func(d dialect.Driver) dialect.Driver {
		return sqllog.Wrap(d, opts)
	}), database.WithIDs(ids.Next))
	if err != nil {
		t.Fatalf("open %s: %v", cfg.Service.Database.DbType, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// insertValues maps the columns of a logged INSERT to their rendered values.
func insertValues(t *testing.T, line string) map[string]string {
	t.Helper()
	i := strings.Index(line, "INSERT INTO")
	if i < 0 {
		t.Fatalf("no INSERT in %s", line)
	}
	stmt := line[i:]
	open := strings.Index(stmt, "(")
	vals := strings.Index(stmt, ") VALUES (")
	if open < 0 || vals < 0 {
		t.Fatalf("unexpected INSERT shape: %s", stmt)
	}
	cols := strings.Split(stmt[open+1:vals], ", ")
	rest := stmt[vals+len(") VALUES ("):]
	var values []string
	var cur strings.Builder
	inStr := false
	for k := 0; k < len(rest); k++ {
		c := rest[k]
		switch {
		case c == '\'':
			inStr = !inStr // '' toggles twice
			cur.WriteByte(c)
		case !inStr && c == ',':
			values = append(values, strings.TrimSpace(cur.String()))
			cur.Reset()
		case !inStr && c == ')':
			values = append(values, strings.TrimSpace(cur.String()))
			k = len(rest)
		default:
			cur.WriteByte(c)
		}
	}
	if len(values) != len(cols) {
		t.Fatalf("%d columns but %d values in %s", len(cols), len(values), stmt)
	}
	m := make(map[string]string, len(cols))
	for k, c := range cols {
		m[strings.Trim(c, "`\"")] = values[k]
	}
	return m
}

func TestDialects(t *testing.T) {
	for _, dbType := range dbtest.Dialects(t) {
		t.Run(dbType, func(t *testing.T) {
			ctx := context.Background()
			cfg := dbtest.Config(t, dbType)
			log, buf := newLog(hclog.Trace)
			clock := newClock(100 * time.Millisecond)
			db := openLogged(t, cfg, sqllog.Options{Log: log, Enabled: true, Now: clock.Now})
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			if failed := buf.Lines("failed SQL"); len(failed) > 0 {
				t.Errorf("migration logged failures:\n%s", strings.Join(failed, "\n"))
			}
			client := db.Client
			var id int64

			t.Run("insert masks the password and renders booleans", func(t *testing.T) {
				buf.Reset()
				u, err := client.SysUser.Create().SetAccount("alice").SetName("Alice").
					SetPasswordHash(secretHash).SetEnabled(true).Save(ctx)
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				id = u.ID
				if strings.Contains(buf.String(), secretHash) {
					t.Fatalf("the log holds the password hash:\n%s", buf)
				}
				lines := buf.Lines("[INFO]", "INSERT INTO", "sys_user")
				if len(lines) != 1 {
					t.Fatalf("want 1 INSERT line, got %d:\n%s", len(lines), buf)
				}
				if !strings.Contains(lines[0], "[100.0 ms]") {
					t.Errorf("elapsed time missing: %s", lines[0])
				}
				vals := insertValues(t, lines[0])
				for col, want := range map[string]string{
					"password_hash":        "'***'",
					"enabled":              "1",
					"is_super_admin":       "0",
					"must_change_password": "'***'", // the name contains "password": masked, boolean or not
					"totp_enabled":         "0",
					"is_delete":            "0",
					"account":              "'alice'",
					"id":                   fmt.Sprint(id),
				} {
					if got, ok := vals[col]; !ok || got != want {
						t.Errorf("column %s rendered %q (present %v), want %q\n%s", col, got, ok, want, lines[0])
					}
				}
				if got := vals["create_time"]; !strings.HasPrefix(got, "'") || !strings.Contains(got, "T") {
					t.Errorf("create_time rendered %q, want a quoted ISO time", got)
				}
			})

			t.Run("update SET masks the password", func(t *testing.T) {
				buf.Reset()
				if err := client.SysUser.UpdateOneID(id).SetPasswordHash(secretHash2).SetEnabled(false).Exec(ctx); err != nil {
					t.Fatalf("update: %v", err)
				}
				if strings.Contains(buf.String(), secretHash2) {
					t.Fatalf("the log holds the password hash:\n%s", buf)
				}
				lines := buf.Lines("UPDATE", "password_hash")
				if len(lines) != 1 {
					t.Fatalf("want 1 UPDATE line, got %d:\n%s", len(lines), buf)
				}
				for _, want := range []string{"password_hash", " = '***'", " = 0", fmt.Sprint(id)} {
					if !strings.Contains(lines[0], want) {
						t.Errorf("UPDATE line lacks %q: %s", want, lines[0])
					}
				}
			})

			t.Run("where masks the password, not the account", func(t *testing.T) {
				buf.Reset()
				n, err := client.SysUser.Query().Where(sysuser.Account("alice"), sysuser.PasswordHash(secretHash2)).Count(ctx)
				if err != nil || n != 1 {
					t.Fatalf("count = %d, %v", n, err)
				}
				if strings.Contains(buf.String(), secretHash2) {
					t.Fatalf("the log holds the password hash:\n%s", buf)
				}
				lines := buf.Lines("SELECT", "'alice'", "'***'")
				if len(lines) != 1 {
					t.Fatalf("want 1 SELECT line with 'alice' and '***':\n%s", buf)
				}
			})

			t.Run("transactions are logged", func(t *testing.T) {
				buf.Reset()
				tx, err := client.BeginTx(ctx, &sql.TxOptions{})
				if err != nil {
					t.Fatalf("BeginTx: %v", err)
				}
				if err := tx.SysUser.UpdateOneID(id).SetPasswordHash(secretHash).Exec(ctx); err != nil {
					_ = tx.Rollback()
					t.Fatalf("update in tx: %v", err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatalf("commit: %v", err)
				}
				if strings.Contains(buf.String(), secretHash) {
					t.Fatalf("the log holds the password hash:\n%s", buf)
				}
				if lines := buf.Lines("UPDATE", "'***'", "tx=true"); len(lines) != 1 {
					t.Fatalf("want 1 UPDATE line marked tx=true:\n%s", buf)
				}
			})

			t.Run("failed SQL is a masked warning", func(t *testing.T) {
				buf.Reset()
				_, err := client.SysUser.Create().SetAccount("alice").SetName("Again").SetPasswordHash(dupHash).Save(ctx)
				if err == nil || !ent.IsConstraintError(err) {
					t.Fatalf("duplicate account: error = %v, want a constraint error", err)
				}
				if strings.Contains(buf.String(), dupHash) {
					t.Fatalf("the log holds the password hash:\n%s", buf)
				}
				lines := buf.Lines("[WARN]", "failed SQL", "INSERT INTO")
				if len(lines) != 1 {
					t.Fatalf("want 1 failed-SQL warning, got:\n%s", buf)
				}
				for _, want := range []string{"'***'", "error="} {
					if !strings.Contains(lines[0], want) {
						t.Errorf("failed-SQL line lacks %q: %s", want, lines[0])
					}
				}
				if n := len(buf.Lines("INSERT INTO")); n != 1 {
					t.Errorf("the failed statement was logged %d times, want once:\n%s", n, buf)
				}
			})

			t.Run("slow SQL is a masked warning even when the log is off", func(t *testing.T) {
				slowLog, slowBuf := newLog(hclog.Warn) // as Logging:LogLevel:SmartAdmin.Sql=Warning
				slow := openLogged(t, cfg, sqllog.Options{Log: slowLog, SlowMillis: 50, Now: newClock(100 * time.Millisecond).Now})
				if _, err := slow.Client.SysUser.Query().Where(sysuser.PasswordHash(secretHash)).Count(ctx); err != nil {
					t.Fatalf("count: %v", err)
				}
				lines := slowBuf.Lines("[WARN]", "slow SQL [100.0 ms]", "SELECT")
				if len(lines) != 1 || !strings.Contains(lines[0], "'***'") || strings.Contains(slowBuf.String(), secretHash) {
					t.Fatalf("want 1 masked slow-SQL warning, got:\n%s", slowBuf)
				}

				fastLog, fastBuf := newLog(hclog.Trace)
				fast := openLogged(t, cfg, sqllog.Options{Log: fastLog, SlowMillis: 200, Now: newClock(100 * time.Millisecond).Now})
				if _, err := fast.Client.SysUser.Query().Count(ctx); err != nil {
					t.Fatalf("count: %v", err)
				}
				if s := fastBuf.String(); s != "" {
					t.Errorf("a statement under the threshold with the log off was logged:\n%s", s)
				}
			})

			t.Run("N+1 summary", func(t *testing.T) {
				for _, tc := range []struct {
					n    int
					note bool
				}{{0, false}, {1, false}, {19, false}, {20, true}, {21, true}} {
					sctx, stats := sqllog.WithStats(ctx)
					for k := 0; k < tc.n; k++ {
						if _, err := client.SysUser.Query().Where(sysuser.ID(id)).Count(sctx); err != nil {
							t.Fatalf("count: %v", err)
						}
					}
					if stats.Count() != tc.n || stats.Total() != time.Duration(tc.n)*100*time.Millisecond {
						t.Errorf("n=%d: stats = %d statements, %v", tc.n, stats.Count(), stats.Total())
					}
					line, ok := sqllog.Summary(stats)
					if ok != (tc.n > 0) {
						t.Fatalf("n=%d: Summary ok = %v", tc.n, ok)
					}
					if !ok {
						continue
					}
					if !strings.HasPrefix(line, fmt.Sprintf("SQL: %d statement", tc.n)) ||
						!strings.Contains(line, fmt.Sprintf(", %d.0 ms", tc.n*100)) {
						t.Errorf("n=%d: summary %q", tc.n, line)
					}
					want := fmt.Sprintf(" — suspected N+1 (%d statements)", tc.n)
					if strings.Contains(line, want) != tc.note || strings.Contains(line, "N+1") != tc.note {
						t.Errorf("n=%d: summary %q, N+1 note expected %v", tc.n, line, tc.note)
					}
				}
			})

			t.Run("statistics include transactions", func(t *testing.T) {
				sctx, stats := sqllog.WithStats(ctx)
				tx, err := client.Tx(sctx)
				if err != nil {
					t.Fatalf("tx: %v", err)
				}
				if _, err := tx.SysUser.Query().Count(sctx); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				if stats.Count() != 1 {
					t.Errorf("stats count = %d, want 1", stats.Count())
				}
			})

			t.Run("middleware", func(t *testing.T) {
				mwLog, mwBuf := newLog(hclog.Info)
				app := fiber.New()
				app.Use(sqllog.Middleware(mwLog, true))
				app.Get("/none", func(c fiber.Ctx) error { return c.SendString("ok") })
				app.Get("/one", func(c fiber.Ctx) error {
					_, err := client.SysUser.Query().Count(c.Context())
					return err
				})
				app.Get("/ctx", func(c fiber.Ctx) error { // the fiber.Ctx itself as the context
					_, err := client.SysUser.Query().Count(c)
					return err
				})
				app.Get("/many/:n", func(c fiber.Ctx) error {
					n := fiber.Params[int](c, "n")
					for k := 0; k < n; k++ {
						if _, err := client.SysUser.Query().Where(sysuser.ID(id)).Count(c.Context()); err != nil {
							return err
						}
					}
					return nil
				})
				get := func(path string) {
					t.Helper()
					resp, err := app.Test(httptest.NewRequest("GET", path, nil))
					if err != nil || resp.StatusCode != 200 {
						t.Fatalf("GET %s: %v %v", path, resp, err)
					}
					_ = resp.Body.Close()
				}

				get("/none")
				if s := mwBuf.String(); s != "" {
					t.Errorf("a request without statements logged a summary:\n%s", s)
				}
				get("/one")
				if lines := mwBuf.Lines("[INFO]", "SQL: 1 statement, 100.0 ms", "method=GET", "path=/one"); len(lines) != 1 {
					t.Errorf("want the /one summary:\n%s", mwBuf)
				}
				get("/ctx")
				if lines := mwBuf.Lines("SQL: 1 statement", "path=/ctx"); len(lines) != 1 {
					t.Errorf("want the /ctx summary:\n%s", mwBuf)
				}
				get("/many/19")
				if lines := mwBuf.Lines("SQL: 19 statements", "path=/many/19"); len(lines) != 1 || strings.Contains(lines[0], "N+1") {
					t.Errorf("want the /many/19 summary without N+1 note:\n%s", mwBuf)
				}
				get("/many/20")
				if lines := mwBuf.Lines("SQL: 20 statements", "suspected N+1 (20 statements)", "path=/many/20"); len(lines) != 1 {
					t.Errorf("want the /many/20 summary with the N+1 note:\n%s", mwBuf)
				}
				if n := len(mwBuf.Lines("SQL:")); n != 4 {
					t.Errorf("%d summary lines, want 4:\n%s", n, mwBuf)
				}

				offLog, offBuf := newLog(hclog.Trace)
				off := fiber.New()
				off.Use(sqllog.Middleware(offLog, false))
				off.Get("/", func(c fiber.Ctx) error {
					_, err := client.SysUser.Query().Count(c.Context())
					if sqllog.StatsFrom(c.Context()).Count() != 1 {
						t.Errorf("collector not installed with requestSummary=false")
					}
					return err
				})
				resp, err := off.Test(httptest.NewRequest("GET", "/", nil))
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("GET /: %v %v", resp, err)
				}
				if s := offBuf.String(); s != "" {
					t.Errorf("requestSummary=false logged:\n%s", s)
				}
			})
		})
	}
}
