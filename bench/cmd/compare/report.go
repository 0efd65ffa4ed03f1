package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/bench/internal/load"
)

type httpRun struct {
	load.Result
	Cache  string `json:"cache,omitempty"`
	Target string `json:"target,omitempty"`
	Round  int    `json:"round,omitempty"`
	// ServerCPUSeconds is the server process's CPU time over the measured
	// window; ServerCPUUsPerReq divides it by the requests.
	ServerCPUSeconds  float64 `json:"serverCpuSeconds"`
	ServerCPUUsPerReq float64 `json:"serverCpuUsPerReq"`
	RedisCPUSeconds   float64 `json:"redisCpuSeconds,omitempty"`
	RedisCPUUsPerReq  float64 `json:"redisCpuUsPerReq,omitempty"`
	ServerHWMKB       int64   `json:"serverHwmKb,omitempty"`
}

type pbkdf2Run struct {
	Goroutines int     `json:"goroutines"`
	Verifies   int     `json:"verifies"`
	PerSecond  float64 `json:"perSecond"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
}

type loginRun struct {
	Concurrency int       `json:"concurrency"`
	PBKDF2      pbkdf2Run `json:"pbkdf2"`
	HTTP        httpRun   `json:"http"`
}

type results struct {
	Date       time.Time `json:"date"`
	Machine    machine   `json:"machine"`
	Options    map[string]any
	LoadBefore string    `json:"loadAvgBefore"`
	LoadAfter  string    `json:"loadAvgAfter"`
	Ping       []httpRun `json:"ping"`
	Authorize  []httpRun `json:"authorize"`
	Login      struct {
		Iterations int        `json:"iterations"`
		Runs       []loginRun `json:"runs"`
	} `json:"login"`
	Startup struct {
		FirstLive      float64   `json:"firstLiveMs"`
		FirstReady     float64   `json:"firstReadyMs"`
		RestartLiveMs  []float64 `json:"restartLiveMs"`
		RestartReadyMs []float64 `json:"restartReadyMs"`
		RedisReadyMs   float64   `json:"redisReadyMs,omitempty"`
		ShutdownMs     float64   `json:"shutdownMs"`
	} `json:"startup"`
	Memory struct {
		IdleRSSKB              int64 `json:"idleRssKb"`
		IdleHWMKB              int64 `json:"idleHwmKb"`
		AfterFirstRequestRSSKB int64 `json:"afterFirstRequestRssKb"`
		AfterLoadHWMKB         int64 `json:"afterLoadHwmKb"`
	} `json:"memory"`
	GoBench     []goBench  `json:"goBench,omitempty"`
	GoBenchTime time.Time  `json:"goBenchTime"`
	Notes       []string   `json:"notes,omitempty"`
	Storm       []stormRun `json:"storm,omitempty"`
}

type machine struct {
	CPUs      int    `json:"cpus"`
	Model     string `json:"model"`
	MemTotal  string `json:"memTotal"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"`
	Commit    string `json:"commit"`
}

func newResults(ctx context.Context, o options) *results {
	r := &results{Date: time.Now(), Machine: probeMachine(ctx, o.root)}
	r.Options = map[string]any{
		"duration": o.duration.String(), "warmup": o.warmup.String(), "connections": o.conns,
		"loginConnections": o.loginConns, "rounds": o.rounds, "client": o.client, "gomaxprocs": o.gomaxprocs,
		"stormClients": o.stormClients, "stormPools": o.stormPools, "stormRude": o.stormRude,
	}
	return r
}

