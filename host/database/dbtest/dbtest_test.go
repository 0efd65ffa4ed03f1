package dbtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
)

// recorder is a testing.TB whose Fatalf records the message and stops the
// goroutine, like the real one.
type recorder struct {
	testing.TB
	fatal   string
	skipped bool
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Skip(...any)           { r.skipped = true; panic(r) }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; panic(r) }
func (r *recorder) SkipNow()              { r.skipped = true; panic(r) }
func (r *recorder) Cleanup(f func())      { r.TB.Cleanup(f) }
func (r *recorder) TempDir() string       { return r.TB.TempDir() }
func (r *recorder) Errorf(string, ...any) {}

// run calls f with a recorder and returns it once f returns or stops.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil && v != r {
				panic(v)
			}
		}()
		f(r)
	}()
	return r
}

func TestDialects(t *testing.T) {
	tests := []struct {
		env       string
		want      []string
		wantFatal string
	}{
		{env: "", want: []string{config.DBSqlite, config.DBPostgreSQL, config.DBMySQL}},
		{env: "sqlite", want: []string{config.DBSqlite}},
		{env: " SQLite , postgres ", want: []string{config.DBSqlite, config.DBPostgreSQL}},
		{env: "mariadb,pg,mysql", want: []string{config.DBMySQL, config.DBPostgreSQL}},
		{env: "PostgreSQL,MySql,Sqlite", want: []string{config.DBPostgreSQL, config.DBMySQL, config.DBSqlite}},
		{env: "oracle", wantFatal: "unknown dialect"},
		{env: " , ", wantFatal: "names no dialect"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(EnvDialects, tt.env)
			var got []string
			r := run(t, func(tb testing.TB) { got = Dialects(tb) })
			if tt.wantFatal != "" {
				if !strings.Contains(r.fatal, tt.wantFatal) || !strings.Contains(r.fatal, EnvDialects) {
					t.Fatalf("fatal = %q, want %q naming %s", r.fatal, tt.wantFatal, EnvDialects)
				}
				return
			}
			if r.fatal != "" || !slices.Equal(got, tt.want) {
				t.Fatalf("Dialects = %v (fatal %q), want %v", got, r.fatal, tt.want)
			}
		})
	}
}

// TestUnreachableServerFails: a server that does not answer fails the test
// with the variable to set and how to restrict dialects; it never skips.
func TestUnreachableServerFails(t *testing.T) {
	tests := []struct {
		dbType, env, value string
	}{
		{config.DBPostgreSQL, EnvPostgres, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2"},
		{config.DBMySQL, EnvMySQL, "root@tcp(127.0.0.1:1)/test?timeout=2s"},
	}
	for _, tt := range tests {
		t.Run(tt.dbType, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			r := run(t, func(tb testing.TB) { Open(tb, tt.dbType) })
			if r.skipped {
				t.Fatal("the helper skipped instead of failing")
			}
			for _, want := range []string{"unreachable", tt.env, EnvDialects + "=sqlite"} {
				if !strings.Contains(r.fatal, want) {
					t.Errorf("fatal message %q lacks %q", r.fatal, want)
				}
			}
		})
	}
}

// TestOpenIsEmptyAndIsolated: every call gets its own empty database.
func TestOpenIsEmptyAndIsolated(t *testing.T) {
	for _, d := range Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			a := OpenMigrated(t, d)
			b := Open(t, d)
			if has, err := b.HasTables(ctx); err != nil || has {
				t.Fatalf("second database HasTables = %v, %v; want an empty database", has, err)
			}
			if _, err := a.Client.SysRole.Create().SetName("r").SetCode("r").Save(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := b.Client.SysRole.Query().Count(ctx); err != nil || n != 0 {
				t.Fatalf("second database sees %d roles (%v); want 0", n, err)
			}
		})
	}
}
