package job

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/module"
)

// The kernel's compiled handlers.
const (
	// HandlerLogRetention deletes operation, login, exception and job log
	// rows older than sys.job.logRetentionDays (handlerParam {"days":n}
	// overrides it), never fewer days than sys.job.logRetentionFloorDays.
	HandlerLogRetention = "kernel.logRetention"
	// HandlerSessionCleanup deletes sessions (and their refresh tokens)
	// that expired or were revoked more than graceDays (default 7) ago.
	HandlerSessionCleanup = "kernel.sessionCleanup"
	// KeyLogRetentionDays is the sys_config key of the log retention.
	KeyLogRetentionDays = "sys.job.logRetentionDays"
)

type daysParam struct {
	Days      *int `json:"-"`
	GraceDays *int `json:"-"`
}

// paramInt is a whole number given as a JSON number or, as the contract's
// property bag sends every value, as a string ("30").
type paramInt struct{ v *int }

func (p *paramInt) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
		if s == "" {
			return nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	p.v = &n
	return nil
}

func readParam(s string) (daysParam, error) {
	var p daysParam
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	var raw struct {
		Days      paramInt `json:"days"`
		GraceDays paramInt `json:"graceDays"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return p, errors.New(`handlerParam must be a JSON object such as {"days": 30} or {"days": "30"}`)
	}
	p.Days, p.GraceDays = raw.Days.v, raw.GraceDays.v
	if (p.Days != nil && (*p.Days < 1 || *p.Days > 3650)) || (p.GraceDays != nil && (*p.GraceDays < 0 || *p.GraceDays > 3650)) {
		return p, errors.New("days must be 1-3650 and graceDays 0-3650")
	}
	return p, nil
}

// KernelHandlers are the kernel's own compiled handlers. Other modules
// (the files module's abandoned-upload cleanup, say) register theirs
// through module.Module.JobHandlers.
func (e *Engine) KernelHandlers() []module.JobHandler {
	return []module.JobHandler{
		{
			Name:        HandlerLogRetention,
			Description: "Deletes operation, login, exception and job log rows older than sys.job.logRetentionDays days",
			ParamSchema: `{"type":"object","properties":{"days":{"type":"integer","minimum":1,"maximum":3650}}}`,
			Run:         e.logRetention,
		},
		{
			Name:        HandlerSessionCleanup,
			Description: "Deletes sessions and refresh tokens that ended (expired or revoked) more than graceDays days ago",
			ParamSchema: `{"type":"object","properties":{"graceDays":{"type":"integer","minimum":0,"maximum":3650}}}`,
			Run:         e.sessionCleanup,
		},
	}
}

func (e *Engine) logRetention(ctx context.Context, run module.JobRun) (string, error) {
	p, err := readParam(run.Param)
	if err != nil {
		return "", err
	}
	days := 0
	if p.Days != nil {
		days = *p.Days
	} else if days, err = e.settings.Int(ctx, KeyLogRetentionDays); err != nil {
		return "", err
	}
	// Never below the floor, whatever the parameter or the setting say (a
	// row written before the floor, or by hand, included).
	if floor := e.retentionFloor(ctx); days < floor {
		days = floor
	}
	cutoff := e.now().AddDate(0, 0, -days)
	// Each module purges its own logs (module.Module.Retention); the job
	// log is this area's.
	parts := make([]string, 0, len(e.retention)+1)
	for _, r := range e.retention {
		n, err := r.Purge(ctx, cutoff)
		if err != nil {
			return "", fmt.Errorf("%s: %w", r.Name, err)
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, r.Name))
	}
	jobs, err := e.client.SysJobLog.Delete().Where(sysjoblog.StartTimeLT(cutoff), sysjoblog.RunStatusNEQ(RunRunning)).Exec(ctx)
	if err != nil {
		return "", err
	}
	parts = append(parts, fmt.Sprintf("%d job log", jobs))
	return fmt.Sprintf("kept %d days: deleted rows of %s", days, strings.Join(parts, ", ")), nil
}

// SetRetention installs the modules' purges of aging rows that the log
// retention runs (the kernel calls it once, after the modules registered).
func (e *Engine) SetRetention(r []module.Retention) { e.retention = r }

func (e *Engine) sessionCleanup(ctx context.Context, run module.JobRun) (string, error) {
	p, err := readParam(run.Param)
	if err != nil {
		return "", err
	}
	grace := 7
	if p.GraceDays != nil {
		grace = *p.GraceDays
	}
	if e.sessions == nil {
		return "", errors.New("no session service to purge")
	}
	// The session area purges its own rows: tokens of every ended session,
	// session rows ended more than grace days ago, in batches with flat
	// memory (session.Service.Purge).
	sessions, tokens, err := e.sessions.Purge(ctx, time.Duration(grace)*24*time.Hour)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted %d sessions that ended more than %d days ago and %d refresh tokens of ended sessions", sessions, grace, tokens), nil
}

// maxSQLRows is how many result rows a Sql job's output shows.
const maxSQLRows = 20

// sqlTimeout caps a Sql job's run (its timeoutSeconds when shorter): the
// context ends the statement, and the database is told too (PostgreSQL
// statement_timeout, MariaDB max_statement_time, MySQL
// max_execution_time) so a statement the client stopped waiting for does
// not run on.
const sqlTimeout = 5 * time.Minute

// runSQL runs a Sql job's statement (Service:Job:SqlEnabled only) in a
// read-only transaction unless Service:Job:SqlAllowWrite: PostgreSQL and
// MySQL/MariaDB begin it READ ONLY (START TRANSACTION READ ONLY), SQLite
// runs it on a connection with PRAGMA query_only. At most maxSQLRows rows
// are read, within sqlTimeout.
func (e *Engine) runSQL(ctx context.Context, stmt string) (string, error) {
	if !e.cfg.SQLEnabled {
		return "", errors.New("sql jobs are disabled (Service:Job:SqlEnabled)")
	}
	if e.db == nil || strings.TrimSpace(stmt) == "" {
		return "", errors.New("no statement")
	}
	limit := sqlTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < limit {
		limit = max(time.Until(dl), time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	switch {
	case e.dialect == dialect.SQLite && !e.cfg.SQLAllowWrite:
		// SQLite ignores a read-only transaction: query_only makes the
		// connection refuse writes until it is switched off again, before
		// the connection goes back to the pool.
		if _, err := conn.ExecContext(ctx, "PRAGMA query_only = ON"); err != nil {
			return "", err
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = OFF"); err != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // never reuse a read-only connection
			}
		}()
	case e.dialect == dialect.MySQL:
		// The session limit is MariaDB's (seconds) or MySQL's
		// (milliseconds, SELECT only); the connection is not reused, so the
		// limit leaves with it.
		defer func() { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }()
		secs := max(int(limit.Seconds()), 1)
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET SESSION max_statement_time = %d", secs)); err != nil {
			_, _ = conn.ExecContext(ctx, fmt.Sprintf("SET SESSION max_execution_time = %d", secs*1000))
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: !e.cfg.SQLAllowWrite})
	if err != nil {
		return "", err
	}
	if e.dialect == dialect.Postgres {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", max(limit.Milliseconds(), 1))); err != nil {
			return "", errors.Join(err, tx.Rollback())
		}
	}
	out, err := runStatement(ctx, tx, stmt)
	if err != nil {
		return out, errors.Join(err, tx.Rollback())
	}
	return out, tx.Commit()
}

func runStatement(ctx context.Context, tx *sql.Tx, stmt string) (string, error) {
	first := strings.ToUpper(strings.Fields(stmt)[0])
	switch first {
	case "SELECT", "WITH", "SHOW", "EXPLAIN", "VALUES":
	default:
		res, err := tx.ExecContext(ctx, stmt)
		if err != nil {
			return "", err
		}
		n, _ := res.RowsAffected()
		return fmt.Sprintf("%d rows affected", n), nil
	}
	rows, err := tx.QueryContext(ctx, stmt)
	if err != nil {
		return "", err
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(strings.Join(cols, "\t"))
	n := 0
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		n++
		if n > maxSQLRows {
			// The row cap: the rest is not read.
			fmt.Fprintf(&b, "\n(more than %d rows: the rest was not read)", maxSQLRows)
			return b.String(), nil
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		b.WriteByte('\n')
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('\t')
			}
			if v.Valid {
				b.WriteString(v.String)
			} else {
				b.WriteString("NULL")
			}
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\n(%d rows)", n)
	return b.String(), nil
}
