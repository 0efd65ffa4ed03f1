// Package sqllog is the kernel's SQL log: a wrapper around ent's
// dialect.Driver that measures every statement (also inside transactions)
// and logs it with its parameters inlined and sensitive ones masked.
//
// What is logged, on the category logger Category ("SmartAdmin.Sql", so
// that Logging:LogLevel:SmartAdmin.Sql applies):
//
//   - Options.Enabled (Service:Database:SqlLog:Enabled): every statement that
//     took at least Options.MinMillis, at Info, as "[1.2 ms] <statement>".
//     Info (not Debug) so that enabling the log is enough to see it at the
//     default level, and a category level of Warning keeps only the slow
//     and failed statements.
//   - Always, whether Enabled or not: statements that took at least
//     Options.SlowMillis (when > 0; Service:Database:SlowSqlMillis) at Warn
//     as "slow SQL [612.0 ms] <statement>", and statements that failed at
//     Warn as "failed SQL [1.0 ms] <statement>" with the error. A statement
//     that fails because its context was canceled (client gone) is logged at
//     Debug as "canceled SQL" instead, and one that fails because the
//     database could not be reached (database.IsUnavailable) at Debug as
//     "unreachable SQL" (the outage is logged once). Each statement gives at most one
//     line: failed, else slow, else the Info line.
//
// Parameters are inlined (see Render); a parameter bound to a column whose
// name is a config.SensitiveName is rendered '***', in every line, and the
// values of masked string parameters are also blanked out of error texts
// (MySQL quotes duplicate entries). Statements longer than
// Options.MaxSQLChars are cut with a note "… (N chars)".
//
// Per-request statistics: WithStats attaches a collector to a context; every
// statement run with that context (or in a transaction begun with it) adds
// to its count and total time, whatever MinMillis says. Middleware installs
// one per HTTP request and logs Summary at the end.
package sqllog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/logging"
)

// Category is the logger category of the SQL log (Logging:LogLevel key).
const Category = "SmartAdmin.Sql"

// Options configure Wrap.
type Options struct {
	// Log receives the lines; nil discards them. Use the Category logger.
	Log hclog.Logger
	// Enabled prints every statement at least MinMillis slow at Info.
	Enabled bool
	// MinMillis is the minimum duration of a printed statement (0 = all).
	// It applies to the Enabled lines only.
	MinMillis int
	// SlowMillis is the slow-SQL threshold: statements at least this slow
	// are logged at Warn even when Enabled is false. 0 or less = off.
	SlowMillis int
	// MaxSQLChars bounds the rendered statement (DefaultMaxSQLChars when 0
	// or less).
	MaxSQLChars int
	// Color adds ANSI colours to the lines (see ColorDefault).
	Color bool
	// Observe, when not nil, is called for every statement after it ran
	// (with the statement's context, the parametrised statement text — no
	// parameter values —, its start and duration and its error): the
	// kernel's query-latency metric and SQL spans (host/tracing).
	Observe func(ctx context.Context, query string, start time.Time, elapsed time.Duration, err error)
	// Now is the clock (time.Now when nil); it must be safe for concurrent
	// use. Tests inject a fake one.
	Now func() time.Time
}

// Wrap returns drv with the SQL log around it. The result forwards
// Dialect, Close, Tx and BeginTx (when drv has it; ent's Client.BeginTx
// needs it), ExecContext and QueryContext (when drv has them), and logs
// the statements of the transactions it begins too.
func Wrap(drv dialect.Driver, opts Options) dialect.Driver {
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxSQLChars <= 0 {
		opts.MaxSQLChars = DefaultMaxSQLChars
	}
	return &logDriver{drv: drv, opts: opts, dialect: drv.Dialect()}
}

// logDriver is the dialect.Driver returned by Wrap.
type logDriver struct {
	drv     dialect.Driver
	opts    Options
	dialect string
}

var (
	_ dialect.Driver = (*logDriver)(nil)
	_ dialect.Tx     = (*logTx)(nil)
)

