// Package tracing is the kernel's OpenTelemetry tracing
// (Service:Telemetry:Tracing, docs/operators/operations.md "Tracing"): a tracer
// provider exporting over OTLP (HTTP or gRPC), W3C trace-context
// propagation, and the spans of HTTP requests, SQL statements, Redis
// commands, outbound HTTP calls and plugin RPCs.
//
// A nil *Tracer is tracing switched off: every method is then a no-op
// that allocates nothing, and the HTTP middleware is not mounted at all.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/adminkernel/kernel/config"
)

// ScopeName is the instrumentation scope of the kernel's spans.
const ScopeName = "github.com/adminkernel/kernel"

// TracesPath is appended to an OTLP/HTTP endpoint (the
// OTEL_EXPORTER_OTLP_ENDPOINT convention).
const TracesPath = "/v1/traces"

// Tracer holds the tracer provider of one kernel. The kernel owns it: it
// is not installed as OpenTelemetry's global provider (several kernels may
// share a process, as in the tests).
type Tracer struct {
	cfg      config.Tracing
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
}

// New builds the tracer of the settings, or returns nil when tracing is off
// (no Endpoint). The exporter connects lazily: an unreachable collector
// does not stop the kernel (spans are dropped and the exporter's errors
// logged by OpenTelemetry's error handler).
func New(ctx context.Context, cfg config.Tracing, version string) (*Tracer, error) {
	if !cfg.Enabled() {
		return nil, nil //nolint:nilnil // a nil tracer is tracing switched off
	}
	exp, err := newExporter(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("tracing exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", cfg.Service()),
		attribute.String("service.version", version),
	))
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Ratio()))),
	)
	return &Tracer{
		cfg:      cfg,
		provider: tp,
		tracer:   tp.Tracer(ScopeName),
		prop:     propagation.TraceContext{},
	}, nil
}

func headers(cfg config.Tracing) map[string]string {
	if len(cfg.Headers) == 0 {
		return nil
	}
	h := make(map[string]string, len(cfg.Headers))
	for k, v := range cfg.Headers {
		h[k] = v.Reveal()
	}
	return h
}

func newExporter(ctx context.Context, cfg config.Tracing) (sdktrace.SpanExporter, error) {
	if cfg.IsGRPC() {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(cfg.Endpoint)}
		if h := headers(cfg); h != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(h))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(strings.TrimSuffix(cfg.Endpoint, "/") + TracesPath)}
	if h := headers(cfg); h != nil {
		opts = append(opts, otlptracehttp.WithHeaders(h))
	}
	return otlptracehttp.New(ctx, opts...)
}

// Provider returns the tracer provider (nil when off).
func (t *Tracer) Provider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.provider
}

// Propagator returns the W3C trace-context propagator.
func (t *Tracer) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return nil
	}
	return t.prop
}

// Start starts a span (a no-op span, and ctx unchanged, when t is nil).
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name, opts...)
}

// Shutdown flushes the spans still buffered and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// ForceFlush exports the spans buffered so far.
func (t *Tracer) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

// PluginEnv is the environment a plugin process gets when tracing is on
// (the kernel starts plugins with an otherwise empty environment): exactly
// the OTLP exporter variables and the service name, which serve.Serve
// (pluginsdk/serve) reads to export the plugin's own spans. Nil when t is nil.
func (t *Tracer) PluginEnv(code string) []string {
	if t == nil {
		return nil
	}
	proto := "http/protobuf"
	if t.cfg.IsGRPC() {
		proto = "grpc"
	}
	env := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + strings.TrimSuffix(t.cfg.Endpoint, "/"),
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + proto,
		"OTEL_SERVICE_NAME=" + t.cfg.Service() + "-provider-" + code,
	}
	if strings.HasPrefix(strings.ToLower(t.cfg.Endpoint), "http://") {
		env = append(env, "OTEL_EXPORTER_OTLP_INSECURE=true")
	}
	if h := headers(t.cfg); h != nil {
		parts := make([]string, 0, len(h))
		for k, v := range h {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
		env = append(env, "OTEL_EXPORTER_OTLP_HEADERS="+strings.Join(parts, ","))
	}
	return env
}

// RecordError marks span failed with err's message (never its Go type).
func RecordError(span trace.Span, err error) {
	if err == nil || !span.IsRecording() {
		return
	}
	span.SetStatus(codes.Error, err.Error())
}
