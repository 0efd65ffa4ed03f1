package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adminkernel/kernel/bench/internal/load"
	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/password"
)

// Login storm (docs/design/benchmarks.md "Login storm"): authenticated pings idle,
// then the same pings while -storm-clients clients log in continuously;
// login throughput against the PBKDF2 limit. One run per -storm-pools value
// (Service:Security:Password:HashConcurrency; 0 = the kernel's default).

// stormRun is one storm at one pool size.
type stormRun struct {
	PoolSetting     int     `json:"poolSetting"`
	Clients         int     `json:"clients"`
	HonourRetry     bool    `json:"honourRetryAfter"`
	GOMAXPROCS      int     `json:"gomaxprocs"`
	VerifyMs        float64 `json:"verifyMs"`
	LimitGOMAXPROCS float64 `json:"limitGomaxprocsPerSec"`
	LimitPool       float64 `json:"limitPoolPerSec"`
	// LimitObserved is pool × 1/(the server's mean hash time during the
	// measured window, from the pool's busy time and completed count):
	// the limit at the CPU share the server actually had.
	LimitObserved   float64   `json:"limitObservedPerSec"`
	WindowHashMs    float64   `json:"windowHashMillis"`
	WindowHashes    uint64    `json:"windowHashes"`
	Idle            httpRun   `json:"idle"`
	Storm           httpRun   `json:"storm"`
	Logins          int64     `json:"logins"`
	LoginsPerSec    float64   `json:"loginsPerSec"`
	LoginP50Ms      float64   `json:"loginP50Ms"`
	LoginP99Ms      float64   `json:"loginP99Ms"`
	Refused         int64     `json:"refused503"`
	RefusedBadShape int64     `json:"refusedWithoutRetryAfterOr40008"`
	OtherErrors     int64     `json:"otherErrors"`
	FirstError      string    `json:"firstError,omitempty"`
	Pool            poolStats `json:"pool"`
	LoadBefore      string    `json:"loadAvgBefore"`
	LoadAfter       string    `json:"loadAvgAfter"`
}

// poolStats is the part of the snapshot's passwordHashing the storm reads.
type poolStats struct {
	Concurrency int     `json:"concurrency"`
	Queue       int     `json:"queueCapacity"`
	PeakRunning int64   `json:"peakRunning"`
	PeakWaiting int64   `json:"peakWaiting"`
	Completed   uint64  `json:"completed"`
	AvgHashMs   float64 `json:"avgHashMillis"`
	BusyMs      int64   `json:"busyMillis"`
	Rejected    uint64  `json:"rejected"`
	TimedOut    uint64  `json:"timedOut"`
}

// snapshotPool reads passwordHashing from the server snapshot (zero on
// failure).
func snapshotPool(ctx context.Context, a *api, admin string) poolStats {
	var snap struct {
		PasswordHashing poolStats `json:"passwordHashing"`
	}
	if rep, err := a.do(ctx, http.MethodGet, "/api/v1/sys/monitor/server", admin, nil); err == nil {
		_ = json.Unmarshal(rep.Data, &snap)
	}
	return snap.PasswordHashing
}

// stormPools parses -storm-pools ("0,1,2").
func stormPools(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-storm-pools: %q is not a pool size", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		out = []int{0}
	}
	return out, nil
}

// stormPhase runs the storm once per pool size, each on a fresh start of
// the kernel (in-process cache) on the shared content root.
func (r *runner) stormPhase(ctx context.Context) error {
	pools, err := stormPools(r.o.stormPools)
	if err != nil {
		return err
	}
	for _, p := range pools {
		run, err := r.storm(ctx, p)
		if err != nil {
			return err
		}
		r.res.Storm = append(r.res.Storm, run)
	}
	return nil
}

