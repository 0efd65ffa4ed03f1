// Command compare runs the HTTP side of the kernel's benchmarks in one go,
// on loopback, and writes bench/out/report.md (and results.json):
//
//   - a bare Fiber JSON server (bench/cmd/bare) against the kernel's
//     GET /api/v1/ping with a valid token (token, session, permission,
//     envelope), with the in-process cache and with Redis;
//   - password login throughput and latency against PBKDF2 verification
//     alone at the configured iteration count;
//   - the authorize redirect of the built-in OIDC provider (against a
//     discovery stub started here) and of a plugin provider when plugin
//     binaries exist;
//   - the kernel's start time on an existing database and its idle RSS;
//   - the Go benchmark medians of bench/out/go-bench.txt when present.
//
// Every server is built from this repository and started with the same
// process settings; all of them are stopped at the end. Each load run is
// bounded (-d, at most 10 s, after -warmup).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/adminkernel/kernel/bench/internal/load"
	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/password"
)

const (
	adminAccount  = "superAdmin"
	adminPassword = "Bench#Adm1nPassw0rd"
	userAccount   = "benchuser"
	userPassword  = "Bench#Us3rPassw0rd" //nolint:gosec // G101: password of the throwaway user the benchmark seeds in its temporary database
	oidcCode      = "corp"
)

type options struct {
	root, out  string
	duration   time.Duration
	warmup     time.Duration
	conns      int
	loginConns int
	rounds     int
	restarts   int
	client     string
	redisAddr  string
	skipRedis  bool
	gomaxprocs int
	iterations int
	keep       bool
	skipBuild  bool
	// only "storm" runs the login storm alone (bench-storm).
	only         string
	stormClients int
	stormPools   string
	stormRude    bool
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", "", "repository root (default: found from the working directory)")
	flag.StringVar(&o.out, "out", "", "output directory (default <root>/bench/out)")
	flag.DurationVar(&o.duration, "d", 5*time.Second, "measured duration of each load run (at most 10s)")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before each measured run")
	flag.IntVar(&o.conns, "c", 16, "connections for the ping and authorize runs")
	flag.IntVar(&o.loginConns, "login-c", runtime.NumCPU(), "connections (and PBKDF2 goroutines) for the throughput runs of login")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of the bare/kernel ping runs (interleaved; the median is reported)")
	flag.IntVar(&o.restarts, "restarts", 3, "restarts on the existing database for the start-time figure")
	flag.StringVar(&o.client, "client", "raw", "load client: raw or nethttp")
	flag.StringVar(&o.redisAddr, "redis", envOr("ADMINKERNEL_TEST_REDIS", "127.0.0.1:6379"), "Redis address for the Redis runs")
	flag.BoolVar(&o.skipRedis, "skip-redis", false, "skip the Redis runs")
	flag.IntVar(&o.gomaxprocs, "gomaxprocs", 0, "GOMAXPROCS of both servers (0: Go's default, one per CPU)")
	flag.IntVar(&o.iterations, "iterations", 0, "Service:Security:Password:Pbkdf2Iterations (0: the kernel default)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary content root")
	flag.BoolVar(&o.skipBuild, "skip-build", false, "use the binaries already in <out>/bin")
	flag.StringVar(&o.only, "only", "", `"storm": run only the login storm (report in <out>/storm.md)`)
	flag.IntVar(&o.stormClients, "storm-clients", 200, "clients logging in continuously during the login storm")
	flag.StringVar(&o.stormPools, "storm-pools", "0", "comma-separated Service:Security:Password:HashConcurrency values, one storm each (0: the kernel's default)")
	flag.BoolVar(&o.stormRude, "storm-rude", false, "storm clients retry a 503 at once instead of waiting Retry-After")
	flag.Parse()
	if o.only != "" && o.only != "storm" {
		fmt.Fprintln(os.Stderr, `compare: -only accepts "storm"`)
		os.Exit(2)
	}
	if o.stormClients < 1 || o.stormClients > 1000 {
		fmt.Fprintln(os.Stderr, "compare: -storm-clients must be in 1..1000")
		os.Exit(2)
	}
	if o.duration <= 0 || o.duration > 10*time.Second {
		fmt.Fprintln(os.Stderr, "compare: -d must be in (0, 10s]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// findRoot walks up from the working directory to the module's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if raw, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(raw), "module github.com/adminkernel/kernel\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the github.com/adminkernel/kernel module (use -root)")
		}
		dir = parent
	}
}

