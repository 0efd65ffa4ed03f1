// Package exceptionlog writes the exception log (sys_exception_log, wire
// contract §4.9): one row per unhandled error or panic of an HTTP request or
// of a background goroutine. Business errors (*errcode.Error) never reach it:
// the central error handler only passes it the errors it answers with 500.
//
// A row holds the request method, path, trace id, operator, client, the
// error's type, its message (at most MessageMaxChars characters) and a stack
// (at most StackMaxChars). Request and response bodies are never stored.
// Writing is synchronous with a short timeout and never changes the answer
// of the failed request: a write failure is logged and swallowed.
package exceptionlog

import (
	"context"
	"errors"
	"fmt"
	"github.com/adminkernel/kernel/host/logging"
	"net"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/request"
)

// Limits of a stored row (spec, Limits; ent/schema/log.go).
const (
	MessageMaxChars = 2000
	StackMaxChars   = 8000

	methodMaxChars    = 16
	pathMaxChars      = 1024
	traceIDMaxChars   = 64
	requestIDMaxChars = 128 // host.MaxRequestIDLen
	typeMaxChars      = 256
	ipMaxChars        = 64
	userAgentMaxChars = 512
)

// BackgroundMethod is the http_method of a row recorded for a background
// goroutine; its path is the goroutine's name.
const BackgroundMethod = "GO"

// DefaultWriteTimeout bounds one exception-log insert.
const DefaultWriteTimeout = 3 * time.Second

// Recorder writes exception-log rows. A nil *Recorder records nothing (its
// methods only log), so optional wiring stays simple.
type Recorder struct {
	client  *ent.Client
	log     hclog.Logger
	trusted []*net.IPNet
	timeout time.Duration
}

// New returns a recorder writing through client and reporting its own
// failures to log.
func New(client *ent.Client, log hclog.Logger) *Recorder {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Recorder{client: client, log: log, timeout: DefaultWriteTimeout}
}

// WithTrustedProxies sets the proxies whose X-Forwarded-For is believed when
// the client IP is taken (Service:Http:TrustedProxies, parsed with
// request.ParseTrusted). It returns r.
func (r *Recorder) WithTrustedProxies(trusted []*net.IPNet) *Recorder {
	r.trusted = trusted
	return r
}

// WithWriteTimeout changes the bound of one insert (default 3 s). It
// returns r.
func (r *Recorder) WithWriteTimeout(d time.Duration) *Recorder {
	if d > 0 {
		r.timeout = d
	}
	return r
}

// Entry is one exception-log row before it is written.
type Entry struct {
	Method, Path, TraceID string
	// RequestID is the request's X-Request-ID (the caller's when valid).
	RequestID            string
	Type, Message, Stack string
	OperatorID           *int64
	IP, UserAgent        string
	Time                 time.Time
}

// Record writes the row of an unhandled error of the request c. It has the
// signature of envelope.Unhandled: pass it to envelope.ErrorHandler. Every
// value taken from c is copied first; the write runs synchronously (the
// request is already failing) with a short timeout on a context that
// survives the request's cancellation. It never panics and never returns
// an error: a failed write is logged together with the original error.
func (r *Recorder) Record(c fiber.Ctx, err error) {
	if err == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil && r != nil {
			r.log.Error("exception log: recording panicked", "panic", fmt.Sprint(p), "original_error", err)
		}
	}()
	e := Describe(err)
	e.Method = strings.Clone(c.Method())
	e.Path = strings.Clone(c.Path())
	// The W3C trace id when the request is traced, else the request id
	// (wire contract: "W3C trace id, or the request trace identifier").
	e.RequestID = envelope.TraceID(c)
	e.TraceID = logging.TraceID(c.Context())
	if e.TraceID == "" {
		e.TraceID = e.RequestID
	}
	e.UserAgent = strings.Clone(c.Get(fiber.HeaderUserAgent))
	if r != nil {
		e.IP = request.ClientIP(c, r.trusted)
	}
	if p, ok := authn.From(c); ok && p.UserID > 0 {
		id := p.UserID
		e.OperatorID = &id
	}
	r.Write(context.WithoutCancel(c.Context()), e, err)
}

// RecordBackground writes the row of an error or panic of a background
// goroutine called name (http_method "GO", path name). It is safe on a nil
// recorder and never panics.
func (r *Recorder) RecordBackground(ctx context.Context, name string, err error) {
	if err == nil || r == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("exception log: recording panicked", "panic", fmt.Sprint(p), "original_error", err)
		}
	}()
	e := Describe(err)
	e.Method = BackgroundMethod
	e.Path = name
	r.Write(context.WithoutCancel(ctx), e, err)
}

