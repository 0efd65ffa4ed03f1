package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
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

// series are one route's pre-resolved children, one per status class, so
// that a request costs two atomic adds and no label lookup.
type series struct {
	count [len(statusClasses)]prometheus.Counter
	took  [len(statusClasses)]prometheus.Observer
}

func newSeries(m *Metrics, route, method string) *series {
	s := &series{}
	for i, class := range statusClasses {
		s.count[i] = m.httpRequests.WithLabelValues(route, method, class)
		s.took[i] = m.httpDuration.WithLabelValues(route, method, class)
	}
	return s
}

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

// IndexRoutes pre-resolves the series of every route the app has (call it
// once every route is mounted; later calls add routes mounted since).
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
	// UserID returns the authenticated caller of a request, if any (for the
	// access log).
	UserID func(c fiber.Ctx) (int64, bool)
	// RequestID returns the request's id (for the access log).
	RequestID func(c fiber.Ctx) string
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
			s.count[class].Inc()
			s.took[class].Observe(took.Seconds())
		}
		if opts.AccessLog != nil {
			m.logAccess(c, opts, route, status, took)
		}
		return err
	}
}

// logAccess writes the access line: never the raw path or query string
// (they can carry secrets), the route template instead.
func (m *Metrics) logAccess(c fiber.Ctx, opts HTTPOptions, route string, status int, took time.Duration) {
	args := make([]any, 0, 12)
	args = append(args, "method", methodLabel(c.Method()), "route", route, "status", status,
		"duration_ms", float64(took.Microseconds())/1000)
	if opts.RequestID != nil {
		args = append(args, "request_id", opts.RequestID(c))
	}
	if sc := trace.SpanContextFromContext(c.Context()); sc.IsValid() {
		args = append(args, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	if opts.UserID != nil {
		if id, ok := opts.UserID(c); ok {
			args = append(args, "user_id", id)
		}
	}
	opts.AccessLog.Info("request", args...)
}

func methodLabel(method string) string {
	for _, m := range methods {
		if m == method {
			return m
		}
	}
	return "OTHER"
}
