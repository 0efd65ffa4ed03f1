package host

import (
	"context"
	"github.com/adminkernel/kernel/host/tracing"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/health"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/telemetry"
)

// AccessLogCategory is the log category of the access log
// (Service:Telemetry:AccessLog).
const AccessLogCategory = "AdminKernel.Access"

// Metrics returns the kernel's Prometheus metrics (an application may
// register its own collectors on Metrics().Registry()).
func (k *Kernel) Metrics() *telemetry.Metrics { return k.metrics }

// httpMetrics is the request middleware: metrics by route template and,
// with Service:Telemetry:AccessLog, the access log.
func (k *Kernel) httpMetrics(errorHandler fiber.ErrorHandler) fiber.Handler {
	opts := telemetry.HTTPOptions{ErrorHandler: errorHandler}
	if k.cfg.Service.Telemetry.AccessLog {
		opts.AccessLog = k.logs.For(AccessLogCategory)
		opts.RequestID = envelope.TraceID
		opts.Code = envelope.WrittenCode
		trusted := k.trusted
		opts.Client = func(c fiber.Ctx) string { return request.ClientIP(c, trusted) }
		opts.User = func(c fiber.Ctx) (int64, string, bool) {
			p, ok := authn.From(c)
			return p.UserID, p.Account, ok
		}
		if quiet := k.quietProbe(); quiet != nil {
			opts.Quiet = func(c fiber.Ctx) bool { return quiet(c.Path()) }
		}
	}
	return k.metrics.Middleware(opts)
}

// quietProbe tells the paths neither traced nor access-logged: the health
// probes, unless Service:Telemetry:ObserveProbes (nil then).
func (k *Kernel) quietProbe() func(path string) bool {
	if k.cfg.Service.Telemetry.ObserveProbes {
		return nil
	}
	return health.IsProbe
}

// metricsNotHere answers a metrics path on the main address (/metrics and
// below it, any letter case) with the API's 404 envelope (48003), in front
// of the console, which would answer it with its page: the metrics are
// served on Service:Telemetry:MetricsAddress, or on the main address only
// by the route mountMetrics adds (which answers before this).
func metricsNotHere(c fiber.Ctx) error {
	if isMetricsPath(c.Path()) {
		return fiber.ErrNotFound
	}
	return c.Next()
}

func isMetricsPath(p string) bool {
	const n = len(telemetry.Path)
	if len(p) < n || !strings.EqualFold(p[:n], telemetry.Path) {
		return false
	}
	return len(p) == n || p[n] == '/'
}

// observeSQL is the SQL log's per-statement hook: the query-latency
// histogram and, when tracing is on, the statement's span.
func (k *Kernel) observeSQL(system string) func(ctx context.Context, query string, start time.Time, elapsed time.Duration, err error) {
	system = strings.ToLower(system)
	return func(ctx context.Context, query string, start time.Time, elapsed time.Duration, err error) {
		k.metrics.DBQuery(tracing.Operation(query), elapsed)
		k.tracer.SQLSpan(ctx, system, query, start, elapsed, err)
	}
}

// mountMetrics serves /metrics on the main address when
// Service:Telemetry:MetricsOnMainAddress allows it (the settings then
// require the bearer token); elsewhere the path is no route of the API.
func (k *Kernel) mountMetrics() {
	t := k.cfg.Service.Telemetry
	if !t.MetricsOnMainAddress || t.MetricsAddress != "" || !t.MetricsBearerToken.IsSet() {
		return
	}
	k.app.Get(telemetry.Path, k.metrics.FiberHandler(t.MetricsBearerToken.Reveal(), func() error {
		return errcode.New(errcode.TokenInvalid)
	}))
}

// watch registers the collectors read at scrape time: the database pool,
// the operation-log queue, the password-hash pool, the active sessions and
// the plugins.
func (k *Kernel) watch() error {
	m := k.metrics
	if err := m.WatchDB("main", k.db.SQL); err != nil {
		return err
	}
	if err := m.WatchOpLog(k.oplog); err != nil {
		return err
	}
	if pool := k.hasher.Pool(); pool != nil {
		if err := m.WatchHashPool(func() telemetry.HashPoolStats {
			s := pool.Stats()
			return telemetry.HashPoolStats{
				Concurrency: s.Concurrency, QueueCapacity: s.QueueCapacity,
				Running: s.Running, Waiting: s.Waiting, Completed: s.Completed,
				Rejected: s.Rejected, TimedOut: s.TimedOut, Abandoned: s.Abandoned,
			}
		}); err != nil {
			return err
		}
	}
	client := k.db.Client
	if err := m.WatchSessions(func(ctx context.Context) (int, error) {
		return client.SysSession.Query().
			Where(syssession.RevokedAtIsNil(), syssession.ExpiresAtGT(time.Now())).Count(ctx)
	}); err != nil {
		return err
	}
	plugins := k.plugins
	if plugins != nil {
		for _, in := range plugins.Plugins() {
			m.PluginsConfigured(in.Code)
		}
	}
	return m.WatchPlugins(func() []telemetry.PluginState {
		if plugins == nil {
			return nil
		}
		infos := plugins.Plugins()
		out := make([]telemetry.PluginState, 0, len(infos))
		for _, in := range infos {
			out = append(out, telemetry.PluginState{Provider: in.Code, State: string(in.State)})
		}
		return out
	})
}

// serveMetrics starts the separate metrics listener when
// Service:Telemetry:MetricsAddress is set; the returned stop closes it.
func (k *Kernel) serveMetrics(ctx context.Context) (stop func(), err error) {
	t := k.cfg.Service.Telemetry
	addr := t.MetricsHostPort()
	if addr == "" {
		return func() {}, nil
	}
	log := k.logs.For("AdminKernel.Telemetry")
	srv, err := k.metrics.Listen(ctx, addr, t.MetricsBearerToken.Reveal(), log)
	if err != nil {
		return nil, err
	}
	if !t.MetricsBearerToken.IsSet() {
		log.Info("the metrics listener has no bearer token: bind it to a private interface", "address", srv.Addr().String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(); err != nil {
			log.Error("metrics listener failed", "error", err)
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(sctx)
		<-done
	}, nil
}
