package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/adminkernel/kernel/host/internal/textclip"
)

// Unmatched is the route label of a request no registered route answered
// (404, 405, a preflight answered by a middleware).
const Unmatched = "unmatched"

// statusClasses are the status labels, by status / 100.
var statusClasses = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// methods are the method labels; anything else counts as OTHER (the
// method is the caller's text, so it is never a label as sent).
var methods = []string{
	fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
	fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace, "OTHER",
}

// routeKey is a registered route: its method and template.
type routeKey struct{ method, path string }

// series are one route's children, one per status class, created by the
// first request of that class (an idle replica exports no series for the
// hundreds of routes × methods × classes it has not answered) and then
// kept, so that a later request costs an atomic load and two atomic adds.
type series struct {
	route, method string
	m             *Metrics
	class         [len(statusClasses)]atomic.Pointer[classSeries]
}

// classSeries are the counter and the histogram of one status class.
type classSeries struct {
	count prometheus.Counter
	took  prometheus.Observer
}

func newSeries(m *Metrics, route, method string) *series {
	return &series{route: route, method: method, m: m}
}

// of returns the series of a status class, creating them on first use.
func (s *series) of(class int) *classSeries {
	if cs := s.class[class].Load(); cs != nil {
		return cs
	}
	cs := &classSeries{
		count: s.m.httpRequests.WithLabelValues(s.route, s.method, statusClasses[class]),
		took:  s.m.httpDuration.WithLabelValues(s.route, s.method, statusClasses[class]),
	}
	// Two first requests may race: WithLabelValues returns the same
	// children to both, so either pointer is the right one.
	s.class[class].CompareAndSwap(nil, cs)
	return s.class[class].Load()
}

// startClasses are the status classes created at zero for the unmatched
// GET series when the metrics are built: the dashboard's panels of
// adminkernel_http_requests_total and _request_duration_seconds (by
// status class, by route) have their families from the first scrape,
// before any request.
var startClasses = []int{2, 4, 5}

// httpRoutes maps the registered routes to their series. The map is built
// once the routes are mounted (IndexRoutes) and only read afterwards.
type httpRoutes struct {
	m         *Metrics
	known     atomic.Pointer[map[routeKey]*series]
	unmatched map[string]*series // by method label
}

func newHTTPRoutes(m *Metrics) *httpRoutes {
	h := &httpRoutes{m: m, unmatched: make(map[string]*series, len(methods))}
	for _, method := range methods {
		h.unmatched[method] = newSeries(m, Unmatched, method)
	}
	for _, class := range startClasses {
		h.unmatched[fiber.MethodGet].of(class)
	}
	empty := map[routeKey]*series{}
	h.known.Store(&empty)
	return h
}

func (h *httpRoutes) lookup(c fiber.Ctx) (*series, string) {
	method := c.Method()
	if r := c.Route(); r != nil {
		if s, ok := (*h.known.Load())[routeKey{method, r.Path}]; ok {
			return s, r.Path
		}
	}
	if s, ok := h.unmatched[method]; ok {
		return s, Unmatched
	}
	return h.unmatched["OTHER"], Unmatched
}

// IndexRoutes records every route the app has (call it once every route
// is mounted; later calls add routes mounted since): only their requests
// get a series of their own, created by the first one.
func (m *Metrics) IndexRoutes(app *fiber.App) {
	if m == nil {
		return
	}
	next := make(map[routeKey]*series)
	for k, v := range *m.http.known.Load() {
		next[k] = v
	}
	for _, r := range app.GetRoutes(true) {
		k := routeKey{r.Method, r.Path}
		if _, ok := next[k]; !ok {
			next[k] = newSeries(m, r.Path, r.Method)
		}
	}
	m.http.known.Store(&next)
}

// HTTPOptions configure the request middleware.
type HTTPOptions struct {
	// ErrorHandler writes the answer of an error a later handler returned
	// (the app's central handler): the middleware runs it so that the
	// status it counts is the one sent.
	ErrorHandler fiber.ErrorHandler
	// AccessLog, when not nil, receives one line per request.
	AccessLog hclog.Logger
	// Quiet, when set, names the requests the access log skips (the
	// health probes, unless Service:Telemetry:ObserveProbes); they are
	// counted all the same.
	Quiet func(c fiber.Ctx) bool
	// User returns the authenticated caller of a request, if any: the
	// user's id and account (for the access log).
	User func(c fiber.Ctx) (id int64, account string, ok bool)
	// RequestID returns the request's id (for the access log).
	RequestID func(c fiber.Ctx) string
	// Client returns the client address of a request, read through the
	// trusted proxies (for the access log).
	Client func(c fiber.Ctx) string
	// Code returns the envelope code the answer carries (ok false when the
	// answer is no envelope: a file, a page, a probe), for the access log:
	// a business failure is HTTP 200 with its code.
	Code func(c fiber.Ctx) (code int, ok bool)
}

// Middleware times every request and counts it by route template, method
// and status class; with HTTPOptions.AccessLog it also logs the request.
// Mount it after the request-id middleware and before the panic recovery,
// so that a panic's 500 is counted. With a nil receiver and no access log
// it only passes the request on.
func (m *Metrics) Middleware(opts HTTPOptions) fiber.Handler {
	if m == nil && opts.AccessLog == nil {
		return func(c fiber.Ctx) error { return c.Next() }
	}
	return func(c fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil && opts.ErrorHandler != nil {
			// The answer of the error is written here, as the app would
			// after the chain, so the status is known.
			if herr := opts.ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
			err = nil
		}
		took := time.Since(start)
		status := c.Response().StatusCode()
		class := status / 100
		if class < 1 || class > 5 {
			class = 0
		}
		route := Unmatched
		if m != nil {
			var s *series
			s, route = m.http.lookup(c)
			cs := s.of(class)
			cs.count.Inc()
			cs.took.Observe(took.Seconds())
		}
		if opts.AccessLog != nil && (opts.Quiet == nil || !opts.Quiet(c)) {
			m.logAccess(c, opts, route, status, took)
		}
		return err
	}
}

// logAccess writes the access line: never the raw path or query string
// (they can carry secrets), the route template instead.
func (m *Metrics) logAccess(c fiber.Ctx, opts HTTPOptions, route string, status int, took time.Duration) {
	args := make([]any, 0, 24)
	args = append(args, "method", methodLabel(c.Method()), "route", route, "status", status)
	if opts.Code != nil {
		if code, ok := opts.Code(c); ok {
			args = append(args, "code", code)
		}
	}
	args = append(args, "duration_ms", float64(took.Microseconds())/1000)
	if opts.Client != nil {
		if ip := opts.Client(c); ip != "" {
			args = append(args, "client", ip)
		}
	}
	if ua := c.Get(fiber.HeaderUserAgent); ua != "" {
		args = append(args, "user_agent", textclip.ValidRunes(ua, maxUserAgent))
	}
	if opts.RequestID != nil {
		args = append(args, "request_id", opts.RequestID(c))
	}
	if sc := trace.SpanContextFromContext(c.Context()); sc.IsValid() {
		args = append(args, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	if opts.User != nil {
		if id, account, ok := opts.User(c); ok {
			args = append(args, "user_id", id)
			if account != "" {
				args = append(args, "account", account)
			}
		}
	}
	opts.AccessLog.Info("request", args...)
}

// maxUserAgent bounds the user agent in an access line (the caller's text).
const maxUserAgent = 256

func methodLabel(method string) string {
	for _, m := range methods {
		if m == method {
			return m
		}
	}
	return "OTHER"
}