// runner holds the state of one compare run.
type runner struct {
	o       options
	res     *results
	bin     string // kernel binary
	bareBin string
	content string // kernel content root
	stub    *discoveryStub
	mu      sync.Mutex
	servers []*server
	// extraEnv is added to the kernel's settings (the storm's pool size).
	extraEnv []string
}

func run(ctx context.Context, o options) error {
	if o.root == "" {
		root, err := findRoot()
		if err != nil {
			return err
		}
		o.root = root
	}
	if o.out == "" {
		o.out = filepath.Join(o.root, "bench", "out")
	}
	// The kernel runs in a temporary content root and resolves relative
	// paths (its plugin folder) against it: hand it absolute ones.
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	o.out = out
	binDir := filepath.Join(o.out, "bin")
	if err := os.MkdirAll(binDir, 0o750); err != nil {
		return err
	}
	r := &runner{o: o, res: newResults(ctx, o), bin: filepath.Join(binDir, "adminkernel"), bareBin: filepath.Join(binDir, "bare")}
	defer r.stopAll()

	if !o.skipBuild {
		builds := []struct{ out, pkg string }{{r.bin, "./host/cmd/adminkernel"}, {r.bareBin, "./bench/cmd/bare"}}
		if o.only == "storm" {
			builds = builds[:1]
		}
		for _, b := range builds {
			if err := goBuild(ctx, o.root, b.out, b.pkg); err != nil {
				return err
			}
		}
		// The provider plugins, as `make build` does; optional.
		if m, _ := filepath.Glob(filepath.Join(o.root, "plugins", "*", "cmd", "adminkernel-provider-*")); len(m) > 0 && o.only == "" {
			dir := filepath.Join(binDir, "plugins")
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return err
			}
			if err := goBuild(ctx, o.root, dir+string(filepath.Separator), "./plugins/..."); err != nil {
				r.res.Notes = append(r.res.Notes, "the provider plugins did not build: "+err.Error())
			}
		}
	}
	content, err := os.MkdirTemp("", "adminkernel-bench-")
	if err != nil {
		return err
	}
	r.content = content
	if !o.keep {
		defer func() {
			if err := os.RemoveAll(content); err != nil {
				logf("removing the content root: %v", err)
			}
		}()
	} else {
		logf("content root kept at %s", content)
	}
	if r.stub, err = startDiscoveryStub(ctx); err != nil {
		return err
	}
	defer r.stub.Close()

	r.res.LoadBefore = loadAvg()
	if o.only == "storm" {
		err = r.stormPhase(ctx)
		r.res.LoadAfter = loadAvg()
		r.stopAll()
		if err != nil {
			r.res.Notes = append(r.res.Notes, "run stopped early: "+err.Error())
		}
		if werr := r.res.writeStorm(o.out); werr != nil {
			return errors.Join(err, werr)
		}
		logf("report written to %s", filepath.Join(o.out, "storm.md"))
		return err
	}
	err = r.phases(ctx)
	r.stopAll()
	if err == nil {
		// The storm restarts the kernel on the same database: after the
		// other phases, with nothing else running.
		err = r.stormPhase(ctx)
		r.stopAll()
	}
	r.res.LoadAfter = loadAvg()
	if err != nil {
		r.res.Notes = append(r.res.Notes, "run stopped early: "+err.Error())
	}
	if bs, mt, gerr := parseGoBench(filepath.Join(o.out, "go-bench.txt")); gerr == nil {
		r.res.GoBench, r.res.GoBenchTime = bs, mt
	} else {
		r.res.Notes = append(r.res.Notes, "no Go benchmark figures: "+gerr.Error()+" (make bench writes bench/out/go-bench.txt first)")
	}
	if werr := r.res.write(o.out); werr != nil {
		return errors.Join(err, werr)
	}
	logf("report written to %s", filepath.Join(o.out, "report.md"))
	return err
}

func (r *runner) track(s *server) *server {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = append(r.servers, s)
	return s
}

func (r *runner) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.servers {
		s.stop()
	}
	r.servers = nil
}

