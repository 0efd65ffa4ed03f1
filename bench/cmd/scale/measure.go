package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/bench/internal/load"
)

// scenario is one measured request.
type scenario struct {
	name, path string
	token      string
	explain    bool // capture and EXPLAIN the statements it runs
}

type result struct {
	Name  string  `json:"name"`
	Count int64   `json:"requests"`
	RPS   float64 `json:"rps"`
	P50   float64 `json:"p50Ms"`
	P99   float64 `json:"p99Ms"`
	Max   float64 `json:"maxMs"`
	Rows  string  `json:"note,omitempty"`
}

// measure starts the kernel on the filled database and measures the
// scenarios; the report goes to <out>/scale-<db>.md and .json.
func measure(ctx context.Context, o options, t *target) error {
	// The measurement is of the database, not of the rate limiter: the
	// switch is a sys_config row, set before the kernel starts.
	if _, err := t.db.ExecContext(ctx, "UPDATE sys_config SET config_value = 'false' WHERE config_key = 'sys.security.rateLimit.enabled'"); err != nil {
		return err
	}
	logPath := filepath.Join(o.out, "scale-"+t.kind+"-kernel.log")
	k, err := startKernel(ctx, o, t, logPath)
	if err != nil {
		return err
	}
	defer k.stop()
	c := &client{base: k.base, http: &http.Client{Timeout: time.Minute}}
	admin, err := c.login(ctx, "superAdmin", adminPassword)
	if err != nil {
		return err
	}
	scoped, err := c.login(ctx, scopeAccount, userPassword)
	if err != nil {
		return err
	}
	var rep report
	rep.header(o, t)
	if o.only == "resources" {
		if err := fillStock(ctx, o, t); err != nil {
			return err
		}
		if err := resourceScenarios(ctx, c, o, t, logPath, admin, scoped, &rep); err != nil {
			return err
		}
		return rep.write(o, t)
	}
	if o.only == "" || o.only == "pages" {
		if err := pageScenarios(ctx, c, o, t, logPath, admin, scoped, &rep); err != nil {
			return err
		}
	}
	// Sessions at scale: login, refresh and force-logout of the user who
	// holds 1 000 sessions.
	if o.only == "" || o.only == "sessions" {
		if err := sessionScenarios(ctx, c, t, admin, &rep); err != nil {
			return err
		}
	}
	if o.only != "" && o.only != "refresh" {
		return rep.write(o, t)
	}
	r, err := refreshThroughput(ctx, c, o, k)
	if err != nil {
		return err
	}
	rep.add(r)
	return rep.write(o, t)
}

// pageScenarios measures the admin pages (with their plans), searches with
// a new term each time, and the login and permission load of the 50-role
// user.
func pageScenarios(ctx context.Context, c *client, o options, t *target, logPath, admin, scoped string, rep *report) error {
	users := "/api/v1/sys/user/page"
	scenarios := []scenario{
		{"user page 1 (super-admin, all 1M)", users + "?Current=1&Size=20", admin, true},
		{"user page 100 (super-admin)", users + "?Current=100&Size=20", admin, true},
		{"user name search (super-admin, 1 % match)", users + "?Current=1&Size=20&Name=" + searchFamily, admin, true},
		{"user account search (super-admin, prefix)", users + "?Current=1&Size=20&Account=u00012", admin, true},
		{"user page 1 (scope: org and below, ~10 %)", users + "?Current=1&Size=20", scoped, true},
		{"user page 100 (scope: org and below)", users + "?Current=100&Size=20", scoped, true},
		{"online sessions page 1 (super-admin)", "/api/v1/sys/session/online?Current=1&Size=20", admin, true},
	}
	if err := runScenarios(ctx, c, o, t, logPath, scenarios, rep); err != nil {
		return err
	}

	// Searches whose total is not cached yet: a new term every request, so
	// every request counts (the scenarios above repeat one term, whose
	// total is counted once per Service:Cache:ListTotalSeconds).
	var names []string
	for _, f := range families {
		if len(f) >= 6 && f != searchFamily && len(names) < 20 {
			names = append(names, f)
		}
	}
	for _, fresh := range []struct {
		name, param string
		term        func(i int) string
	}{
		{"user name search, a new term each request (1 % match)", "Name", func(i int) string { return names[i] }},
		{"user account search, a new term each request (100 match)", "Account", func(i int) string { return fmt.Sprintf("u%05d", 13+i) }},
	} {
		i := 0
		r, err := c.timed(ctx, fresh.name, len(names), func() error {
			_, err := c.do(ctx, http.MethodGet, users+"?Current=1&Size=20&"+fresh.param+"="+fresh.term(i), admin, nil)
			i++
			return err
		})
		if err != nil {
			return err
		}
		rep.add(r)
	}

	// Login and permission load of a user with 50 roles against one with one.
	for _, acc := range []string{oneAccount, rolesAccount} {
		r, err := c.timed(ctx, "login "+acc+" (PBKDF2 600 000 included)", 20, func() error {
			_, err := c.login(ctx, acc, userPassword)
			return err
		})
		if err != nil {
			return err
		}
		rep.add(r)
		tok, err := c.login(ctx, acc, userPassword)
		if err != nil {
			return err
		}
		r, err = c.load(ctx, o, scenario{name: "personal/permissions " + acc, path: "/api/v1/personal/permissions", token: tok})
		if err != nil {
			return err
		}
		rep.add(r)
	}

	return nil
}

