package sqllog_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/sqllog"
)

// fakeDriver answers every statement with err.
type fakeDriver struct {
	err     error
	dialect string
	closed  atomic.Bool
	stmts   atomic.Int64
}

func (f *fakeDriver) Exec(context.Context, string, any, any) error {
	f.stmts.Add(1)
	return f.err
}

func (f *fakeDriver) Query(context.Context, string, any, any) error {
	f.stmts.Add(1)
	return f.err
}

func (f *fakeDriver) Tx(context.Context) (dialect.Tx, error) { return dialect.NopTx(f), nil }
func (f *fakeDriver) Close() error                           { f.closed.Store(true); return nil }
func (f *fakeDriver) Dialect() string                        { return f.dialect }

// fakeBeginner also has BeginTx, like ent's *sql.Driver.
type fakeBeginner struct {
	*fakeDriver
	opts *sql.TxOptions
}

func (f *fakeBeginner) BeginTx(_ context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	f.opts = opts
	return dialect.NopTx(f.fakeDriver), nil
}

const insertUser = "INSERT INTO `sys_user` (`account`, `password_hash`, `enabled`) VALUES (?, ?, ?)"

var insertArgs = []any{"bob", "hunter2-hash", true}

func TestLoggingRules(t *testing.T) {
	boom := errors.New("boom: hunter2-hash rejected")
	tests := []struct {
		name      string
		opts      sqllog.Options
		level     hclog.Level // logger level (Logging:LogLevel:SmartAdmin.Sql)
		step      time.Duration
		err       error
		want      string // "" = nothing logged
		wantLevel string
	}{
		{name: "off and fast: nothing", step: 20 * time.Millisecond, level: hclog.Trace},
		{name: "enabled: info", opts: sqllog.Options{Enabled: true}, step: 20 * time.Millisecond, level: hclog.Trace,
			want: "[20.0 ms] INSERT", wantLevel: "[INFO]"},
		{name: "enabled under MinMillis: nothing", opts: sqllog.Options{Enabled: true, MinMillis: 30}, step: 20 * time.Millisecond, level: hclog.Trace},
		{name: "enabled at MinMillis: info", opts: sqllog.Options{Enabled: true, MinMillis: 20}, step: 20 * time.Millisecond, level: hclog.Trace,
			want: "[20.0 ms] INSERT", wantLevel: "[INFO]"},
		{name: "enabled but category at Warning: nothing", opts: sqllog.Options{Enabled: true}, step: 20 * time.Millisecond, level: hclog.Warn},
		{name: "slow while off: warning", opts: sqllog.Options{SlowMillis: 20}, step: 20 * time.Millisecond, level: hclog.Warn,
			want: "slow SQL [20.0 ms] INSERT", wantLevel: "[WARN]"},
		{name: "slow while enabled: one warning", opts: sqllog.Options{Enabled: true, SlowMillis: 20}, step: 20 * time.Millisecond, level: hclog.Trace,
			want: "slow SQL [20.0 ms] INSERT", wantLevel: "[WARN]"},
		{name: "under the slow threshold: nothing", opts: sqllog.Options{SlowMillis: 21}, step: 20 * time.Millisecond, level: hclog.Trace},
		{name: "failed while off: warning", step: 2 * time.Millisecond, err: boom, level: hclog.Warn,
			want: "failed SQL [2.0 ms] INSERT", wantLevel: "[WARN]"},
		{name: "failed and slow: failed wins", opts: sqllog.Options{SlowMillis: 1}, step: 2 * time.Millisecond, err: boom, level: hclog.Trace,
			want: "failed SQL [2.0 ms] INSERT", wantLevel: "[WARN]"},
		{name: "canceled: debug", step: 2 * time.Millisecond, err: fmt.Errorf("query: %w", context.Canceled), level: hclog.Trace,
			want: "canceled SQL [2.0 ms] INSERT", wantLevel: "[DEBUG]"},
		{name: "canceled at info level: nothing", step: 2 * time.Millisecond, err: context.Canceled, level: hclog.Info},
		{name: "category off: nothing", opts: sqllog.Options{Enabled: true, SlowMillis: 1}, step: 2 * time.Millisecond, err: boom, level: hclog.Off},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log, buf := newLog(tc.level)
			opts := tc.opts
			opts.Log = log
			opts.Now = newClock(tc.step).Now
			drv := sqllog.Wrap(&fakeDriver{err: tc.err, dialect: dialect.MySQL}, opts)
			err := drv.Exec(context.Background(), insertUser, insertArgs, nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Exec error = %v, want %v", err, tc.err)
			}
			out := buf.String()
			if strings.Contains(out, "hunter2-hash") {
				t.Fatalf("the log holds the masked value:\n%s", out)
			}
			if tc.want == "" {
				if out != "" {
					t.Fatalf("want nothing logged, got:\n%s", out)
				}
				return
			}
			lines := buf.Lines(tc.want)
			if len(lines) != 1 || strings.Count(out, "\n") != 1 {
				t.Fatalf("want exactly one line with %q, got:\n%s", tc.want, out)
			}
			line := lines[0]
			for _, want := range []string{tc.wantLevel, sqllog.Category + ":", "VALUES ('bob', '***', 1)"} {
				if !strings.Contains(line, want) {
					t.Errorf("line lacks %q: %s", want, line)
				}
			}
			if tc.err != nil && !strings.Contains(line, "error=") {
				t.Errorf("failed line lacks the error: %s", line)
			}
			if strings.Contains(line, "\x1b[") {
				t.Errorf("colour without Options.Color: %q", line)
			}
		})
	}
}