func (r *runner) storm(ctx context.Context, poolSize int) (stormRun, error) {
	run := stormRun{PoolSetting: poolSize, Clients: r.o.stormClients, HonourRetry: !r.o.stormRude, LoadBefore: loadAvg()}
	r.extraEnv = nil
	if poolSize > 0 {
		r.extraEnv = []string{fmt.Sprintf("Service__Security__Password__HashConcurrency=%d", poolSize)}
	}
	logf("storm: starting the kernel (HashConcurrency=%d, 0 = default)", poolSize)
	k, _, _, err := r.startKernel(ctx, "storm", "")
	if err != nil {
		return run, err
	}
	defer k.stop()
	a := newAPI(k.base)
	admin, err := a.login(ctx, adminAccount, adminPassword)
	if err != nil {
		return run, err
	}
	if err := a.setConfig(ctx, admin, "sys.security.rateLimit.enabled", "false"); err != nil {
		return run, fmt.Errorf("switching rate limiting off: %w", err)
	}
	if err := a.createPermissionUser(ctx, admin, userAccount, userPassword); err != nil {
		return run, err
	}
	user, err := a.login(ctx, userAccount, userPassword)
	if err != nil {
		return run, err
	}
	run.GOMAXPROCS = r.o.gomaxprocs
	if run.GOMAXPROCS <= 0 {
		run.GOMAXPROCS = runtime.NumCPU()
	}

	// One verification's time now, in this process, one goroutine.
	iters := r.o.iterations
	if iters == 0 {
		iters = config.Defaults().Service.Security.Password.Pbkdf2Iterations
	}
	h := password.New(iters)
	hash, err := h.Hash(adminPassword) // pbkdf2Loop verifies adminPassword
	if err != nil {
		return run, err
	}
	before := pbkdf2Loop(ctx, h, hash, 1, 2*time.Second)

	ping := load.Config{URL: k.base + "/api/v1/ping", Header: bearer(user)}
	if run.Idle, err = r.measure(ctx, "storm: idle ping (user)", k, 0, ping); err != nil {
		return run, err
	}

	// The storm: clients log in continuously as the user (right password).
	body, _ := json.Marshal(map[string]string{"account": userAccount, "password": userPassword})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	tr := &http.Transport{MaxIdleConns: r.o.stormClients, MaxIdleConnsPerHost: r.o.stormClients, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var (
		mu         sync.Mutex
		lat        []time.Duration // logins completed inside the window
		from, to   time.Time
		wg         sync.WaitGroup
		refused    int64
		badShape   int64
		other      int64
		firstError string
	)
	inWindow := func(t time.Time) bool { return !from.IsZero() && t.After(from) && (to.IsZero() || t.Before(to)) }
	for range r.o.stormClients {
		wg.Go(func() {
			for n := 0; n < stormMaxLoginsPerClient && sctx.Err() == nil; n++ {
				t0 := time.Now()
				status, retry, code, err := stormLogin(sctx, client, k.base, body)
				t1 := time.Now()
				if sctx.Err() != nil {
					return
				}
				mu.Lock()
				switch {
				case err == nil && status == http.StatusOK:
					if inWindow(t1) {
						lat = append(lat, t1.Sub(t0))
					}
				case err == nil && status == http.StatusServiceUnavailable:
					if inWindow(t1) {
						refused++
						if retry < 1 || code != 40008 {
							badShape++
						}
					}
				default:
					other++
					if firstError == "" {
						firstError = fmt.Sprintf("status %d code %d %v", status, code, err)
					}
				}
				mu.Unlock()
				wait := time.Duration(0)
				if status == http.StatusServiceUnavailable && !r.o.stormRude {
					wait = min(time.Duration(retry)*time.Second, 2*time.Second)
				} else if status != http.StatusOK && status != http.StatusServiceUnavailable {
					wait = 100 * time.Millisecond
				}
				if wait > 0 {
					select {
					case <-sctx.Done():
						return
					case <-time.After(wait):
					}
				}
			}
		})
	}
	// Let the queue fill before measuring.
	select {
	case <-ctx.Done():
		return run, ctx.Err()
	case <-time.After(3 * time.Second):
	}
	cfg := ping
	first := make(chan poolStats, 1)
	cfg.OnMeasure = func(start bool) {
		mu.Lock()
		defer mu.Unlock()
		if start {
			from = time.Now()
			// The snapshot takes 500 ms; so does the one at the end, so
			// the two bracket a span as long as the window.
			go func() { first <- snapshotPool(ctx, a, admin) }()
		} else {
			to = time.Now()
		}
	}
	run.Storm, err = r.measure(ctx, fmt.Sprintf("storm: ping (user) while %d clients log in", r.o.stormClients), k, 0, cfg)
	if err == nil {
		s0, s1 := <-first, snapshotPool(ctx, a, admin)
		if s1.Completed > s0.Completed {
			run.WindowHashes = s1.Completed - s0.Completed
			run.WindowHashMs = float64(s1.BusyMs-s0.BusyMs) / float64(run.WindowHashes)
		}
	}
	stop()
	wg.Wait()
	if err != nil {
		return run, err
	}
	window := to.Sub(from).Seconds()
	slices.Sort(lat)
	run.Logins, run.Refused, run.RefusedBadShape, run.OtherErrors, run.FirstError = int64(len(lat)), refused, badShape, other, firstError
	if window > 0 {
		run.LoginsPerSec = float64(len(lat)) / window
	}
	if len(lat) > 0 {
		run.LoginP50Ms = ms(load.Percentile(lat, 50))
		run.LoginP99Ms = ms(load.Percentile(lat, 99))
	}

	// Again after the storm: the verify time is the mean of the two medians.
	after := pbkdf2Loop(ctx, h, hash, 1, 2*time.Second)
	run.VerifyMs = (before.P50Ms + after.P50Ms) / 2
	run.Pool = snapshotPool(ctx, a, admin)
	if run.VerifyMs > 0 {
		run.LimitGOMAXPROCS = float64(run.GOMAXPROCS) * 1000 / run.VerifyMs
		run.LimitPool = float64(run.Pool.Concurrency) * 1000 / run.VerifyMs
	}
	if run.WindowHashMs > 0 {
		run.LimitObserved = float64(run.Pool.Concurrency) * 1000 / run.WindowHashMs
	}
	run.LoadAfter = loadAvg()
	logf("storm: pool %d: ping idle %.0f/s p99 %.1f ms; storm %.0f/s p99 %.1f ms; logins %.1f/s (pool limit %.1f/s, GOMAXPROCS limit %.1f/s), %d refused",
		run.Pool.Concurrency, run.Idle.RPS, run.Idle.P99Us/1e3, run.Storm.RPS, run.Storm.P99Us/1e3,
		run.LoginsPerSec, run.LimitPool, run.LimitGOMAXPROCS, run.Refused)
	return run, nil
}

// stormMaxLoginsPerClient bounds each storm client's loop.
const stormMaxLoginsPerClient = 2000

// stormLogin posts one login and returns the status, the Retry-After
// seconds and the envelope code.
func stormLogin(ctx context.Context, c *http.Client, base string, body []byte) (status, retry, code int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, 0, 0, err
	}
	var env struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(raw, &env)
	retry, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, retry, env.Code, nil
}