// runScenarios measures each scenario (with its plans unless -no-explain)
// and adds it to the report.
func runScenarios(ctx context.Context, c *client, o options, t *target, logPath string, scenarios []scenario, rep *report) error {
	for _, s := range scenarios {
		if !o.skipExplan && s.explain {
			stmts, err := c.capture(ctx, logPath, s)
			if err != nil {
				return err
			}
			if err := rep.explain(ctx, t, s.name, stmts); err != nil {
				return err
			}
		}
		r, err := c.load(ctx, o, s)
		if err != nil {
			// Too slow to complete within the window on o.conns
			// connections: time a few requests one after another instead.
			logf("%s: %v; timing 5 sequential requests", s.name, err)
			r, err = c.timed(ctx, s.name+" (sequential)", 5, func() error {
				_, err := c.do(ctx, http.MethodGet, s.path, s.token, nil)
				return err
			})
			if err != nil {
				return err
			}
		}
		rep.add(r)
	}
	return nil
}

// refreshThroughput rotates refresh tokens as fast as 16 clients can, each
// with its own session (a real rotation each time: the token sent is the
// one the previous refresh returned), for twice o.duration, and reports
// the rate, the latencies and the kernel's CPU per refresh.
func refreshThroughput(ctx context.Context, c *client, o options, k *kernel) (result, error) {
	const clients = 16
	tokens := make([]string, clients)
	for i := range tokens {
		_, rt, err := c.loginPair(ctx, oneAccount, userPassword)
		if err != nil {
			return result{}, err
		}
		tokens[i] = rt
	}
	d := 2 * o.duration
	cpu0 := procCPU(k.cmd.Process.Pid)
	start := time.Now()
	end := start.Add(d)
	lat := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	for i := range clients {
		go func() {
			rt := tokens[i]
			for time.Now().Before(end) {
				t0 := time.Now()
				next, err := c.refresh(ctx, rt)
				if err != nil {
					errs <- err
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
				rt = next
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			return result{}, fmt.Errorf("refresh throughput: %w", err)
		}
	}
	elapsed := time.Since(start)
	cpu := procCPU(k.cmd.Process.Pid) - cpu0
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	r := summarise(fmt.Sprintf("refresh throughput (%d clients, own sessions)", clients), all)
	r.RPS = float64(len(all)) / elapsed.Seconds()
	r.Rows = fmt.Sprintf("%.0f refreshes/s per core (%d cores); kernel CPU %.2f ms per refresh",
		r.RPS/float64(runtime.NumCPU()), runtime.NumCPU(), cpu.Seconds()*1e3/float64(len(all)))
	logf("%s", r.Rows)
	return r, nil
}

// procCPU is the user+system CPU time of a process (/proc/<pid>/stat).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start after ')'.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// sessionScenarios measures the user with 1 000 sessions.
func sessionScenarios(ctx context.Context, c *client, t *target, admin string, rep *report) error {
	var refresh string
	r, err := c.timed(ctx, "login "+manyAccount+" (1 000 sessions; PBKDF2 included)", 20, func() error {
		var err error
		_, refresh, err = c.loginPair(ctx, manyAccount, userPassword)
		return err
	})
	if err != nil {
		return err
	}
	rep.add(r)
	r, err = c.timed(ctx, "refresh "+manyAccount, 50, func() error {
		var err error
		refresh, err = c.refresh(ctx, refresh)
		return err
	})
	if err != nil {
		return err
	}
	rep.add(r)
	userID := userBase + 3
	reset := func() error { // give the sessions back (the measurement revokes them)
		//nolint:gosec // G202: only the dialect's placeholders are concatenated
		_, err := t.db.ExecContext(ctx, "UPDATE sys_session SET revoked_at = NULL, revoke_reason = NULL WHERE user_id = "+t.ph(1)+" AND id < "+t.ph(2),
			userID, sessionBase+manySessions)
		return err
	}
	var total time.Duration
	var samples []time.Duration
	for range 30 {
		if err := reset(); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := c.do(ctx, http.MethodPut, fmt.Sprintf("/api/v1/sys/user/%d/enabled", userID), admin, map[string]bool{"enabled": false}); err != nil {
			return err
		}
		d := time.Since(t0)
		samples, total = append(samples, d), total+d
		if _, err := c.do(ctx, http.MethodPut, fmt.Sprintf("/api/v1/sys/user/%d/enabled", userID), admin, map[string]bool{"enabled": true}); err != nil {
			return err
		}
	}
	rep.add(summarise("disable "+manyAccount+" (revokes 1 000 sessions)", samples))
	if err := reset(); err != nil {
		return err
	}

	// Cleaning the expired and revoked sessions (a third and a tenth of
	// the rows): session.Purge in batches, timed through its SQL.
	return nil
}

// client is a small envelope client.
type client struct {
	base string
	http *http.Client
}

func (c *client) do(ctx context.Context, method, path, token string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || resp.StatusCode != http.StatusOK || env.Code != 0 {
		return nil, fmt.Errorf("%s %s: HTTP %d: %.300s", method, path, resp.StatusCode, raw)
	}
	return env.Data, nil
}

func (c *client) loginPair(ctx context.Context, account, pw string) (access, refresh string, err error) {
	data, err := c.do(ctx, http.MethodPost, "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
	if err != nil {
		return "", "", err
	}
	var out struct {
		AccessToken  string `json:"accessToken"`
		RefreshToken string `json:"refreshToken"`
	}
	if err := json.Unmarshal(data, &out); err != nil || out.AccessToken == "" {
		return "", "", fmt.Errorf("login %s: no token in %.200s", account, data)
	}
	return out.AccessToken, out.RefreshToken, nil
}

func (c *client) login(ctx context.Context, account, pw string) (string, error) {
	a, _, err := c.loginPair(ctx, account, pw)
	return a, err
}

func (c *client) refresh(ctx context.Context, rt string) (string, error) {
	data, err := c.do(ctx, http.MethodPost, "/api/v1/auth/refresh", "", map[string]string{"refreshToken": rt})
	if err != nil {
		return "", err
	}
	var out struct {
		RefreshToken string `json:"refreshToken"`
	}
	if err := json.Unmarshal(data, &out); err != nil || out.RefreshToken == "" {
		return "", fmt.Errorf("refresh: no token in %.200s", data)
	}
	return out.RefreshToken, nil
}

// load runs s for o.duration on o.conns connections.
func (c *client) load(ctx context.Context, o options, s scenario) (result, error) {
	res, err := load.Run(ctx, load.Config{
		URL: c.base + s.path, Header: http.Header{"Authorization": {"Bearer " + s.token}},
		Connections: o.conns, Duration: o.duration, Warmup: time.Second, Expect: http.StatusOK,
	})
	if err != nil {
		return result{}, err
	}
	if res.Errors > 0 {
		return result{}, fmt.Errorf("%s: %d errors (%s)", s.name, res.Errors, res.FirstError)
	}
	return result{Name: s.name, Count: res.Requests, RPS: res.RPS, P50: res.P50Us / 1e3, P99: res.P99Us / 1e3, Max: res.MaxUs / 1e3}, nil
}

// timed runs fn n times one after another and summarises the durations.
func (c *client) timed(_ context.Context, name string, n int, fn func() error) (result, error) {
	var samples []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := fn(); err != nil {
			return result{}, fmt.Errorf("%s: %w", name, err)
		}
		samples = append(samples, time.Since(t0))
	}
	return summarise(name, samples), nil
}

func summarise(name string, samples []time.Duration) result {
	slices.Sort(samples)
	var sum time.Duration
	for _, d := range samples {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	return result{Name: name, Count: int64(len(samples)), RPS: float64(len(samples)) / sum.Seconds(),
		P50: ms(load.Percentile(samples, 50)), P99: ms(load.Percentile(samples, 99)), Max: ms(samples[len(samples)-1])}
}

// sqlLine matches the message of an SQL-log line: "[1.2 ms] SELECT ..." (or "slow SQL [...] ..." past the slow threshold).
var sqlLine = regexp.MustCompile(`^(?:slow SQL )?\[[0-9.]+ ms\] (.*)$`)

// capture sends s once and returns the statements it ran, read from the
// kernel's SQL log (JSON lines).
func (c *client) capture(ctx context.Context, logPath string, s scenario) ([]string, error) {
	before, err := os.Stat(logPath)
	if err != nil {
		return nil, err
	}
	if _, err := c.do(ctx, http.MethodGet, s.path, s.token, nil); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond) // the log is written asynchronously
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(before.Size(), io.SeekStart); err != nil {
		return nil, err
	}
	var stmts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		msg, _ := line["@message"].(string)
		if m := sqlLine.FindStringSubmatch(msg); m != nil {
			up := strings.ToUpper(m[1])
			if strings.HasPrefix(up, "SELECT") && (strings.Contains(m[1], "sys_user") || strings.Contains(m[1], "sys_session") || strings.Contains(m[1], "inv_stock_level")) {
				stmts = append(stmts, m[1])
			}
		}
	}
	return stmts, sc.Err()
}

// report collects the results and the plans.
type report struct {
	md      strings.Builder
	results []result
	plans   strings.Builder
}

func (r *report) header(o options, t *target) {
	host, _ := os.Hostname()
	load1, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&r.md, "# Scale run: %s, %d users, %d orgs, %d sessions\n\n", t.kind, o.users, o.orgs, o.sessions)
	fmt.Fprintf(&r.md, "- %s, host %s, %d CPUs (GOMAXPROCS %d), load average at start: %s", time.Now().UTC().Format(time.RFC3339), host, runtime.NumCPU(), runtime.GOMAXPROCS(0), load1)
	fmt.Fprintf(&r.md, "- %d connections, %s per scenario after 1 s of warm-up; single-request scenarios are sequential\n\n", o.conns, o.duration)
	r.md.WriteString("| scenario | requests | req/s | p50 ms | p99 ms | max ms | note |\n|---|---:|---:|---:|---:|---:|---|\n")
}

