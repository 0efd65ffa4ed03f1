package bench_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/bench/internal/bare"
	"github.com/adminkernel/kernel/host"
)

// servePing runs GET path through app's request handler in process (no
// socket): the fasthttp request context is reused as the server would
// reuse it across keep-alive requests.
func servePing(b *testing.B, app *fiber.App, path, token string) {
	b.Helper()
	h := app.Handler()
	fctx := newOf(h)
	fctx.Request.Header.SetMethod(http.MethodGet)
	fctx.Request.SetRequestURI(path)
	if token != "" {
		fctx.Request.Header.Set("Authorization", "Bearer "+token)
	}
	h(fctx)
	if got := fctx.Response.StatusCode(); got != http.StatusOK {
		b.Fatalf("GET %s: HTTP %d: %s", path, got, fctx.Response.Body())
	}
	b.ReportAllocs()
	report := cpuPerOp(b)
	for b.Loop() {
		fctx.Response.Reset()
		h(fctx)
	}
	report()
	if got := fctx.Response.StatusCode(); got != http.StatusOK {
		b.Fatalf("GET %s: HTTP %d: %s", path, got, fctx.Response.Body())
	}
}

// servePingParallel is servePing from GOMAXPROCS goroutines at once, each
// with its own request context, as the server runs its connections: shared
// state written on every request (locks, counters) shows here and not in
// servePing.
func servePingParallel(b *testing.B, app *fiber.App, path, token string) {
	b.Helper()
	h := app.Handler()
	b.ReportAllocs()
	report := cpuPerOp(b)
	b.RunParallel(func(pb *testing.PB) {
		fctx := newOf(h)
		fctx.Request.Header.SetMethod(http.MethodGet)
		fctx.Request.SetRequestURI(path)
		if token != "" {
			fctx.Request.Header.Set("Authorization", "Bearer "+token)
		}
		for pb.Next() {
			fctx.Response.Reset()
			h(fctx)
			if fctx.Response.StatusCode() != http.StatusOK {
				b.Errorf("GET %s: HTTP %d: %s", path, fctx.Response.StatusCode(), fctx.Response.Body())
				return
			}
		}
	})
	report()
}

// BenchmarkPing is the HTTP comparison without the network: the bare Fiber
// server's GET /ping against the kernel's GET /api/v1/ping through its whole
// middleware chain (request id, recover, rate limiter, SQL-log scope, the
// Permission guard: token, session, permission; the handler and the
// envelope). superAdmin's token skips the permission lookup (sadm); user
// holds every permission code and takes the full path. ratelimit-on is user
// with the limiter switched on (allowance raised so nothing is refused):
// the default in production.
func BenchmarkPing(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		servePing(b, bare.NewApp(), "/ping", "")
	})
	b.Run("bare/parallel", func(b *testing.B) {
		servePingParallel(b, bare.NewApp(), "/ping", "")
	})
	for _, kind := range kernelKinds {
		b.Run("kernel/"+kind, func(b *testing.B) {
			k := startKernel(b, kind)
			addUser(b, k, "pinguser", userPassword, permissionCodes(k)...)
			admin := login(b, k, "superAdmin", adminPassword)
			user := login(b, k, "pinguser", userPassword)
			b.Run("superAdmin", func(b *testing.B) { servePing(b, k.App(), host.APIPrefix+"/ping", admin) })
			b.Run("user", func(b *testing.B) { servePing(b, k.App(), host.APIPrefix+"/ping", user) })
			b.Run("user/parallel", func(b *testing.B) { servePingParallel(b, k.App(), host.APIPrefix+"/ping", user) })
			b.Run("user+ratelimit", func(b *testing.B) {
				set(b, k, "sys.security.rateLimit.permitPerWindow", "2000000000")
				set(b, k, "sys.security.rateLimit.enabled", "true")
				defer set(b, k, "sys.security.rateLimit.enabled", "false")
				servePing(b, k.App(), host.APIPrefix+"/ping", user)
			})
		})
	}
}

func set(b *testing.B, k *host.Kernel, key, value string) {
	b.Helper()
	if err := k.Settings().Set(context.Background(), key, value); err != nil {
		b.Fatal(err)
	}
}