func probeMachine(ctx context.Context, root string) machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err == nil {
					m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	cmd := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

// medianRun returns the run with the median requests/s among runs matching
// cache and target (nil when none).
func medianRun(runs []httpRun, cache, target string) *httpRun {
	var sel []httpRun
	for _, r := range runs {
		if r.Cache == cache && r.Target == target {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil
	}
	slices.SortFunc(sel, func(a, b httpRun) int {
		switch {
		case a.RPS < b.RPS:
			return -1
		case a.RPS > b.RPS:
			return 1
		}
		return 0
	})
	m := sel[(len(sel)-1)/2]
	return &m
}

type target struct {
	What, Measured, Goal, Status, Source string
}

func status(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func (r *results) targets() []target {
	var ts []target
	for _, c := range []struct {
		cache string
		goal  float64
	}{{"memcache", 0.8}, {"redis", 0.7}} {
		what := fmt.Sprintf("authenticated ping vs bare Fiber, requests/s (%s)", c.cache)
		bare, user := medianRun(r.Ping, c.cache, "bare"), medianRun(r.Ping, c.cache, "user")
		if bare == nil || user == nil || bare.RPS == 0 {
			ts = append(ts, target{what, "—", fmt.Sprintf("≥ %.1f×", c.goal), "not measured", ""})
			continue
		}
		ratio := user.RPS / bare.RPS
		ts = append(ts, target{what, fmt.Sprintf("%.2f× (%.0f vs %.0f req/s)", ratio, user.RPS, bare.RPS),
			fmt.Sprintf("≥ %.1f×", c.goal), status(ratio >= c.goal), "compare, median of rounds"})
	}
	if b, ok := findBench(r.GoBench, "BenchmarkTokenSessionCheck/memcache/Verify+Active"); ok {
		// CPU time per check when measured: wall time is what a busy
		// machine distorts most.
		t, what := b.NsPerOp, fmt.Sprintf("%.2f µs", b.NsPerOp/1e3)
		if b.CPUNsPerOp > 0 {
			t, what = b.CPUNsPerOp, fmt.Sprintf("%.2f µs CPU (%.2f µs wall)", b.CPUNsPerOp/1e3, b.NsPerOp/1e3)
		}
		ts = append(ts, target{"token + session check on a cache hit",
			fmt.Sprintf("%s, %.0f allocs", what, b.AllocsPerOp), "≤ 2 µs, ≤ 2 allocs",
			status(t <= 2000 && b.AllocsPerOp <= 2), "BenchmarkTokenSessionCheck/memcache/Verify+Active"})
	} else {
		ts = append(ts, target{"token + session check on a cache hit", "—", "≤ 2 µs, ≤ 2 allocs", "not measured", "run make bench"})
	}
	if len(r.Login.Runs) > 0 && r.Login.Runs[0].PBKDF2.P50Ms > 0 {
		l := r.Login.Runs[0]
		ratio := l.HTTP.P50Us / 1e3 / l.PBKDF2.P50Ms
		ts = append(ts, target{"password login latency vs one PBKDF2 verify (p50, one at a time)",
			fmt.Sprintf("%.3f× (%.1f vs %.1f ms)", ratio, l.HTTP.P50Us/1e3, l.PBKDF2.P50Ms), "≤ 1.1×", status(ratio <= 1.1), "compare"})
	} else {
		ts = append(ts, target{"password login vs one PBKDF2 verify", "—", "≤ 1.1×", "not measured", ""})
	}
	for _, st := range r.Storm {
		if st.PoolSetting != 0 {
			continue // the targets are about the default pool
		}
		src := fmt.Sprintf("storm, pool %d", st.Pool.Concurrency)
		ratio := safeDiv(st.Storm.RPS, st.Idle.RPS)
		ts = append(ts,
			target{"ping p99 during a login storm", fmt.Sprintf("%.1f ms", st.Storm.P99Us/1e3), "≤ 25 ms", status(st.Storm.P99Us > 0 && st.Storm.P99Us <= 25000), src},
			target{"ping throughput during a login storm vs idle", fmt.Sprintf("%.2f (%.0f vs %.0f req/s)", ratio, st.Storm.RPS, st.Idle.RPS), "≥ 0.5", status(ratio >= 0.5), src},
			target{"logins/s vs the pool's PBKDF2 limit (idle verify time; observed hash time)",
				fmt.Sprintf("%.2f; %.2f (%.1f/s vs %.1f/s; %.1f/s)", safeDiv(st.LoginsPerSec, st.LimitPool), safeDiv(st.LoginsPerSec, st.LimitObserved),
					st.LoginsPerSec, st.LimitPool, st.LimitObserved), "≥ 0.9", status(safeDiv(st.LoginsPerSec, st.LimitPool) >= 0.9), src})
	}
	oidc, plugin := (*httpRun)(nil), (*httpRun)(nil)
	for i := range r.Authorize {
		a := &r.Authorize[i]
		if a.Cache != "memcache" || a.Connections != 1 {
			continue // the target is about the round trip: one request at a time
		}
		if strings.HasPrefix(a.Target, "oidc:") {
			oidc = a
		} else if strings.HasPrefix(a.Target, "plugin:") {
			plugin = a
		}
	}
	switch {
	case oidc != nil && plugin != nil:
		d := plugin.P50Us - oidc.P50Us
		ts = append(ts, target{"plugin authorize redirect over the built-in provider's (p50, one request at a time)", fmt.Sprintf("+%.0f µs (%.0f vs %.0f µs)", d, plugin.P50Us, oidc.P50Us),
			"≤ 300 µs", status(d <= 300), "compare"})
	default:
		in, ok1 := findBench(r.GoBench, "BenchmarkAuthorizeRoundTrip/in-process")
		pl, ok2 := findBench(r.GoBench, "BenchmarkAuthorizeRoundTrip/plugin")
		if ok1 && ok2 {
			d := (pl.NsPerOp - in.NsPerOp) / 1e3
			ts = append(ts, target{"plugin authorize round trip over in-process (mean per call, one caller)",
				fmt.Sprintf("+%.0f µs (%.0f vs %.1f µs)", d, pl.NsPerOp/1e3, in.NsPerOp/1e3), "≤ 300 µs", status(d <= 300),
				"BenchmarkAuthorizeRoundTrip (host/idp/pluginhost); no HTTP plugin run (see notes)"})
		} else {
			ts = append(ts, target{"plugin authorize over in-process (p50)", "—", "≤ 300 µs", "not measured", "no plugin provider (see notes)"})
		}
	}
	if len(r.Startup.RestartReadyMs) > 0 {
		worst := slices.Max(r.Startup.RestartReadyMs)
		ts = append(ts, target{"start on an existing database (exec to /health/ready = 200, worst of restarts)",
			fmt.Sprintf("%.0f ms", worst), "< 1 s", status(worst < 1000), "compare"})
	} else {
		ts = append(ts, target{"start on an existing database", "—", "< 1 s", "not measured", ""})
	}
	if r.Memory.IdleRSSKB > 0 {
		mb := float64(r.Memory.IdleRSSKB) / 1024
		ts = append(ts, target{"idle RSS (VmRSS 3 s after start)", fmt.Sprintf("%.1f MB", mb), "< 60 MB", status(mb < 60), "compare"})
	} else {
		ts = append(ts, target{"idle RSS", "—", "< 60 MB", "not measured", ""})
	}
	return ts
}

func (r *results) write(dir string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), raw, 0o600); err != nil {
		return err
	}
	md := r.markdown()
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(md), 0o600); err != nil {
		return err
	}
	fmt.Println(md)
	return nil
}