func TestColorAndTruncation(t *testing.T) {
	for _, color := range []bool{false, true} {
		t.Run(fmt.Sprint("color=", color), func(t *testing.T) {
			log, buf := newLog(hclog.Trace)
			drv := sqllog.Wrap(&fakeDriver{dialect: dialect.SQLite}, sqllog.Options{
				Log: log, Enabled: true, Color: color, MaxSQLChars: 20, Now: newClock(time.Millisecond).Now,
			})
			query := "SELECT * FROM t WHERE password = ? AND a = ?"
			if err := drv.Query(context.Background(), query, []any{"pw", strings.Repeat("x", 50)}, nil); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if got := strings.Contains(out, "\x1b["); got != color {
				t.Errorf("ANSI codes present = %v, want %v: %q", got, color, out)
			}
			// 20 characters kept, then the note with the rendered length.
			rendered := sqllog.Render(dialect.SQLite, query, []any{"pw", strings.Repeat("x", 50)})
			want := rendered[:20] + fmt.Sprintf("… (%d chars)", len(rendered))
			if !strings.Contains(out, want) {
				t.Errorf("want %q in %q", want, out)
			}
		})
	}
}

func TestDriverForwarding(t *testing.T) {
	ctx := context.Background()
	log, buf := newLog(hclog.Trace)
	opts := sqllog.Options{Log: log, Enabled: true}

	under := &fakeBeginner{fakeDriver: &fakeDriver{dialect: dialect.Postgres}}
	drv := sqllog.Wrap(under, opts)
	if drv.Dialect() != dialect.Postgres {
		t.Errorf("Dialect = %q", drv.Dialect())
	}
	beginner, ok := drv.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	})
	if !ok {
		t.Fatal("the wrapper has no BeginTx: ent's Client.BeginTx would panic")
	}
	txOpts := &sql.TxOptions{ReadOnly: true}
	tx, err := beginner.BeginTx(ctx, txOpts)
	if err != nil || under.opts != txOpts {
		t.Fatalf("BeginTx = %v, options forwarded %v", err, under.opts == txOpts)
	}
	if err := tx.Exec(ctx, `UPDATE "t" SET "token" = $1`, []any{"tok-value"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if lines := buf.Lines(`UPDATE "t" SET "token" = '***'`, "tx=true"); len(lines) != 1 || strings.Contains(buf.String(), "tok-value") {
		t.Errorf("transaction statement not logged masked:\n%s", buf)
	}
	tx2, err := drv.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = tx2.Query(ctx, "SELECT 1", []any{}, nil)
	_ = tx2.Rollback()
	if n := len(buf.Lines("SELECT 1", "tx=true")); n != 1 {
		t.Errorf("Tx statement logged %d times:\n%s", n, buf)
	}
	if err := drv.Close(); err != nil || !under.closed.Load() {
		t.Errorf("Close not forwarded: %v", err)
	}
	if u, ok := drv.(interface{ Unwrap() dialect.Driver }); !ok || u.Unwrap() != under {
		t.Error("Unwrap does not return the wrapped driver")
	}

	// Without BeginTx underneath: nil options fall back to Tx, others fail.
	plain := sqllog.Wrap(&fakeDriver{dialect: dialect.SQLite}, opts).(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	})
	if _, err := plain.BeginTx(ctx, nil); err != nil {
		t.Errorf("BeginTx(nil) without an underlying BeginTx: %v", err)
	}
	if _, err := plain.BeginTx(ctx, txOpts); err == nil {
		t.Error("BeginTx(options) without an underlying BeginTx succeeded")
	}
}

