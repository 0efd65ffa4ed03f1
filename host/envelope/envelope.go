// Package envelope writes the kernel's one JSON response shape
// {code, msgKey, data} and holds the central error handler that turns every
// error returned by a handler into that shape.
package envelope

import (
	"bytes"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"net/http"
	"runtime/debug"
	"syscall"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/outage"
)

// SuccessKey is the msgKey of every successful response.
const SuccessKey = "common.success"

// Envelope is the body of every JSON response.
type Envelope struct {
	Code   errcode.Code   `json:"code"`
	MsgKey string         `json:"msgKey"`
	Args   map[string]any `json:"args,omitempty"`
	// Message is a fallback text for non-browser callers: the msgKey on
	// failure (the frontend resolves the real text from msgKey).
	Message string `json:"message,omitempty"`
	Data    any    `json:"data"`
}

// PanicError is a recovered panic, kept with its stack for the exception log.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string {
	if err, ok := p.Value.(error); ok {
		return "panic: " + err.Error()
	}
	return "panic: " + toString(p.Value)
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case interface{ String() string }:
		return x.String()
	default:
		return "non-error panic value"
	}
}

// Recover turns a panic in a later handler into a *PanicError, which the
// error handler then treats as an unhandled error. The process survives.
func Recover() fiber.Handler {
	return func(c fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler { //nolint:errorlint // sentinel compared by identity, as net/http does
					panic(r)
				}
				err = &PanicError{Value: r, Stack: debug.Stack()}
			}
		}()
		return c.Next()
	}
}

// Unhandled is told about every error that is not a business error and not a
// framework routing/shape error (the exception log hooks in here). It must
// not panic; its own failures are its business.
type Unhandled func(c fiber.Ctx, err error)

// ErrorHandler returns the central fiber.ErrorHandler. Business errors
// become their envelope and status; framework errors (404, 405, 413, 400)
// become request codes; anything else is logged with the request's trace id,
// passed to onUnhandled and answered as HTTP 500 with code 50000 and no
// detail — except a database write refused for lack of storage
// (IsStorageFull), which is logged and recorded the same way but
// answered as HTTP 503 with code 50001 StorageFull: nothing was written and
// the client may retry once the operator has freed space.
//
// A dependency that could not be reached (an *outage.Error anywhere in the
// chain, marked by the cache or database layer; it wins over a business
// error wrapping it) is answered with HTTP 503, its code (50002
// CacheUnavailable, 50003 DatabaseUnavailable), args.retryAfterSeconds and
// a Retry-After header; it is counted on the dependency's tracker, which
// logs one WARN per outage, and is neither logged per request nor passed to
// onUnhandled (no exception-log row, no stack).
func ErrorHandler(catalog *errcode.Catalog, log hclog.Logger, onUnhandled Unhandled) fiber.ErrorHandler {
	return func(c fiber.Ctx, err error) error {
		var be *errcode.Error
		var fe *fiber.Error
		if oe, ok := outage.As(err); ok && oe.Code != 0 {
			oe.Refused()
			args := map[string]any{"retryAfterSeconds": outage.RetryAfterSeconds}
			return write(c, catalog, errcode.StatusOf(oe.Code), oe.Code, args)
		}
		switch {
		case errors.As(err, &be):
			return write(c, catalog, be.HTTPStatus(), be.Code, be.Args)
		case errors.As(err, &fe):
			code := requestCode(fe.Code)
			return write(c, catalog, errcode.StatusOf(code), code, nil)
		case IsStorageFull(err):
			log.Error("database storage is full: the write was refused", requestArgs(c, "error", err.Error())...)
			if onUnhandled != nil {
				onUnhandled(c, err)
			}
			return write(c, catalog, errcode.StatusOf(errcode.StorageFull), errcode.StorageFull, nil)
		default:
			log.Error("unhandled error", requestArgs(c, "error", err.Error())...)
			if onUnhandled != nil {
				onUnhandled(c, err)
			}
			return write(c, catalog, http.StatusInternalServerError, errcode.SystemError, nil)
		}
	}
}