// Write inserts a prepared entry, cutting every value to its column. A
// failure is logged with the original error and swallowed. original may be
// nil.
func (r *Recorder) Write(ctx context.Context, e Entry, original error) {
	if r == nil || r.client == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	q := r.client.SysExceptionLog.Create().
		SetCreateTime(e.Time).
		SetHTTPMethod(textclip.ValidRunes(e.Method, methodMaxChars)).
		SetPath(textclip.ValidRunes(e.Path, pathMaxChars)).
		SetExceptionType(textclip.ValidRunes(e.Type, typeMaxChars)).
		SetNillableOperatorID(e.OperatorID).
		SetNillableCreateUserID(e.OperatorID)
	if e.TraceID != "" {
		q.SetTraceID(textclip.ValidRunes(e.TraceID, traceIDMaxChars))
	}
	if e.RequestID != "" {
		q.SetRequestID(textclip.ValidRunes(e.RequestID, requestIDMaxChars))
	}
	if e.Message != "" {
		q.SetMessage(textclip.ValidRunes(e.Message, MessageMaxChars))
	}
	if e.Stack != "" {
		q.SetStackTrace(textclip.ValidRunes(e.Stack, StackMaxChars))
	}
	if e.IP != "" {
		q.SetIP(textclip.ValidRunes(e.IP, ipMaxChars))
	}
	if e.UserAgent != "" {
		q.SetUserAgent(textclip.ValidRunes(e.UserAgent, userAgentMaxChars))
	}
	if err := q.Exec(ctx); err != nil {
		r.log.Error("writing the exception log failed", "error", err.Error(),
			"method", e.Method, "path", e.Path, "request_id", e.RequestID, "trace_id", e.TraceID,
			"exception_type", e.Type, "original_error", original)
	}
}

// Describe returns the type, message and stack of err, already cut to the
// column limits. A *envelope.PanicError anywhere in the chain gives type
// "panic(<value type>)" and its recorded stack; any other error gives its Go
// type (see TypeName) and the stack of the caller.
func Describe(err error) Entry {
	var e Entry
	var pe *envelope.PanicError
	if errors.As(err, &pe) {
		e.Type = PanicType(pe.Value)
		e.Message = textclip.ValidRunes(pe.Error(), MessageMaxChars)
		e.Stack = textclip.ValidRunes(string(pe.Stack), StackMaxChars)
		return e
	}
	e.Type = TypeName(err)
	e.Message = textclip.ValidRunes(err.Error(), MessageMaxChars)
	e.Stack = textclip.ValidRunes(string(debug.Stack()), StackMaxChars)
	return e
}

// PanicType names a recovered panic value: "panic(string)",
// "panic(runtime.boundsError)", "panic(nil)".
func PanicType(v any) string {
	if v == nil {
		return "panic(nil)"
	}
	return "panic(" + typeString(reflect.TypeOf(v)) + ")"
}

// TypeName is the Go type of err with its full import path (the contract's
// "full type name"), e.g. "*github.com/lib/pq.Error". Generic wrappers that
// only add context (fmt.Errorf's %w, errors.Join) are looked through to the
// first error that says more.
func TypeName(err error) string {
	if err == nil {
		return ""
	}
	var pe *envelope.PanicError
	if errors.As(err, &pe) {
		return PanicType(pe.Value)
	}
	for range 16 {
		if !isWrapper(err) {
			break
		}
		var next error
		// One wrapper level at a time, by design: errors.As would walk past
		// the first error that says more.
		switch u := err.(type) { //nolint:errorlint // deliberately unwraps a single level; see above
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			break
		}
		err = next
	}
	return typeString(reflect.TypeOf(err))
}

// isWrapper reports the standard library's context-only wrapper types.
func isWrapper(err error) bool {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() + "." + t.Name() {
	case "fmt.wrapError", "fmt.wrapErrors", "errors.joinError":
		return true
	}
	return false
}

func typeString(t reflect.Type) string {
	prefix := ""
	for t.Kind() == reflect.Pointer {
		prefix += "*"
		t = t.Elem()
	}
	if t.Name() == "" || t.PkgPath() == "" {
		return prefix + t.String()
	}
	return prefix + t.PkgPath() + "." + t.Name()
}
