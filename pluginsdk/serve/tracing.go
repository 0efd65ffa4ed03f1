package serve

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
)

// tracingFlushTimeout bounds the export of the last spans when the plugin
// ends (go-plugin gives a plugin 2 s to exit after the host's shutdown).
const tracingFlushTimeout = 1500 * time.Millisecond

// tracingEnabled reports whether the host passed the OTLP exporter
// variables: it does exactly when its own tracing is on
// (Service:Telemetry:Tracing, docs/operators/operations.md).
func tracingEnabled() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// setupTracing installs the plugin's tracer provider from the standard
// OTEL_EXPORTER_OTLP_* and OTEL_SERVICE_NAME variables: spans exported over
// OTLP/HTTP (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf, the default) or
// OTLP/gRPC (grpc), only within a trace the host started (the plugin
// samples nothing on its own: parent-based, never as a root), with the W3C
// trace-context propagator. It returns the gRPC server options that take
// the host's trace context from each RPC's metadata, and the flush to run
// when the plugin ends; with the variables absent, nothing and a no-op.
func setupTracing(log hclog.Logger) ([]grpc.ServerOption, func()) {
	if !tracingEnabled() {
		return nil, func() {}
	}
	ctx := context.Background()
	var (
		exp sdktrace.SpanExporter
		err error
	)
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if strings.EqualFold(proto, "grpc") {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		log.Warn("tracing: no exporter, spans are not exported", "error", err.Error())
		return nil, func() {}
	}
	res, err := resource.Merge(resource.Default(), resource.Environment())
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing", "error", err.Error())
	}))
	opts := []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagation.TraceContext{}),
	))}
	return opts, func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("tracing: spans not all exported at exit", "error", err.Error())
		}
	}
}

// grpcServerWith is go-plugin's default gRPC server with extra options.
func grpcServerWith(extra []grpc.ServerOption) func([]grpc.ServerOption) *grpc.Server {
	if len(extra) == 0 {
		return plugin.DefaultGRPCServer
	}
	return func(opts []grpc.ServerOption) *grpc.Server {
		return plugin.DefaultGRPCServer(append(opts, extra...))
	}
}
