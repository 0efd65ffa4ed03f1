package tracing

import (
	"github.com/gofiber/fiber/v3"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TraceparentHeader is the W3C trace-context header.
const TraceparentHeader = "traceparent"

// requestCarrier reads the trace context from a request's headers.
type requestCarrier struct{ h *fasthttp.RequestHeader }

func (c requestCarrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c requestCarrier) Set(string, string)    {}
func (c requestCarrier) Keys() []string        { return []string{TraceparentHeader, "tracestate"} }

// responseCarrier writes the trace context on an answer.
type responseCarrier struct{ h *fasthttp.ResponseHeader }

func (c responseCarrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c responseCarrier) Set(key, value string) { c.h.Set(key, value) }
func (c responseCarrier) Keys() []string        { return nil }

// Middleware starts the server span of every request: its parent is the
// caller's W3C traceparent when one arrives (the caller's sampling decision
// is kept), its name "<METHOD> <route template>" (never the raw path: it can
// carry ids and secrets), and the answer carries the request's own
// traceparent. The span is in the request's context (c.Context()), so the
// spans of the SQL statements, Redis commands, outbound calls and plugin
// RPCs of the request are its children, and log lines written with that
// context carry its trace id. Nil when t is nil: the middleware is then not
// mounted.
//
// Mount it after the request-id middleware and outside the metrics
// middleware, which writes the answer of an error (the status the span
// records is the one sent). A request whose path skip reports (the health
// probes) is passed on untraced; skip may be nil.
func (t *Tracer) Middleware(skip func(path string) bool) fiber.Handler {
	if t == nil {
		return nil
	}
	return func(c fiber.Ctx) error {
		if skip != nil && skip(c.Path()) {
			return c.Next()
		}
		rc := c.RequestCtx()
		ctx := t.prop.Extract(c.Context(), requestCarrier{&rc.Request.Header})
		method := methodName(c.Method())
		ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", method)))
		defer span.End()
		t.prop.Inject(ctx, responseCarrier{&rc.Response.Header})
		c.SetContext(ctx)
		err := c.Next()
		route := "unmatched"
		if r := c.Route(); r != nil && r.Path != "" && c.Response().StatusCode() != fiber.StatusNotFound {
			route = r.Path
		}
		status := c.Response().StatusCode()
		span.SetName(method + " " + route)
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
		return err
	}
}

// methodName keeps the span name's method to the standard ones.
func methodName(m string) string {
	switch m {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
		fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace:
		return m
	}
	return "HTTP"
}