// processEnv is the environment every server gets: ours minus any kernel
// setting, plus the shared process settings.
func (r *runner) processEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "service__") || strings.HasPrefix(lk, "api__") || strings.HasPrefix(lk, "logging__") ||
			strings.HasPrefix(lk, "adminkernel_") || k == "GOMAXPROCS" || k == "GOGC" || k == "GOMEMLIMIT" || k == "GODEBUG" {
			continue
		}
		env = append(env, kv)
	}
	if r.o.gomaxprocs > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", r.o.gomaxprocs))
	}
	return append(env, extra...)
}

// kernelEnv is the kernel's settings for one start.
func (r *runner) kernelEnv(port int, redisPrefix string) []string {
	env := []string{
		fmt.Sprintf("Service__Http__ListenAddress=http://127.0.0.1:%d", port),
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__ExternalAuth__Oidc__0__Code=" + oidcCode,
		"Service__ExternalAuth__Oidc__0__DisplayName=Bench SSO",
		"Service__ExternalAuth__Oidc__0__Authority=" + r.stub.URL,
		"Service__ExternalAuth__Oidc__0__ClientId=kernel-bench",
		"Service__ExternalAuth__Oidc__0__ClientSecret=bench-secret",
		// The authorize runs store a state per request (5 minutes): far
		// more than the default cap of pending states.
		"Service__ExternalAuth__MaxPendingStates=100000000",
		// The login runs and the storm log in as one account from one
		// address: lift the pool's per-client and per-account shares
		// (default 2) so that they measure the pool, not the shares.
		"Service__Security__Password__HashPerClient=1000000",
		"Service__Security__Password__HashPerAccount=1000000",
	}
	if r.o.iterations > 0 {
		env = append(env, fmt.Sprintf("Service__Security__Password__Pbkdf2Iterations=%d", r.o.iterations))
	}
	if dir := r.pluginDir(); dir != "" {
		env = append(env, "Service__ExternalAuth__PluginDir="+dir)
		for _, section := range []string{"EnterpriseChat", "TeamChat", "CodeHost", "SocialChat"} {
			for _, k := range []string{"ClientId", "ClientSecret", "AppId", "AppSecret", "CorpId", "AgentId", "CorpSecret"} {
				env = append(env, fmt.Sprintf("Service__ExternalAuth__%s__%s=bench-%s", section, k, strings.ToLower(k)))
			}
		}
	}
	if redisPrefix != "" {
		env = append(env, "Service__Cache__Provider=Redis", "Service__Cache__Redis__Address="+r.o.redisAddr,
			"Service__Cache__Redis__KeyPrefix="+redisPrefix)
	}
	env = append(env, r.extraEnv...)
	return r.processEnv(env...)
}

// goBuild builds pkg to out with the flags of `make build`.
func goBuild(ctx context.Context, root, out, pkg string) error {
	logf("building %s", pkg)
	//nolint:gosec // G204: runs the go tool on this repository's own packages and output paths, as `make build` does
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	return nil
}

// pluginDir returns the directory holding provider plugin binaries: the
// ones built here (<out>/bin/plugins), else <root>/bin/plugins (make
// build); "" when there are none.
func (r *runner) pluginDir() string {
	for _, dir := range []string{filepath.Join(r.o.out, "bin", "plugins"), filepath.Join(r.o.root, "bin", "plugins")} {
		if m, _ := filepath.Glob(filepath.Join(dir, "adminkernel-provider-*")); len(m) > 0 {
			return dir
		}
	}
	return ""
}