func (r *results) markdown() string {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Benchmark report")
	p("")
	p("%s — %d CPUs (%s), %s RAM, Linux %s, %s, commit %s.", r.Date.Format("2006-01-02 15:04 MST"), r.Machine.CPUs,
		r.Machine.Model, r.Machine.MemTotal, r.Machine.Kernel, r.Machine.GoVersion, r.Machine.Commit)
	p("Load average before/after: %s / %s. Options: %v.", r.LoadBefore, r.LoadAfter, r.Options)
	for _, la := range []string{r.LoadBefore, r.LoadAfter} {
		var one float64
		if _, err := fmt.Sscan(la, &one); err == nil && one > float64(r.Machine.CPUs)/2 {
			p("")
			p("**The machine was busy (1-minute load average %.1f on %d CPUs): other work competed for the CPUs and the figures are noisy; rerun on an idle machine.**", one, r.Machine.CPUs)
			break
		}
	}
	p("")
	p("## Targets")
	p("")
	p("| target | measured | goal | status | source |")
	p("|---|---|---|---|---|")
	for _, t := range r.targets() {
		p("| %s | %s | %s | %s | %s |", t.What, t.Measured, t.Goal, t.Status, t.Source)
	}
	p("")
	p("## HTTP: bare Fiber vs kernel ping (loopback)")
	p("")
	p("Closed loop, keep-alive, the load generator in the same machine. Server CPU is the server process's")
	p("user+system time over the measured window divided by the requests (Redis's own CPU in brackets); CPU/req ÷ bare")
	p("above 1 is how many times the bare server's CPU a kernel request costs (Redis included).")
	p("")
	p("| run | cache | req/s | p50 µs | p99 µs | server CPU µs/req | req/s ÷ bare | CPU/req ÷ bare |")
	p("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, cache := range []string{"memcache", "redis"} {
		bare := medianRun(r.Ping, cache, "bare")
		for _, who := range []string{"bare", "user", "superAdmin"} {
			m := medianRun(r.Ping, cache, who)
			if m == nil {
				continue
			}
			name := map[string]string{"bare": "bare Fiber `GET /ping`", "user": "kernel `GET /api/v1/ping`, permission user (full path)",
				"superAdmin": "kernel `GET /api/v1/ping`, superAdmin (no permission lookup)"}[who]
			cpu := fmt.Sprintf("%.1f", m.ServerCPUUsPerReq)
			if m.RedisCPUUsPerReq > 0 {
				cpu += fmt.Sprintf(" (+%.1f)", m.RedisCPUUsPerReq)
			}
			rr, rc := "—", "—"
			if bare != nil && who != "bare" && bare.RPS > 0 && bare.ServerCPUUsPerReq > 0 {
				rr = fmt.Sprintf("%.2f×", m.RPS/bare.RPS)
				rc = fmt.Sprintf("%.2f×", (m.ServerCPUUsPerReq+m.RedisCPUUsPerReq)/bare.ServerCPUUsPerReq)
			}
			p("| %s | %s | %.0f | %.0f | %.0f | %s | %s | %s |", name, cache, m.RPS, m.P50Us, m.P99Us, cpu, rr, rc)
		}
	}
	p("")
	p("Every round:")
	p("")
	p("| run | req/s | p50 µs | p99 µs | server CPU µs/req | load generator CPU µs/req | errors |")
	p("|---|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.Ping {
		p("| %s | %.0f | %.0f | %.0f | %.1f | %.1f | %d |", x.Name, x.RPS, x.P50Us, x.P99Us, x.ServerCPUUsPerReq,
			safeDiv(x.ClientCPUSeconds*1e6, float64(x.Requests)), x.Errors)
	}
	p("")
	p("## Password login vs PBKDF2 (%d iterations)", r.Login.Iterations)
	p("")
	p("| concurrency | PBKDF2 verify/s | PBKDF2 p50 ms | login req/s | login p50 ms | login p99 ms | login/PBKDF2 (p50) | login/PBKDF2 (throughput) |")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range r.Login.Runs {
		p("| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f× | %.3f× |", l.Concurrency, l.PBKDF2.PerSecond, l.PBKDF2.P50Ms,
			l.HTTP.RPS, l.HTTP.P50Us/1e3, l.HTTP.P99Us/1e3, safeDiv(l.HTTP.P50Us/1e3, l.PBKDF2.P50Ms), safeDiv(l.PBKDF2.PerSecond, l.HTTP.RPS))
	}
	p("")
	p("## External login: authorize redirect (302)")
	p("")
	if len(r.Authorize) == 0 {
		p("Not measured (see notes).")
	} else {
		p("| provider | cache | connections | req/s | p50 µs | p99 µs | server CPU µs/req |")
		p("|---|---|---:|---:|---:|---:|---:|")
		for _, a := range r.Authorize {
			cpu := fmt.Sprintf("%.1f", a.ServerCPUUsPerReq)
			if a.RedisCPUUsPerReq > 0 {
				cpu += fmt.Sprintf(" (+%.1f)", a.RedisCPUUsPerReq)
			}
			p("| %s | %s | %d | %.0f | %.0f | %.0f | %s |", a.Target, a.Cache, a.Connections, a.RPS, a.P50Us, a.P99Us, cpu)
		}
	}
	p("")
	p("## Start and memory")
	p("")
	p("- First start (empty SQLite database: schema, seed with one PBKDF2 hash): live after %.0f ms, ready after %.0f ms.", r.Startup.FirstLive, r.Startup.FirstReady)
	p("- Restarts on the existing database, exec to `/health` 200: %s ms; to `/health/ready` 200: %s ms.", fmtList(r.Startup.RestartLiveMs), fmtList(r.Startup.RestartReadyMs))
	if r.Startup.RedisReadyMs > 0 {
		p("- Start with the Redis cache (existing database), ready after %.0f ms.", r.Startup.RedisReadyMs)
	}
	p("- Graceful stop after the load runs: %.0f ms.", r.Startup.ShutdownMs)
	p("- Idle RSS 3 s after a restart: %.1f MB (peak %.1f MB); after one authenticated request: %.1f MB.",
		kb(r.Memory.IdleRSSKB), kb(r.Memory.IdleHWMKB), kb(r.Memory.AfterFirstRequestRSSKB))
	p("- Peak RSS of the kernel after the ping, login and authorize runs: %.1f MB.", kb(r.Memory.AfterLoadHWMKB))
	p("")
	if len(r.GoBench) > 0 {
		p("## Go benchmarks (median of the runs in go-bench.txt, %s)", r.GoBenchTime.Format("2006-01-02 15:04"))
		p("")
		p("time/op is wall-clock; CPU/op is the process's CPU time per iteration (bench package only), the steadier figure on a shared machine.")
		p("")
		p("| package | benchmark | runs | time/op | CPU/op | B/op | allocs/op |")
		p("|---|---|---:|---:|---:|---:|---:|")
		for _, g := range r.GoBench {
			cpu := "—"
			if g.CPUNsPerOp > 0 {
				cpu = fmtNs(g.CPUNsPerOp)
			}
			p("| %s | %s | %d | %s | %s | %.0f | %.0f |", strings.TrimPrefix(g.Pkg, "github.com/adminkernel/kernel/"), g.Name, g.Runs, fmtNs(g.NsPerOp), cpu, g.BytesPerOp, g.AllocsPerOp)
		}
		p("")
	}
	r.stormMarkdown(&b)
	if len(r.Notes) > 0 {
		p("## Notes")
		p("")
		for _, n := range r.Notes {
			p("- %s", n)
		}
		p("")
	}
	return b.String()
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func kb(v int64) float64 { return float64(v) / 1024 }

func fmtList(v []float64) string {
	if len(v) == 0 {
		return "—"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(s, ", ")
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.0f ns", ns)
	}
}
