// Package health serves the liveness (/health) and readiness (/health/ready)
// probes. Readiness pings the database and the cache on every call: while
// one is down it answers 503 with that check Unhealthy, and a ping that
// answers again ends the dependency's outage (its tracker logs it back,
// host/outage) even when no request has touched it yet.
package health

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/internal/outage"
)

// Status values of a probe and of each check.
const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
)

// Check is one readiness dependency (database, cache).
type Check struct {
	Name  string
	Probe func(ctx context.Context) error
}

// Report is the probe body.
type Report struct {
	Status  string        `json:"status"`
	TotalMs int64         `json:"totalMs"`
	Checks  []CheckResult `json:"checks"`
}

// CheckResult is the outcome of one check. Error carries only the kind of
// failure, never its message (which could hold a connection string).
type CheckResult struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Ms     int64    `json:"ms"`
	Error  string   `json:"error,omitempty"`
	Tags   []string `json:"tags"`
}

// Paths of the probes.
const (
	LivePath  = "/health"
	ReadyPath = "/health/ready"
)

// IsProbe reports whether path is one of the probes (the tracing and the
// access log leave them out unless Service:Telemetry:ObserveProbes).
// The router matches paths without regard to case or a trailing slash,
// and so does IsProbe.
func IsProbe(path string) bool {
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	return strings.EqualFold(path, LivePath) || strings.EqualFold(path, ReadyPath)
}

// Mount adds GET /health (touches nothing) and GET /health/ready (runs every
// check in parallel, each bounded by timeout; 200 when all pass, else 503).
// While draining reports true (the replica is shutting down) readiness is
// 503 at once with the single check "shutdown" Unhealthy "draining", so a
// load balancer stops sending new requests; liveness stays 200.
func Mount(r fiber.Router, checks []Check, timeout time.Duration, draining func() bool) {
	r.Get(LivePath, func(c fiber.Ctx) error {
		return c.JSON(Report{Status: Healthy, Checks: []CheckResult{}})
	})
	r.Get(ReadyPath, func(c fiber.Ctx) error {
		if draining != nil && draining() {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return c.Status(http.StatusServiceUnavailable).JSON(Report{Status: Unhealthy, Checks: []CheckResult{
				{Name: "shutdown", Status: Unhealthy, Error: "draining", Tags: []string{"ready"}},
			}})
		}
		rep := Ready(c.Context(), checks, timeout)
		status := http.StatusOK
		if rep.Status != Healthy {
			status = http.StatusServiceUnavailable
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Status(status).JSON(rep)
	})
}

// Ready runs the checks and summarises them.
func Ready(ctx context.Context, checks []Check, timeout time.Duration) Report {
	start := time.Now()
	results := make([]CheckResult, len(checks))
	done := make(chan struct{}, len(checks))
	for i, ch := range checks {
		go func() {
			defer func() { done <- struct{}{} }()
			results[i] = run(ctx, ch, timeout)
		}()
	}
	for range checks {
		<-done
	}
	rep := Report{Status: Healthy, Checks: results}
	for _, r := range results {
		if r.Status != Healthy {
			rep.Status = Unhealthy
		}
	}
	rep.TotalMs = time.Since(start).Milliseconds()
	return rep
}

func run(ctx context.Context, ch Check, timeout time.Duration) (res CheckResult) {
	start := time.Now()
	res = CheckResult{Name: ch.Name, Status: Healthy, Tags: []string{"ready"}}
	defer func() {
		if r := recover(); r != nil {
			res.Status, res.Error = Unhealthy, "panic"
		}
		res.Ms = time.Since(start).Milliseconds()
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := ch.Probe(ctx); err != nil {
		res.Status = Unhealthy
		res.Error = kind(ctx, err)
	}
	return res
}

// kind describes the failure: "timeout" when the check ran out of time,
// otherwise the error's message (for a dependency the cache or database
// layer marked unreachable, the driver error's: "dial tcp 10.0.0.5:6379:
// connect: connection refused"), cut to maxErrorLen characters, with
// anything that looks like a credential (password=..., user:pass@ in a
// URL) masked: the probe is public.
func kind(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "timeout"
	}
	if oe, ok := outage.As(err); ok && oe.Err != nil {
		err = oe.Err
	}
	msg := credentialPair.ReplaceAllString(err.Error(), "$1=***")
	msg = urlUserInfo.ReplaceAllString(msg, "://***@")
	if r := []rune(msg); len(r) > maxErrorLen {
		msg = string(r[:maxErrorLen]) + "…"
	}
	return msg
}

// maxErrorLen bounds the error of a check in the report.
const maxErrorLen = 256

var (
	credentialPair = regexp.MustCompile(`(?i)\b(password|passwd|pwd|secret|token|apikey|api_key)\s*[=:]\s*[^\s,;&]+`)
	urlUserInfo    = regexp.MustCompile(`://[^/@\s]+@`)
)