// startKernel starts the kernel binary on the shared content root and
// waits until /health/ready answers.
func (r *runner) startKernel(ctx context.Context, label, redisPrefix string) (*server, time.Duration, time.Duration, error) {
	port, err := freePort(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	s, err := startServer("kernel ("+label+")", r.bin,
		[]string{"serve", "--environment", "Development", "--content-root", r.content},
		r.kernelEnv(port, redisPrefix), port, filepath.Join(r.o.out, "kernel.log"))
	if err != nil {
		return nil, 0, 0, err
	}
	r.track(s)
	live, err := s.waitReady(ctx, "/health", 120*time.Second)
	if err != nil {
		return s, 0, 0, err
	}
	ready, err := s.waitReady(ctx, "/health/ready", 30*time.Second)
	return s, live, ready, err
}

func (r *runner) startBare(ctx context.Context) (*server, error) {
	port, err := freePort(ctx)
	if err != nil {
		return nil, err
	}
	s, err := startServer("bare", r.bareBin, []string{"-addr", fmt.Sprintf("127.0.0.1:%d", port)},
		r.processEnv(), port, filepath.Join(r.o.out, "bare.log"))
	if err != nil {
		return nil, err
	}
	r.track(s)
	_, err = s.waitReady(ctx, "/ping", 30*time.Second)
	return s, err
}

// measure runs one load against a server and samples the CPU time of the
// server (and of Redis, when redisPID > 0) over the measured window.
func (r *runner) measure(ctx context.Context, name string, s *server, redisPID int, cfg load.Config) (httpRun, error) {
	if cfg.Duration == 0 {
		cfg.Duration = r.o.duration
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = r.o.warmup
	}
	if cfg.Connections == 0 {
		cfg.Connections = r.o.conns
	}
	cfg.Client = r.o.client
	var s0, s1, r0, r1 float64
	var hwm int64
	also := cfg.OnMeasure
	cfg.OnMeasure = func(start bool) {
		if also != nil {
			also(start)
		}
		v, _ := cpuSeconds(s.pid())
		var rv float64
		if redisPID > 0 {
			rv, _ = cpuSeconds(redisPID)
		}
		if start {
			s0, r0 = v, rv
		} else {
			s1, r1 = v, rv
			_, hwm, _ = memKB(s.pid())
		}
	}
	logf("load: %s (%s %s, %d connections, %s)", name, cfg.Method, cfg.URL, cfg.Connections, cfg.Duration)
	res, err := load.Run(ctx, cfg)
	res.Name = name
	run := httpRun{Result: res, ServerCPUSeconds: s1 - s0, ServerHWMKB: hwm}
	if redisPID > 0 {
		run.RedisCPUSeconds = r1 - r0
	}
	if res.Requests > 0 {
		run.ServerCPUUsPerReq = (s1 - s0) / float64(res.Requests) * 1e6
		run.RedisCPUUsPerReq = run.RedisCPUSeconds / float64(res.Requests) * 1e6
	}
	if err == nil && res.Errors > 0 {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s: %d failed requests (first: %s)", name, res.Errors, res.FirstError))
	}
	logf("      %.0f req/s  p50 %.0f µs  p99 %.0f µs  server CPU %.1f µs/req  errors %d", res.RPS, res.P50Us, res.P99Us, run.ServerCPUUsPerReq, res.Errors)
	return run, err
}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// phases runs everything in order; figures gathered before an error are
// kept in the report.
func (r *runner) phases(ctx context.Context) error {
	res := r.res

	// 1. First start: empty database, schema creation and seed.
	logf("starting the kernel on an empty database (in-process cache)")
	k, live, ready, err := r.startKernel(ctx, "memcache", "")
	if err != nil {
		return err
	}
	res.Startup.FirstLive, res.Startup.FirstReady = ms(live), ms(ready)
	a := newAPI(k.base)
	admin, err := a.login(ctx, adminAccount, adminPassword)
	if err != nil {
		return err
	}
	if err := a.setConfig(ctx, admin, "sys.security.rateLimit.enabled", "false"); err != nil {
		return fmt.Errorf("switching rate limiting off: %w", err)
	}
	if err := a.createPermissionUser(ctx, admin, userAccount, userPassword); err != nil {
		return err
	}
	user, err := a.login(ctx, userAccount, userPassword)
	if err != nil {
		return err
	}

	bare, err := r.startBare(ctx)
	if err != nil {
		return err
	}

	// 2. Ping: bare vs kernel, in-process cache.
	ping := func(cache string, redisPID int) error {
		for round := 1; round <= r.o.rounds; round++ {
			for _, t := range []struct {
				name, who string
				s         *server
				url       string
				hdr       http.Header
				rpid      int
			}{
				{"bare Fiber GET /ping", "bare", bare, bare.base + "/ping", nil, 0},
				{"kernel GET /api/v1/ping (user: token, session, permission)", "user", k, k.base + "/api/v1/ping", bearer(user), redisPID},
				{"kernel GET /api/v1/ping (superAdmin: token, session)", "superAdmin", k, k.base + "/api/v1/ping", bearer(admin), redisPID},
			} {
				run, err := r.measure(ctx, fmt.Sprintf("%s [%s, round %d]", t.name, cache, round), t.s, t.rpid,
					load.Config{URL: t.url, Header: t.hdr})
				if err != nil {
					return err
				}
				run.Cache, run.Target, run.Round = cache, t.who, round
				res.Ping = append(res.Ping, run)
			}
		}
		return nil
	}
	if err := ping("memcache", 0); err != nil {
		return err
	}

	// 3. Login against PBKDF2 alone.
	if err := r.loginRuns(ctx, k); err != nil {
		return err
	}

	// 4. Authorize redirects.
	if err := r.authorizeRuns(ctx, k, "memcache", 0); err != nil {
		return err
	}
	_, hwm, _ := memKB(k.pid())
	res.Memory.AfterLoadHWMKB = hwm

	// 5. Restarts on the existing database; idle RSS.
	logf("stopping the kernel")
	res.Startup.ShutdownMs = ms(k.stop())
	for i := 0; i < r.o.restarts; i++ {
		k2, live, ready, err := r.startKernel(ctx, "restart", "")
		if err != nil {
			return err
		}
		res.Startup.RestartLiveMs = append(res.Startup.RestartLiveMs, ms(live))
		res.Startup.RestartReadyMs = append(res.Startup.RestartReadyMs, ms(ready))
		logf("restart %d: live after %.0f ms, ready after %.0f ms", i+1, ms(live), ms(ready))
		if i == r.o.restarts-1 {
			time.Sleep(3 * time.Second)
			rss, hwm, _ := memKB(k2.pid())
			res.Memory.IdleRSSKB, res.Memory.IdleHWMKB = rss, hwm
			logf("idle RSS %.1f MB (peak %.1f MB)", float64(rss)/1024, float64(hwm)/1024)
			// Idle again after one authenticated request (first use of the
			// token, session and permission paths).
			if _, err := newAPI(k2.base).do(ctx, http.MethodGet, "/api/v1/ping", user, nil); err == nil {
				time.Sleep(time.Second)
				rss, _, _ = memKB(k2.pid())
				res.Memory.AfterFirstRequestRSSKB = rss
			}
		}
		k2.stop()
	}

	// 6. Redis.
	if r.o.skipRedis {
		res.Notes = append(res.Notes, "Redis runs skipped (-skip-redis).")
		return nil
	}
	prefix := "akbench:" + randomHex(6) + ":"
	rc, err := rediscache.New(ctx, config.Redis{Address: r.o.redisAddr, KeyPrefix: prefix})
	if err != nil {
		return fmt.Errorf("the Redis runs need Redis at %s (or -skip-redis): %w", r.o.redisAddr, err)
	}
	defer func() {
		if n, err := rc.DeletePrefix(context.Background(), ""); err != nil {
			logf("cleaning Redis keys %s*: %v", prefix, err)
		} else {
			logf("removed %d Redis keys %s*", n, prefix)
		}
		_ = rc.Close()
	}()
	redisPID := localRedisPID(ctx, rc, r.o.redisAddr)
	logf("starting the kernel with Service:Cache:Provider=Redis (prefix %s)", prefix)
	k, _, ready, err = r.startKernel(ctx, "redis", prefix)
	if err != nil {
		return err
	}
	res.Startup.RedisReadyMs = ms(ready)
	if err := ping("redis", redisPID); err != nil {
		return err
	}
	if err := r.authorizeRuns(ctx, k, "redis", redisPID); err != nil {
		return err
	}
	k.stop()
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// localRedisPID finds the Redis server's pid when it runs on this machine
// (for its CPU time); 0 otherwise.
func localRedisPID(ctx context.Context, rc *rediscache.Cache, addr string) int {
	if !strings.HasPrefix(addr, "127.0.0.1:") && !strings.HasPrefix(addr, "localhost:") {
		return 0
	}
	info, err := rc.Client().Info(ctx, "server").Result()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			var pid int
			if _, err := fmt.Sscan(v, &pid); err == nil {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
					return pid
				}
			}
		}
	}
	return 0
}