// stormMarkdown is the "Login storm" section of the report.
func (r *results) stormMarkdown(b *bytes.Buffer) {
	if len(r.Storm) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	p("## Login storm")
	p("")
	p("Authenticated `GET /api/v1/ping` (user) idle, then while the storm clients log in continuously (right password;")
	p("a refused client waits `Retry-After`, at most 2 s, unless `-storm-rude`). Login throughput counts the successful")
	p("logins inside the ping's measured window. Limits: pool × 1/verify and GOMAXPROCS × 1/verify, with the verify")
	p("time measured in the load generator (one goroutine, 2 s before and 2 s after the storm, mean of the medians);")
	p("observed: pool × 1/(the server's mean hash time in the window: busy time ÷ hashes, from two monitor snapshots). Targets on")
	p("2 CPUs: storm ping p99 ≤ 25 ms and ≥ 50 %% of idle req/s; logins within 10 %% of the pool limit.")
	p("")
	p("| pool | verify ms | ping idle req/s | idle p99 ms | storm req/s | storm p99 ms | storm ÷ idle | logins/s | pool limit/s | ÷ pool limit | server hash ms | ÷ observed limit | GOMAXPROCS limit/s | login p50 / p99 ms | 503s | peak running / waiting | load before / after |")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|")
	for _, s := range r.Storm {
		p("| %d | %.1f | %.0f | %.1f | %.0f | %.1f | %.2f | %.1f | %.1f | %.2f | %.1f | %.2f | %.1f | %.0f / %.0f | %d | %d / %d | %s / %s |",
			s.Pool.Concurrency, s.VerifyMs, s.Idle.RPS, s.Idle.P99Us/1e3, s.Storm.RPS, s.Storm.P99Us/1e3,
			safeDiv(s.Storm.RPS, s.Idle.RPS), s.LoginsPerSec, s.LimitPool, safeDiv(s.LoginsPerSec, s.LimitPool),
			s.WindowHashMs, safeDiv(s.LoginsPerSec, s.LimitObserved), s.LimitGOMAXPROCS,
			s.LoginP50Ms, s.LoginP99Ms, s.Refused, s.Pool.PeakRunning, s.Pool.PeakWaiting, s.LoadBefore, s.LoadAfter)
	}
	for _, s := range r.Storm {
		if s.OtherErrors > 0 || s.RefusedBadShape > 0 || s.Storm.Errors > 0 {
			p("")
			p("pool %d: %d login errors other than 503 (first: %s), %d 503s without Retry-After or code 40008, %d failed pings (first: %s).",
				s.Pool.Concurrency, s.OtherErrors, s.FirstError, s.RefusedBadShape, s.Storm.Errors, s.Storm.FirstError)
		}
	}
	p("")
}

// writeStorm writes storm.md and storm.json (the -only storm report).
func (r *results) writeStorm(dir string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "storm.json"), raw, 0o600); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Login storm\n\n%s — %d CPUs (%s), Linux %s, %s, commit %s. Load average before/after: %s / %s.\n\n",
		r.Date.Format("2006-01-02 15:04 MST"), r.Machine.CPUs, r.Machine.Model, r.Machine.Kernel, r.Machine.GoVersion,
		r.Machine.Commit, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "| target | measured | goal | status | source |\n|---|---|---|---|---|\n")
	for _, t := range r.targets() {
		if strings.HasPrefix(t.Source, "storm") {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", t.What, t.Measured, t.Goal, t.Status, t.Source)
		}
	}
	b.WriteString("\n")
	r.stormMarkdown(&b)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "storm.md"), b.Bytes(), 0o600); err != nil {
		return err
	}
	fmt.Println(b.String())
	return nil
}