// CodeOf is the envelope code the central error handler answers err with:
// a dependency outage's code (50002, 50003), a business error's own code, a
// framework error's request code, 50001 for a full database storage,
// otherwise 50000.
func CodeOf(err error) errcode.Code {
	var be *errcode.Error
	var fe *fiber.Error
	if oe, ok := outage.As(err); ok && oe.Code != 0 {
		return oe.Code
	}
	switch {
	case err == nil:
		return errcode.Success
	case errors.As(err, &be):
		return be.Code
	case errors.As(err, &fe):
		return requestCode(fe.Code)
	case IsStorageFull(err):
		return errcode.StorageFull
	default:
		return errcode.SystemError
	}
}

// IsStorageFull reports whether err (anywhere in its chain) says the
// database refused a write because its storage is full: an error with a
// StorageFull() bool method answering true (host/database marks the driver
// errors it recognises so, where it sees them) or one wrapping
// syscall.ENOSPC.
func IsStorageFull(err error) bool {
	var sf interface{ StorageFull() bool }
	if errors.As(err, &sf) && sf.StorageFull() {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// requestCode maps a framework status to the kernel's request code.
func requestCode(status int) errcode.Code {
	switch status {
	case http.StatusNotFound:
		return errcode.RouteNotFound
	case http.StatusMethodNotAllowed:
		return errcode.MethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return errcode.BodyTooLarge
	case http.StatusUnauthorized:
		return errcode.TokenInvalid
	case http.StatusForbidden:
		return errcode.NoPermission
	case http.StatusTooManyRequests:
		return errcode.TooManyRequests
	default:
		if status >= 500 {
			return errcode.SystemError
		}
		return errcode.RequestInvalid
	}
}

func write(c fiber.Ctx, catalog *errcode.Catalog, status int, code errcode.Code, args map[string]any) error {
	key := catalog.MsgKey(code)
	if status == http.StatusUnauthorized && len(c.GetRespHeader(fiber.HeaderWWWAuthenticate)) == 0 {
		// RFC 7235 §3.1: a 401 carries a challenge, also when a module
		// refuses a caller itself rather than through the access guards.
		c.Set(fiber.HeaderWWWAuthenticate, "Bearer")
	}
	if code == errcode.TooManyRequests || status == http.StatusServiceUnavailable {
		if s, ok := args["retryAfterSeconds"]; ok {
			c.Set(fiber.HeaderRetryAfter, fmt.Sprint(s))
		}
	}
	return c.Status(status).JSON(Envelope{Code: code, MsgKey: key, Args: args, Message: key})
}

// codePrefix starts every envelope: Code is its first field.
var codePrefix = []byte(`{"code":`)

// WrittenCode returns the envelope code of the answer c carries: 0 for a
// success envelope (OK), the failure's code the error handler wrote (a
// business failure is HTTP 200 with its code). ok is false when the
// answer is no envelope (a page, a file, a probe, a stream). It reads the
// first bytes of the body already written: nothing is decoded, copied or
// kept, and the answering path pays nothing for it.
func WrittenCode(c fiber.Ctx) (code int, ok bool) {
	resp := c.Response()
	if resp.IsBodyStream() {
		return 0, false
	}
	body := resp.Body()
	if !bytes.HasPrefix(body, codePrefix) {
		return 0, false
	}
	digits := 0
	for _, b := range body[len(codePrefix):] {
		if b < '0' || b > '9' {
			if b != ',' && b != '}' {
				return 0, false
			}
			break
		}
		if digits++; digits > 9 {
			return 0, false
		}
		code = code*10 + int(b-'0')
	}
	return code, digits > 0
}

// TraceID returns the request's trace identifier (the X-Request-ID set by the
// request-id middleware), copied so it may outlive the handler.
func TraceID(c fiber.Ctx) string {
	return string([]byte(c.GetRespHeader(fiber.HeaderXRequestID)))
}

// requestArgs are the key-value pairs of a request's log line: method,
// path, request_id and, when the request is traced, trace_id and span_id,
// then kv.
func requestArgs(c fiber.Ctx, kv ...any) []any {
	args := make([]any, 0, 10+len(kv))
	args = append(args, "method", c.Method(), "path", c.Path(), "request_id", TraceID(c))
	if sc := trace.SpanContextFromContext(c.Context()); sc.IsValid() {
		args = append(args, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	return append(args, kv...)
}