type execContexter interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type queryContexter interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type beginTxer interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error)
}

// Unwrap returns the wrapped driver.
func (d *logDriver) Unwrap() dialect.Driver { return d.drv }

// Dialect implements dialect.Driver.
func (d *logDriver) Dialect() string { return d.drv.Dialect() }

// Close implements dialect.Driver.
func (d *logDriver) Close() error { return d.drv.Close() }

// Exec implements dialect.Driver.
func (d *logDriver) Exec(ctx context.Context, query string, args, v any) error {
	start := d.opts.Now()
	err := d.drv.Exec(ctx, query, args, v)
	d.observe(ctx, nil, query, args, start, err)
	return err
}

// Query implements dialect.Driver.
func (d *logDriver) Query(ctx context.Context, query string, args, v any) error {
	start := d.opts.Now()
	err := d.drv.Query(ctx, query, args, v)
	d.observe(ctx, nil, query, args, start, err)
	return err
}

// ExecContext runs the wrapped driver's ExecContext, logged.
func (d *logDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ex, ok := d.drv.(execContexter)
	if !ok {
		return nil, fmt.Errorf("sqllog: the wrapped %T has no ExecContext", d.drv)
	}
	start := d.opts.Now()
	res, err := ex.ExecContext(ctx, query, args...)
	d.observe(ctx, nil, query, args, start, err)
	return res, err
}

// QueryContext runs the wrapped driver's QueryContext, logged.
func (d *logDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q, ok := d.drv.(queryContexter)
	if !ok {
		return nil, fmt.Errorf("sqllog: the wrapped %T has no QueryContext", d.drv)
	}
	start := d.opts.Now()
	rows, err := q.QueryContext(ctx, query, args...)
	d.observe(ctx, nil, query, args, start, err)
	return rows, err
}

// Tx implements dialect.Driver.
func (d *logDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.drv.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return &logTx{tx: tx, d: d, ctx: ctx}, nil
}

// BeginTx starts a transaction with options (ent's Client.BeginTx). When
// the wrapped driver has no BeginTx, a nil opts falls back to Tx.
func (d *logDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	b, ok := d.drv.(beginTxer)
	if !ok {
		if opts == nil {
			return d.Tx(ctx)
		}
		return nil, fmt.Errorf("sqllog: the wrapped %T does not support BeginTx", d.drv)
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &logTx{tx: tx, d: d, ctx: ctx}, nil
}

// logTx is a transaction begun through logDriver.
type logTx struct {
	tx  dialect.Tx
	d   *logDriver
	ctx context.Context // the context the transaction was begun with
}

// Exec implements dialect.Tx.
func (t *logTx) Exec(ctx context.Context, query string, args, v any) error {
	start := t.d.opts.Now()
	err := t.tx.Exec(ctx, query, args, v)
	t.d.observe(ctx, t.ctx, query, args, start, err)
	return err
}

// Query implements dialect.Tx.
func (t *logTx) Query(ctx context.Context, query string, args, v any) error {
	start := t.d.opts.Now()
	err := t.tx.Query(ctx, query, args, v)
	t.d.observe(ctx, t.ctx, query, args, start, err)
	return err
}

// ExecContext runs the wrapped transaction's ExecContext, logged.
func (t *logTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ex, ok := t.tx.(execContexter)
	if !ok {
		return nil, fmt.Errorf("sqllog: the wrapped %T has no ExecContext", t.tx)
	}
	start := t.d.opts.Now()
	res, err := ex.ExecContext(ctx, query, args...)
	t.d.observe(ctx, t.ctx, query, args, start, err)
	return res, err
}

// QueryContext runs the wrapped transaction's QueryContext, logged.
func (t *logTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q, ok := t.tx.(queryContexter)
	if !ok {
		return nil, fmt.Errorf("sqllog: the wrapped %T has no QueryContext", t.tx)
	}
	start := t.d.opts.Now()
	rows, err := q.QueryContext(ctx, query, args...)
	t.d.observe(ctx, t.ctx, query, args, start, err)
	return rows, err
}

// Commit implements dialect.Tx.
func (t *logTx) Commit() error { return t.tx.Commit() }

// Rollback implements dialect.Tx.
func (t *logTx) Rollback() error { return t.tx.Rollback() }

// Unwrap returns the wrapped transaction.
func (t *logTx) Unwrap() dialect.Tx { return t.tx }

// ANSI colours.
const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
	ansiCyan   = "\x1b[36m"
)

