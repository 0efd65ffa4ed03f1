package bench_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/password"
)

const (
	adminPassword = "Adm1n#Passw0rd"
	userPassword  = "Us3r#Passw0rd"
	// pingCode is the permission code of GET /api/v1/ping.
	pingCode = "GET:/api/v1/ping"
)

// redisAddrEnv overrides the Redis address, as for the cache tests.
const redisAddrEnv = "ADMINKERNEL_TEST_REDIS"

func redisAddr() string {
	if a := os.Getenv(redisAddrEnv); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// uniquePrefix namespaces one benchmark's Redis keys.
func uniquePrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("akbench:%d:%s:", os.Getpid(), hex.EncodeToString(b[:]))
}

// cleanRedisPrefix removes every key under prefix when the benchmark ends.
func cleanRedisPrefix(tb testing.TB, prefix string) {
	tb.Cleanup(func() {
		c, err := rediscache.New(context.Background(), config.Redis{Address: redisAddr(), KeyPrefix: prefix})
		if err != nil {
			tb.Logf("cleaning Redis keys %s*: %v", prefix, err)
			return
		}
		if _, err := c.DeletePrefix(context.Background(), ""); err != nil {
			tb.Logf("cleaning Redis keys %s*: %v", prefix, err)
		}
		if err := c.Close(); err != nil {
			tb.Logf("closing the Redis client: %v", err)
		}
	})
}

// requireRedis fails the benchmark with a clear message when Redis does not
// answer.
func requireRedis(tb testing.TB) {
	tb.Helper()
	c, err := rediscache.New(context.Background(), config.Redis{Address: redisAddr(), KeyPrefix: "akbench:probe:"})
	if err != nil {
		tb.Fatalf("Redis is unreachable at %s: %v\nthe Redis benchmarks need a running server (redis-server on 127.0.0.1:6379, or set %s=host:port)", redisAddr(), err, redisAddrEnv)
	}
	_ = c.Close()
}

// newStore opens a cache of the given kind ("memcache" or "redis"); a Redis
// store gets a unique key prefix that is cleaned afterwards.
func newStore(tb testing.TB, kind string) cache.Store {
	tb.Helper()
	switch kind {
	case "memcache":
		mc, err := memcache.New(memcache.Options{EntryLimit: 100000, MaxEntryAge: 24 * time.Hour})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = mc.Close() })
		return mc
	case "redis":
		requireRedis(tb)
		prefix := uniquePrefix()
		rc, err := rediscache.New(context.Background(), config.Redis{Address: redisAddr(), KeyPrefix: prefix})
		if err != nil {
			tb.Fatalf("Redis is unreachable at %s: %v", redisAddr(), err)
		}
		cleanRedisPrefix(tb, prefix)
		tb.Cleanup(func() { _ = rc.Close() })
		return rc
	}
	tb.Fatalf("unknown store %q", kind)
	return nil
}

var storeKinds = []string{"memcache", "redis"}

// kernelKinds are the cache settings the kernel benchmarks run with:
// the in-process cache, Redis with the replica-local near cache (the
// default with Redis), and Redis without it (NearCacheSeconds=0: every
// read is a round trip).
var kernelKinds = []string{"memcache", "redis", "redis-nonear"}

// startKernel starts a Development kernel on SQLite in a temporary content
// root, super-admin password adminPassword, rate limiting off. cacheKind
// "redis" switches Service:Cache:Provider to Redis with a unique prefix,
// "redis-nonear" also turns the near cache off.
func startKernel(tb testing.TB, cacheKind string, environ ...string) *host.Kernel {
	tb.Helper()
	env := append([]string{
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
	}, environ...)
	if cacheKind == "redis-nonear" {
		env = append(env, "Service__Cache__NearCacheSeconds=0")
	}
	if strings.HasPrefix(cacheKind, "redis") {
		requireRedis(tb)
		prefix := uniquePrefix()
		env = append(env, "Service__Cache__Provider=Redis", "Service__Cache__Redis__Address="+redisAddr(),
			"Service__Cache__Redis__KeyPrefix="+prefix)
		cleanRedisPrefix(tb, prefix)
	}
	cfg, err := config.Load(config.LoadOptions{ContentRoot: tb.TempDir(), Environment: config.Development, Environ: env})
	if err != nil {
		tb.Fatalf("config.Load: %v", err)
	}
	k, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: io.Discard})
	if err != nil {
		tb.Fatalf("host.New: %v", err)
	}
	tb.Cleanup(func() { _ = k.Close() })
	if err := k.Settings().Set(context.Background(), "sys.security.rateLimit.enabled", "false"); err != nil {
		tb.Fatal(err)
	}
	return k
}

// login signs in over the kernel's HTTP stack and returns the access token.
func login(tb testing.TB, k *host.Kernel, account, pw string) string {
	tb.Helper()
	body, _ := json.Marshal(map[string]string{"account": account, "password": pw})
	req := httptest.NewRequest("POST", "/api/v1/auth/login", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		tb.Fatalf("login %s: %v", account, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Code int `json:"code"`
		Data struct {
			AccessToken string `json:"accessToken"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Code != 0 || env.Data.AccessToken == "" {
		tb.Fatalf("login %s: HTTP %d %s", account, resp.StatusCode, raw)
	}
	return env.Data.AccessToken
}

// addUser creates an enabled, non-super-admin account holding codes
// through a fresh role and menu button, and returns its id.
func addUser(tb testing.TB, k *host.Kernel, account, pw string, codes ...string) int64 {
	tb.Helper()
	ctx := context.Background()
	h, err := password.New(100000).Hash(pw)
	if err != nil {
		tb.Fatal(err)
	}
	c := k.Ent()
	u := c.SysUser.Create().SetAccount(account).SetName(account).SetPasswordHash(h).SetOrgID(1).SaveX(ctx)
	role := c.SysRole.Create().SetName("bench-" + account).SetCode("bench_" + account).SaveX(ctx)
	// A menu's permission field holds at most 1024 characters: spread the
	// codes over as many buttons as needed.
	for len(codes) > 0 {
		n, size := 0, 0
		for n < len(codes) && size+len(codes[n])+1 <= 1000 {
			size += len(codes[n]) + 1
			n++
		}
		n = max(n, 1)
		m := c.SysMenu.Create().SetType(3).SetTitle("bench-" + account).SetPermission(strings.Join(codes[:n], ";")).SaveX(ctx)
		c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(m.ID).ExecX(ctx)
		codes = codes[n:]
	}
	c.SysUserRole.Create().SetUserID(u.ID).SetRoleID(role.ID).ExecX(ctx)
	if err := k.Permissions().Invalidate(ctx, u.ID); err != nil {
		tb.Fatal(err)
	}
	return u.ID
}

// newOf allocates a T inferred from a function's parameter type: it makes
// the *fasthttp.RequestCtx that app.Handler() takes without importing
// fasthttp (an indirect dependency of the module).
func newOf[T any](func(*T)) *T { return new(T) }

// processCPU returns the process's user+system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuPerOp starts counting the process's CPU time; the returned function
// reports it per iteration as cpu-ns/op. Wall-clock ns/op grows when other
// work competes for the CPUs; CPU time per operation much less so. It
// includes the process's background work (GC, cache goroutines) but not a
// Redis server's.
func cpuPerOp(b *testing.B) (report func()) {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
