package oplog

import (
	"github.com/adminkernel/kernel/host/logging"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// Logged reports whether calls of r are written to the operation log: every
// write (any method but GET, HEAD and OPTIONS) on a non-anonymous route, and
// every route marked OpLog.
func Logged(r route.Route) bool {
	if r.OpLog {
		return true
	}
	if r.Access == route.Anonymous {
		return false
	}
	switch strings.ToUpper(r.Method) {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return false
	}
	return true
}

// loggedKey marks a request already handled by an operation-log middleware,
// so that a route wrapped twice is logged once.
type loggedKey struct{}

// Middleware is the per-route factory for route.Table.Around: nil for routes
// that are not logged (see Logged), otherwise a handler that records the
// call once the handler has returned. It runs after the access guard, so the
// operator is known; refused calls (401/403) are not operations and are not
// logged.
//
// The row holds the route's title key (titles.go; or its title, or "METHOD
// template", when the language packs have no text for the key), the method, the
// path as requested, the redacted and cut input (BuildParams), the result
// code (0 on success, the business code, or the code the central error
// handler answers with), the exception message (the msgKey of a business
// error; only the Go type of any other error, never its text), the elapsed
// milliseconds, the operator, the client IP and User-Agent. A panic of the
// handler is logged as a failure and passed on as *envelope.PanicError,
// which the central error handler answers as 500 and writes to the
// exception log.
func (w *Writer) Middleware(r route.Route) fiber.Handler {
	if !Logged(r) {
		return nil
	}
	title := storedTitle(r)
	method := strings.ToUpper(r.Method)
	stream := r.StreamBody
	return func(c fiber.Ctx) (err error) {
		if c.Locals(loggedKey{}) != nil {
			return c.Next()
		}
		c.Locals(loggedKey{}, true)
		row := Row{
			Title:     title,
			Method:    method,
			Path:      strings.Clone(c.Path()),
			IP:        request.ClientIP(c, w.opts.Trusted),
			UserAgent: strings.Clone(c.Get(fiber.HeaderUserAgent)),
			RequestID: envelope.TraceID(c),
			TraceID:   logging.TraceID(c.Context()),
		}
		if params := w.params(c, stream); params != "" {
			row.ParamJSON = &params
		}
		if p, ok := authn.From(c); ok && p.UserID > 0 {
			id := p.UserID
			row.OperatorID = &id
		}
		ctx := c.Context()
		start := time.Now()
		row.Time = start
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { //nolint:errorlint // sentinel compared by identity, as net/http does
					panic(v)
				}
				err = &envelope.PanicError{Value: v, Stack: debug.Stack()}
			}
			row.ElapsedMs = time.Since(start).Milliseconds()
			row.ResultCode, row.Success, row.ExceptionMessage = w.outcome(err)
			w.Add(ctx, row)
		}()
		return c.Next()
	}
}

// params builds the stored input of the request (query and body), copied.
// The body of a streaming route (a file upload) is not read: it is the
// handler's, and may be gigabytes.
func (w *Writer) params(c fiber.Ctx, stream bool) string {
	var query []Param
	for k, v := range c.Request().URI().QueryArgs().All() {
		query = append(query, Param{Key: string(k), Value: string(v)})
	}
	var body []byte
	if !stream {
		body = c.Body()
	}
	return BuildParams(query, string(c.Request().Header.ContentType()), body, w.opts.Config.ParamMaxChars)
}

// outcome derives the result code, success and exception message from the
// handler's error, the way the central error handler answers it.
func (w *Writer) outcome(err error) (int, bool, *string) {
	if err == nil {
		return int(errcode.Success), true, nil
	}
	if be, ok := errcode.As(err); ok {
		msg := "error code " + strconv.Itoa(int(be.Code))
		if w.opts.Catalog != nil {
			msg = w.opts.Catalog.MsgKey(be.Code)
		}
		return int(be.Code), false, &msg
	}
	msg := exceptionlog.TypeName(err)
	return int(envelope.CodeOf(err)), false, &msg
}
