package tracing

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// MaxStatementChars bounds the statement text put on a SQL span.
const MaxStatementChars = 2048

// SQLSpan records a statement that ran within a traced request as a child
// span of the request's current span, after the fact (from start, lasting
// elapsed). query is the parametrised statement text ent sends: parameter
// values are never on the span. Statements outside a sampled span
// (background work) are not traced.
func (t *Tracer) SQLSpan(ctx context.Context, system, query string, start time.Time, elapsed time.Duration, err error) {
	if t == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	op := Operation(query)
	if len(query) > MaxStatementChars {
		query = query[:MaxStatementChars] + "…"
	}
	_, span := t.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("db.system.name", system), attribute.String("db.operation.name", op),
			attribute.String("db.query.text", query)))
	RecordError(span, err)
	span.End(trace.WithTimestamp(start.Add(elapsed)))
}

// Operation is a statement's kind from its first keyword: SELECT, INSERT,
// UPDATE, DELETE, BEGIN, COMMIT, ROLLBACK, else OTHER (a fixed set: it is a
// metric label and a span name, never statement text).
func Operation(query string) string {
	q := strings.TrimLeft(query, " \t\r\n(")
	end := strings.IndexAny(q, " \t\r\n(")
	if end < 0 {
		end = len(q)
	}
	switch w := q[:end]; {
	case strings.EqualFold(w, "SELECT"), strings.EqualFold(w, "WITH"):
		return "SELECT"
	case strings.EqualFold(w, "INSERT"):
		return "INSERT"
	case strings.EqualFold(w, "UPDATE"):
		return "UPDATE"
	case strings.EqualFold(w, "DELETE"):
		return "DELETE"
	case strings.EqualFold(w, "BEGIN"), strings.EqualFold(w, "START"):
		return "BEGIN"
	case strings.EqualFold(w, "COMMIT"):
		return "COMMIT"
	case strings.EqualFold(w, "ROLLBACK"):
		return "ROLLBACK"
	}
	return "OTHER"
}
