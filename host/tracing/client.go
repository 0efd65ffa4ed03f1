package tracing

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// Transport wraps next (http.DefaultTransport when nil) so that every call
// made within a traced request is a client span "<METHOD> <host>" (the
// outbound OIDC calls: discovery, token, JWKS, user info). The URL's path
// and query are not recorded (codes and tokens travel there), and no trace
// context is sent: the provider is a third party. With a nil t it returns
// next.
func (t *Tracer) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if t == nil {
		return next
	}
	return &transport{t: t, next: next}
}

// TransportWrapper is Transport as a function, nil when t is nil.
func (t *Tracer) TransportWrapper() func(http.RoundTripper) http.RoundTripper {
	if t == nil {
		return nil
	}
	return t.Transport
}

type transport struct {
	t    *Tracer
	next http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanFromContext(ctx).IsRecording() {
		return tr.next.RoundTrip(req)
	}
	method := methodName(req.Method)
	_, span := tr.t.tracer.Start(ctx, method+" "+req.URL.Hostname(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("server.address", req.URL.Hostname())))
	defer span.End()
	resp, err := tr.next.RoundTrip(req)
	if err != nil {
		RecordError(span, err)
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		RecordError(span, errStatus(resp.Status))
	}
	return resp, nil
}

type errStatus string

func (e errStatus) Error() string { return "HTTP " + string(e) }

// GRPCDialOptions are the dial options of the plugin clients: a client span
// per RPC (otelgrpc), its trace context sent in the gRPC metadata so that
// the plugin's spans join the request's trace. Nil when t is nil.
func (t *Tracer) GRPCDialOptions() []grpc.DialOption {
	if t == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		// Only RPCs of a traced request: the supervisor's own calls
		// (Describe and Configure at launch) start no trace.
		otelgrpc.WithTracerProvider(childOnly{t.provider}), otelgrpc.WithPropagators(t.prop),
	))}
}

// RedisHook returns the go-redis hook making every command run within a
// traced request a client span named by the command ("get", "publish",
// "evalsha"; never its keys or arguments). Nil when t is nil.
func (t *Tracer) RedisHook() redis.Hook {
	if t == nil {
		return nil
	}
	return redisHook{t}
}

type redisHook struct{ t *Tracer }

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return next(ctx, cmd)
		}
		ctx, span := h.t.tracer.Start(ctx, "redis "+strings.ToLower(cmd.Name()), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system.name", "redis"), attribute.String("db.operation.name", strings.ToLower(cmd.Name()))))
		defer span.End()
		err := next(ctx, cmd)
		if err != nil && !errors.Is(err, redis.Nil) {
			RecordError(span, err)
		}
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !trace.SpanFromContext(ctx).IsRecording() {
			return next(ctx, cmds)
		}
		ctx, span := h.t.tracer.Start(ctx, "redis pipeline", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system.name", "redis"), attribute.Int("db.operation.batch.size", len(cmds))))
		defer span.End()
		err := next(ctx, cmds)
		if err != nil && !errors.Is(err, redis.Nil) {
			RecordError(span, err)
		}
		return err
	}
}

// childOnly is a tracer provider whose spans exist only under a recording
// parent: a call outside a traced request starts no trace.
type childOnly struct{ trace.TracerProvider }

func (p childOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childOnlyTracer{p.TracerProvider.Tracer(name, opts...)}
}

type childOnlyTracer struct{ trace.Tracer }

func (t childOnlyTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.Tracer.Start(ctx, name, opts...)
}