func TestStatsConcurrent(t *testing.T) {
	// Real clock: a shared step clock would interleave between goroutines.
	drv := sqllog.Wrap(&fakeDriver{dialect: dialect.SQLite}, sqllog.Options{})
	ctx, stats := sqllog.WithStats(context.Background())
	other, otherStats := sqllog.WithStats(context.Background())
	var wg sync.WaitGroup
	for g := 0; g < 20; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 10; k++ {
				_ = drv.Exec(ctx, "SELECT 1", []any{}, nil)
			}
			_ = drv.Query(other, "SELECT 2", []any{}, nil)
		}()
	}
	// Statements without a collector are not counted anywhere.
	_ = drv.Exec(context.Background(), "SELECT 3", []any{}, nil)
	wg.Wait()
	if stats.Count() != 200 || stats.Total() < 0 {
		t.Errorf("stats = %d, %v; want 200 statements", stats.Count(), stats.Total())
	}
	if otherStats.Count() != 20 {
		t.Errorf("other stats = %d, want 20", otherStats.Count())
	}
	if sqllog.StatsFrom(context.Background()) != nil {
		t.Error("StatsFrom(Background) != nil")
	}
	// A derived context keeps its collector.
	derived, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if sqllog.StatsFrom(derived) != stats {
		t.Error("derived context lost its collector")
	}
}

func TestSummary(t *testing.T) {
	drv := sqllog.Wrap(&fakeDriver{dialect: dialect.SQLite}, sqllog.Options{Now: newClock(10 * time.Millisecond).Now})
	tests := []struct {
		n    int
		want string
		ok   bool
	}{
		{0, "", false},
		{1, "SQL: 1 statement, 10.0 ms", true},
		{2, "SQL: 2 statements, 20.0 ms", true},
		{19, "SQL: 19 statements, 190.0 ms", true},
		{20, "SQL: 20 statements, 200.0 ms — suspected N+1 (20 statements)", true},
		{35, "SQL: 35 statements, 350.0 ms — suspected N+1 (35 statements)", true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			ctx, stats := sqllog.WithStats(context.Background())
			for k := 0; k < tc.n; k++ {
				_ = drv.Query(ctx, "SELECT 1", []any{}, nil)
			}
			line, ok := sqllog.Summary(stats)
			if line != tc.want || ok != tc.ok {
				t.Errorf("Summary = %q, %v; want %q, %v", line, ok, tc.want, tc.ok)
			}
		})
	}
	if line, ok := sqllog.Summary(nil); ok || line != "" {
		t.Errorf("Summary(nil) = %q, %v", line, ok)
	}
}

func TestColorDefault(t *testing.T) {
	yes, no := true, false
	regular, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = regular.Close() }()
	devNull, err := os.Open(os.DevNull) // a character device, like a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = devNull.Close() }()
	tests := []struct {
		name    string
		setting *bool
		file    *os.File
		noColor string
		want    bool
	}{
		{"set true wins over a file", &yes, regular, "", true},
		{"set true wins over NO_COLOR", &yes, regular, "1", true},
		{"set false wins over a terminal", &no, devNull, "", false},
		{"unset, regular file", nil, regular, "", false},
		{"unset, character device", nil, devNull, "", true},
		{"unset, character device, NO_COLOR", nil, devNull, "1", false},
		{"unset, no file", nil, nil, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			if got := sqllog.ColorDefault(tc.setting, tc.file); got != tc.want {
				t.Errorf("ColorDefault = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFromConfig(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = devNull.Close() }()
	yes := true
	tests := []struct {
		name      string
		edit      func(*config.Config)
		wantColor bool
		summary   bool
	}{
		{"defaults on a terminal", func(*config.Config) {}, true, false},
		{"file logging turns unset colour off", func(c *config.Config) { c.Logging.File = "logs/app.log" }, false, false},
		{"json turns unset colour off", func(c *config.Config) { c.Logging.Format = "json" }, false, false},
		{"explicit colour wins", func(c *config.Config) { c.Logging.File = "x.log"; c.Service.Database.SQLLog.Color = &yes }, true, false},
		{"enabled with summary", func(c *config.Config) { c.Service.Database.SQLLog.Enabled = true }, true, true},
		{"enabled without summary", func(c *config.Config) {
			c.Service.Database.SQLLog.Enabled = true
			c.Service.Database.SQLLog.RequestSummary = false
		}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Defaults()
			tc.edit(&cfg)
			o := sqllog.FromConfig(&cfg, nil, devNull)
			db := cfg.Service.Database
			if o.Enabled != db.SQLLog.Enabled || o.MinMillis != db.SQLLog.MinMillis || o.SlowMillis != db.SlowSQLMillis ||
				o.MaxSQLChars != db.SQLLog.MaxSQLChars || o.Color != tc.wantColor {
				t.Errorf("FromConfig = %+v (color want %v)", o, tc.wantColor)
			}
			if got := sqllog.RequestSummary(&cfg); got != tc.summary {
				t.Errorf("RequestSummary = %v, want %v", got, tc.summary)
			}
		})
	}
}
