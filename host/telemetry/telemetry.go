// Package telemetry provides the kernel's Prometheus metrics: one registry
// per kernel (never the global one: a process may run several kernels, and
// tests compare exact figures), the HTTP middleware that times requests by
// route template, the counters the login, session, rate-limit and plugin
// code move, and the collectors read at scrape time (database pool,
// operation-log queue, password-hash pool, sessions, plugins).
//
// Every method of *Metrics is safe on a nil receiver and does nothing then,
// so a package built without metrics (tests, tools) needs no check at its
// one-line hooks. No label value comes from user input: routes are Fiber's
// registered templates, methods a fixed list, providers the configured
// codes, outcomes the error catalog's numbers.
package telemetry

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every kernel metric.
const Namespace = "adminkernel"

// Metrics holds the registry and the metrics the kernel moves.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	http         *httpRoutes

	logins        *prometheus.CounterVec
	refreshes     *prometheus.CounterVec
	reuse         prometheus.Counter
	lockouts      prometheus.Counter
	rateLimited   *prometheus.CounterVec
	pluginCalls   *prometheus.HistogramVec
	pluginRestart *prometheus.CounterVec
	cache         *cacheCounters
	db            *dbQueries
	invalidation  *prometheus.HistogramVec
}

// New builds the metrics with the Go runtime and process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "http", Name: "requests_total",
		Help: "HTTP requests answered, by route template, method and status class.",
	}, []string{"route", "method", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route template, method and status class.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method", "status"})
	m.http = newHTTPRoutes(m)
	m.logins = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "auth", Name: "logins_total",
		Help: "Login attempts, by method, provider code (external logins) and outcome code (0 = success).",
	}, []string{"method", "provider", "code"})
	m.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "auth", Name: "refreshes_total",
		Help: "Refresh-token rotations, by outcome code (0 = success).",
	}, []string{"code"})
	m.reuse = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "auth", Name: "refresh_reuse_detections_total",
		Help: "Rotated refresh tokens presented again (each revoked its session).",
	})
	m.lockouts = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "auth", Name: "lockouts_total",
		Help: "Account/client pairs locked after repeated failed logins.",
	})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "ratelimit", Name: "refusals_total",
		Help: "Requests refused with 429 by the rate limiter, by bucket (auth, password, api).",
	}, []string{"bucket"})
	m.pluginCalls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "plugin", Name: "call_duration_seconds",
		Help:    "Provider plugin RPC calls, by provider code, method and outcome (ok, error).",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"provider", "method", "outcome"})
	m.pluginRestart = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "plugin", Name: "restarts_total",
		Help: "Restart attempts of a provider plugin that went down, by provider code.",
	}, []string{"provider"})
	// The dashboard's labelled counters exist from the first scrape, at
	// zero, rather than from their first event: a successful password
	// login, a successful refresh, the rate limiter's buckets.
	m.logins.WithLabelValues("password", "", "0")
	m.refreshes.WithLabelValues("0")
	for _, bucket := range RateLimitBuckets {
		m.rateLimited.WithLabelValues(bucket)
	}
	m.cache = newCacheCounters()
	m.db = newDBQueries()
	m.invalidation = newInvalidationLag()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.logins, m.refreshes, m.reuse, m.lockouts,
		m.rateLimited, m.pluginCalls, m.pluginRestart, m.cache.hits, m.cache.misses,
		m.db.vec, m.invalidation,
	)
	return m
}

// Registry returns the registry (tests gather from it; an application may
// register its own collectors).
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Register adds collectors (the kernel's scrape-time collectors, an
// application's own metrics).
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	if m == nil {
		return nil
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// RateLimitBuckets are the rate limiter's buckets (host/ratelimit's
// BucketAuth, BucketPassword and BucketOther) whose refusal counters exist from the start.
var RateLimitBuckets = []string{"auth", "password", "api"}

// PluginsConfigured creates at zero the restart counter of each configured
// provider plugin, so that the dashboard's restarts panel has its series
// before the first restart.
func (m *Metrics) PluginsConfigured(providers ...string) {
	if m == nil {
		return
	}
	for _, p := range providers {
		if p != "" {
			m.pluginRestart.WithLabelValues(p)
		}
	}
}

// builtinMethods are the login methods that are not external providers
// (host/auth's Method* constants).
var builtinMethods = map[string]bool{"password": true, "sms": true, "totp": true, "passkey": true}

// Login counts a login attempt. method is the login-log method: a built-in
// method, or the provider code of an external login (then counted as
// method "external" with that provider). code is the answer's code (0 =
// success).
func (m *Metrics) Login(method string, code int) {
	if m == nil {
		return
	}
	provider := ""
	if !builtinMethods[method] {
		method, provider = "external", method
	}
	m.logins.WithLabelValues(method, provider, strconv.Itoa(code)).Inc()
}

// Refresh counts a refresh-token rotation with its outcome code (0 = success).
func (m *Metrics) Refresh(code int) {
	if m == nil {
		return
	}
	m.refreshes.WithLabelValues(strconv.Itoa(code)).Inc()
}

// ReuseDetected counts a refresh-token reuse detection.
func (m *Metrics) ReuseDetected() {
	if m == nil {
		return
	}
	m.reuse.Inc()
}

// Lockout counts a login lock.
func (m *Metrics) Lockout() {
	if m == nil {
		return
	}
	m.lockouts.Inc()
}

// RateLimited counts a rate-limit refusal of a bucket (ratelimit.BucketAuth,
// ratelimit.BucketOther).
func (m *Metrics) RateLimited(bucket string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(bucket).Inc()
}

// PluginCall records one plugin RPC (method is the SDK method name).
func (m *Metrics) PluginCall(provider, method string, took time.Duration, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.pluginCalls.WithLabelValues(provider, method, outcome).Observe(took.Seconds())
}

// PluginRestart counts a restart attempt of a plugin that went down.
func (m *Metrics) PluginRestart(provider string) {
	if m == nil {
		return
	}
	m.pluginRestart.WithLabelValues(provider).Inc()
}