func (r *report) add(x result) {
	r.results = append(r.results, x)
	fmt.Fprintf(&r.md, "| %s | %d | %.0f | %.1f | %.1f | %.1f | %s |\n", x.Name, x.Count, x.RPS, x.P50, x.P99, x.Max, x.Rows)
	logf("%-55s p50 %7.1f ms  p99 %7.1f ms  %6.0f req/s", x.Name, x.P50, x.P99, x.RPS)
}

// explain runs EXPLAIN (ANALYZE) for each statement and appends the plans.
func (r *report) explain(ctx context.Context, t *target, name string, stmts []string) error {
	fmt.Fprintf(&r.plans, "\n### %s\n", name)
	if len(stmts) == 0 {
		r.plans.WriteString("\n(no sys_user, sys_session or inv_stock_level statement: answered from the cache)\n")
	}
	for _, s := range stmts {
		prefix := "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "
		if t.kind == "sqlite" {
			prefix = "EXPLAIN QUERY PLAN "
		}
		if t.kind == "mysql" {
			prefix = "ANALYZE " // MariaDB: the plan with r_rows and r_filtered (the statement runs)
			if strings.Contains(strings.ToUpper(s), " FOR UPDATE") {
				prefix = "EXPLAIN "
			}
		}
		fmt.Fprintf(&r.plans, "\n```sql\n%s\n```\n\n```text\n", s)
		if err := r.plan(ctx, t, prefix+s); err != nil {
			return err
		}
		r.plans.WriteString("```\n")
	}
	return nil
}

// plan appends the rows of one EXPLAIN (a failure is written into the
// report, not returned: a statement the dialect cannot explain is noted).
func (r *report) plan(ctx context.Context, t *target, stmt string) error {
	rows, err := t.db.QueryContext(ctx, stmt)
	if err != nil {
		fmt.Fprintf(&r.plans, "EXPLAIN failed: %v\n", err)
		return nil
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		var parts []string
		for _, v := range vals {
			switch x := v.(type) {
			case []byte:
				parts = append(parts, string(x))
			case nil:
				parts = append(parts, "NULL")
			default:
				parts = append(parts, fmt.Sprint(x))
			}
		}
		r.plans.WriteString(strings.Join(parts, " | ") + "\n")
	}
	return rows.Err()
}

func (r *report) write(o options, t *target) error {
	out := r.md.String() + "\n## Plans\n" + r.plans.String()
	name := "scale-" + t.kind
	if o.only == "resources" {
		name += "-resources"
	}
	path := filepath.Join(o.out, name+".md")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(r.results, "", "  ")
	if err != nil {
		return err
	}
	logf("report: %s", path)
	return os.WriteFile(filepath.Join(o.out, name+".json"), raw, 0o600)
}