// observe records one statement: statistics, then at most one log line.
// txCtx is the context a transaction was begun with (nil outside one).
func (d *logDriver) observe(ctx, txCtx context.Context, query string, args any, start time.Time, err error) {
	elapsed := d.opts.Now().Sub(start)
	if d.opts.Observe != nil {
		d.opts.Observe(ctx, query, start, elapsed, err)
	}
	if s := StatsFrom(ctx); s != nil {
		s.add(elapsed)
	} else if txCtx != nil {
		if s := StatsFrom(txCtx); s != nil {
			s.add(elapsed)
		}
	}

	log := d.opts.Log
	var (
		level  hclog.Level
		prefix string
		color  string
	)
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		level, prefix, color = hclog.Debug, "canceled SQL ", ansiYellow
	case err != nil && database.IsUnavailable(err):
		// The database could not be reached: its tracker logs the outage
		// once (host/outage), not a line per statement.
		level, prefix, color = hclog.Debug, "unreachable SQL ", ansiYellow
	case err != nil:
		level, prefix, color = hclog.Warn, "failed SQL ", ansiRed
	case d.opts.SlowMillis > 0 && elapsed >= time.Duration(d.opts.SlowMillis)*time.Millisecond:
		level, prefix, color = hclog.Warn, "slow SQL ", ansiYellow
	case d.opts.Enabled && elapsed >= time.Duration(d.opts.MinMillis)*time.Millisecond:
		level, color = hclog.Info, ansiGreen
	default:
		return
	}
	if !enabledAt(log, level) {
		return
	}

	argv, _ := args.([]any)
	text, masked := render(d.dialect, query, argv)
	text = truncate(text, d.opts.MaxSQLChars)
	tag := "[" + strconv.FormatFloat(float64(elapsed)/float64(time.Millisecond), 'f', 1, 64) + " ms]"
	var msg string
	if d.opts.Color {
		msg = prefix + color + tag + ansiReset + " " + ansiCyan + text + ansiReset
	} else {
		msg = prefix + tag + " " + text
	}
	// request_id, trace_id and span_id of the statement's context, else of
	// the context its transaction was begun with.
	kv := logging.CtxArgs(ctx)
	if len(kv) == 0 && txCtx != nil {
		kv = logging.CtxArgs(txCtx)
	}
	if txCtx != nil {
		kv = append(kv, "tx", true)
	}
	if err != nil {
		kv = append(kv, "error", scrub(err.Error(), argv, masked))
	}
	switch level {
	case hclog.Debug:
		log.Debug(msg, kv...)
	case hclog.Info:
		log.Info(msg, kv...)
	default:
		log.Warn(msg, kv...)
	}
}

func enabledAt(log hclog.Logger, level hclog.Level) bool {
	switch level {
	case hclog.Debug:
		return log.IsDebug()
	case hclog.Info:
		return log.IsInfo()
	default:
		return log.IsWarn()
	}
}

// minScrubLen: masked values shorter than this are not searched for in
// error texts (they would blank out ordinary words).
const minScrubLen = 3

// scrub blanks the values of the masked string parameters out of an error
// text: drivers may quote the offending value (MySQL "Duplicate entry
// '...'").
func scrub(msg string, args []any, masked map[int]bool) string {
	for i := range masked {
		if i < 0 || i >= len(args) {
			continue
		}
		var s string
		switch v := args[i].(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		case sql.NamedArg:
			switch w := v.Value.(type) {
			case string:
				s = w
			case []byte:
				s = string(w)
			}
		}
		if len(s) >= minScrubLen {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	return msg
}
