package vendorhttp

import (
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the SDK's spans (unchanged
// since TracingTransport lived in package pluginsdk).
const TracerName = "github.com/adminkernel/kernel/pluginsdk"

// TracingTransport wraps next (http.DefaultTransport when nil) so that each
// vendor call made with the context of a provider method (Exchange,
// AuthorizeURL, ...) is a client span "<METHOD> <host>", a child of the
// host's plugin RPC span, exported by the plugin when the host's tracing is
// on. The URL's path and query are not recorded (codes and tokens travel
// there), and no trace context is sent to the vendor: it is a third party.
// The vendor HTTP client of the bundled plugins (NewClient) uses it; a
// plugin with its own client wraps that client's transport:
//
//	client := &http.Client{Transport: vendorhttp.TracingTransport(nil)}
//
// The spans are exported by the tracer provider serve.Serve installs from
// the host's OTLP variables; without tracing (the variables absent) it
// costs one context lookup.
func TracingTransport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &tracingTransport{next: next}
}

type tracingTransport struct{ next http.RoundTripper }

func (t *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanFromContext(ctx).IsRecording() {
		return t.next.RoundTrip(req)
	}
	method := req.Method
	_, span := otel.Tracer(TracerName).Start(ctx, method+" "+req.URL.Hostname(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("server.address", req.URL.Hostname())))
	defer span.End()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, resp.Status)
	}
	return resp, nil
}