// loginRuns measures password login over HTTP and PBKDF2 verification in
// this process, each at one and at -login-c concurrency.
func (r *runner) loginRuns(ctx context.Context, k *server) error {
	iters := r.o.iterations
	if iters == 0 {
		iters = config.Defaults().Service.Security.Password.Pbkdf2Iterations
	}
	r.res.Login.Iterations = iters
	h := password.New(iters)
	hash, err := h.Hash(adminPassword)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"account": adminAccount, "password": adminPassword})
	for _, c := range slices.Compact([]int{1, r.o.loginConns}) {
		p := pbkdf2Loop(ctx, h, hash, c, 3*time.Second)
		logf("PBKDF2 verify x%d goroutines: %.1f/s, p50 %.1f ms", c, p.PerSecond, p.P50Ms)
		run, err := r.measure(ctx, fmt.Sprintf("POST /api/v1/auth/login x%d", c), k, 0, load.Config{
			URL: k.base + "/api/v1/auth/login", Method: http.MethodPost, Body: body,
			Header: http.Header{"Content-Type": {"application/json"}}, Connections: c,
		})
		if err != nil {
			return err
		}
		r.res.Login.Runs = append(r.res.Login.Runs, loginRun{Concurrency: c, PBKDF2: p, HTTP: run})
	}
	return nil
}

// pbkdf2Loop verifies hash with n goroutines for d.
func pbkdf2Loop(ctx context.Context, h password.Hasher, hash string, n int, d time.Duration) pbkdf2Run {
	end := time.Now().Add(d)
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(end) {
				t0 := time.Now()
				ok, err := h.VerifyContext(ctx, hash, adminPassword)
				dt := time.Since(t0)
				if err != nil || !ok {
					return
				}
				mu.Lock()
				lat = append(lat, dt)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	out := pbkdf2Run{Goroutines: n, Verifies: len(lat)}
	if len(lat) > 0 {
		out.PerSecond = float64(len(lat)) / d.Seconds()
		out.P50Ms = ms(load.Percentile(lat, 50))
		out.P99Ms = ms(load.Percentile(lat, 99))
	}
	return out
}

// authorizeRuns measures GET /auth/external/{code}/authorize (302) for the
// built-in OIDC provider and, when one is registered, a plugin provider.
func (r *runner) authorizeRuns(ctx context.Context, k *server, cache string, redisPID int) error {
	a := newAPI(k.base)
	codes, err := a.providers(ctx)
	if err != nil {
		return err
	}
	try := func(code string) (string, error) {
		rep, err := a.do(ctx, http.MethodGet, "/api/v1/auth/external/"+code+"/authorize", "", nil)
		if err != nil {
			return "", err
		}
		if rep.Status != http.StatusFound {
			return "", fmt.Errorf("HTTP %d: %.200s", rep.Status, rep.Raw)
		}
		return rep.Header.Get("Location"), nil
	}
	// measureBoth runs the authorize redirect of one provider at the
	// configured connections (throughput) and, with the in-process cache,
	// one request at a time (the latency the round-trip target is about).
	measureBoth := func(label, target, code string) error {
		for _, conns := range []int{r.o.conns, 1} {
			if conns == 1 && cache != "memcache" {
				break
			}
			run, err := r.measure(ctx, fmt.Sprintf("authorize %s [%s, %d conn]", label, cache, conns), k, redisPID, load.Config{
				URL: k.base + "/api/v1/auth/external/" + code + "/authorize", Expect: http.StatusFound, Connections: conns,
			})
			if err != nil {
				return err
			}
			run.Cache, run.Target = cache, target
			r.res.Authorize = append(r.res.Authorize, run)
		}
		return nil
	}
	if _, err := try(oidcCode); err != nil {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("OIDC authorize [%s] skipped: %v", cache, err))
	} else if err := measureBoth("built-in OIDC", "oidc:"+oidcCode, oidcCode); err != nil {
		return err
	}
	var plugin string
	var why []string
	for _, c := range codes {
		if c == oidcCode {
			continue
		}
		if _, err := try(c); err != nil {
			why = append(why, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		plugin = c
		break
	}
	if plugin == "" {
		note := fmt.Sprintf("plugin authorize [%s] skipped: ", cache)
		switch {
		case r.pluginDir() == "":
			note += "no plugin binaries (adminkernel-provider-*) in bench/out/bin/plugins or bin/plugins"
		case len(why) == 0:
			note += "plugin binaries found in " + r.pluginDir() + " but the kernel registered no plugin provider (is the plugin host wired into host.New?)"
		default:
			note += "no plugin provider answered 302: " + strings.Join(why, "; ")
		}
		r.res.Notes = append(r.res.Notes, note)
		return nil
	}
	return measureBoth("plugin "+plugin, "plugin:"+plugin, plugin)
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
