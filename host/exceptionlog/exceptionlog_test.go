package exceptionlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/requestid"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/exceptionlog"
)

type harness struct {
	db  *database.DB
	app *fiber.App
	log *syncbuf.Buffer
	rec *exceptionlog.Recorder
}

type customError struct{ detail string }

func (e *customError) Error() string { return "custom: " + e.detail }

// deep panics after n nested calls, so the stack is long.
func deep(n int, msg string) {
	if n == 0 {
		panic(msg)
	}
	deep(n-1, msg)
}

// newHarness wires the recorder into the central error handler exactly as
// the host does: requestid, envelope.Recover, ErrorHandler(..., rec.Record).
func newHarness(t *testing.T) *harness {
	t.Helper()
	db := dbtest.OpenMigrated(t, config.DBSqlite)
	buf := &syncbuf.Buffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug})
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rec := exceptionlog.New(db.Client, log)
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, log, rec.Record)})
	app.Use(requestid.New(), envelope.Recover())
	app.Post("/panic", func(c fiber.Ctx) error {
		deep(300, strings.Repeat("m", 5000))
		return nil
	})
	app.Get("/business", func(fiber.Ctx) error { return errcode.New(errcode.PasswordWrong) })
	app.Get("/bad-request", func(fiber.Ctx) error { return fiber.ErrBadRequest })
	app.Get("/error", func(fiber.Ctx) error {
		return fmt.Errorf("loading: %w", &customError{detail: "db down"})
	})
	app.Get("/ok", func(c fiber.Ctx) error { return envelope.OK(c, true) })
	return &harness{db: db, app: app, log: buf, rec: rec}
}

type reply struct {
	status int
	header string
	env    envelope.Envelope
	raw    string
}

func (h *harness) do(t *testing.T, method, path, body string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "exceptionlog-test/1.0")
	resp, err := h.app.Test(req, fiber.TestConfig{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header.Get(fiber.HeaderXRequestID), raw: string(raw)}
	if err := json.Unmarshal(raw, &r.env); err != nil {
		t.Fatalf("%s %s: body %q is not an envelope", method, path, raw)
	}
	return r
}

func (h *harness) rows(t *testing.T) []*ent.SysExceptionLog {
	t.Helper()
	rows, err := h.db.Client.SysExceptionLog.Query().All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestPanicGives500AndOneTruncatedRowWithoutBody(t *testing.T) {
	h := newHarness(t)
	const secret = "BODY-SECRET-4711"
	r := h.do(t, "POST", "/panic?x=1", `{"note":"`+secret+`"}`)
	if r.status != 500 || r.env.Code != errcode.SystemError {
		t.Fatalf("panic = HTTP %d code %d, want 500/50000 (%s)", r.status, r.env.Code, r.raw)
	}
	if strings.Contains(r.raw, "mmmm") || strings.Contains(r.raw, "goroutine") {
		t.Fatalf("the 500 answer leaks detail: %s", r.raw)
	}
	rows := h.rows(t)
	if len(rows) != 1 {
		t.Fatalf("%d exception rows, want exactly 1", len(rows))
	}
	row := rows[0]
	if row.HTTPMethod != "POST" || row.Path != "/panic" {
		t.Errorf("method/path = %q %q", row.HTTPMethod, row.Path)
	}
	if row.ExceptionType != "panic(string)" {
		t.Errorf("exception type = %q, want panic(string)", row.ExceptionType)
	}
	if row.TraceID == nil || *row.TraceID == "" || *row.TraceID != r.header {
		t.Errorf("trace id = %v, want the X-Request-ID %q", row.TraceID, r.header)
	}
	if row.Message == nil || utf8.RuneCountInString(*row.Message) != exceptionlog.MessageMaxChars {
		t.Errorf("message has %d characters, want exactly %d (truncated)", len(deref(row.Message)), exceptionlog.MessageMaxChars)
	}
	if row.StackTrace == nil || utf8.RuneCountInString(*row.StackTrace) != exceptionlog.StackMaxChars {
		t.Errorf("stack has %d characters, want exactly %d (truncated)", len(deref(row.StackTrace)), exceptionlog.StackMaxChars)
	}
	if !strings.Contains(deref(row.StackTrace), "exceptionlog_test.deep") {
		t.Errorf("stack does not show the panicking function:\n%.500s", deref(row.StackTrace))
	}
	if row.UserAgent == nil || *row.UserAgent != "exceptionlog-test/1.0" {
		t.Errorf("user agent = %v", row.UserAgent)
	}
	if row.OperatorID != nil {
		t.Errorf("anonymous request has operator %d", *row.OperatorID)
	}
	for name, v := range map[string]string{"message": deref(row.Message), "stack": deref(row.StackTrace), "path": row.Path} {
		if strings.Contains(v, secret) {
			t.Errorf("the request body is stored in %s", name)
		}
	}
}

func TestBusinessAndFrameworkErrorsAreNotRecorded(t *testing.T) {
	h := newHarness(t)
	h.do(t, "GET", "/business", "").expect(t, 200, int(errcode.PasswordWrong))
	h.do(t, "GET", "/bad-request", "").expect(t, 400, int(errcode.RequestInvalid))
	h.do(t, "GET", "/nowhere", "").expect(t, 404, int(errcode.RouteNotFound))
	h.do(t, "GET", "/ok", "").expect(t, 200, 0)
	if rows := h.rows(t); len(rows) != 0 {
		t.Fatalf("%d exception rows for business/framework errors, want 0: %+v", len(rows), rows[0])
	}
}

func TestUnhandledErrorRecordsItsType(t *testing.T) {
	h := newHarness(t)
	h.do(t, "GET", "/error", "").expect(t, 500, int(errcode.SystemError))
	rows := h.rows(t)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	want := "*github.com/adminkernel/kernel/host/exceptionlog_test.customError"
	if rows[0].ExceptionType != want {
		t.Errorf("type = %q, want %q (the wrapper looked through)", rows[0].ExceptionType, want)
	}
	if deref(rows[0].Message) != "loading: custom: db down" {
		t.Errorf("message = %q", deref(rows[0].Message))
	}
	if deref(rows[0].StackTrace) == "" {
		t.Error("no stack captured for a plain error")
	}
}

func TestBrokenTableKeepsThe500AndLogsTheFailure(t *testing.T) {
	h := newHarness(t)
	if _, err := h.db.SQL.Exec("DROP TABLE sys_exception_log"); err != nil {
		t.Fatal(err)
	}
	r := h.do(t, "POST", "/panic", `{}`)
	r.expect(t, 500, int(errcode.SystemError))
	out := h.log.String()
	if !strings.Contains(out, "writing the exception log failed") {
		t.Fatalf("the write failure was not logged:\n%s", out)
	}
	if !strings.Contains(out, "original_error") {
		t.Errorf("the failure log does not carry the original error:\n%s", out)
	}
	// The server still answers.
	h.do(t, "GET", "/ok", "").expect(t, 200, 0)
}

func TestBackgroundPanicIsRecoveredAndRecorded(t *testing.T) {
	h := newHarness(t)
	log := hclog.New(&hclog.LoggerOptions{Output: h.log})
	done := make(chan struct{})
	exceptionlog.Go(log, h.rec, "test.worker", func() {
		defer close(done)
		panic(errors.New("worker exploded"))
	})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the goroutine did not run")
	}
	deadline := time.Now().Add(10 * time.Second)
	var rows []*ent.SysExceptionLog
	for time.Now().Before(deadline) {
		if rows = h.rows(t); len(rows) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.HTTPMethod != exceptionlog.BackgroundMethod || r.Path != "test.worker" {
		t.Errorf("method/path = %q %q", r.HTTPMethod, r.Path)
	}
	if r.ExceptionType != "panic(*errors.errorString)" {
		t.Errorf("type = %q", r.ExceptionType)
	}
	if !strings.Contains(deref(r.Message), "worker exploded") {
		t.Errorf("message = %q", deref(r.Message))
	}
	if !strings.Contains(h.log.String(), "background goroutine panicked") {
		t.Error("the panic was not logged")
	}

	// Protect reports the panic and lets the caller carry on.
	if !exceptionlog.Protect(log, nil, "loop", func() { panic("again") }) {
		t.Error("Protect did not report the panic")
	}
	if exceptionlog.Protect(log, nil, "loop", func() {}) {
		t.Error("Protect reported a panic that did not happen")
	}
}

func TestNilRecorderIsSafe(t *testing.T) {
	var rec *exceptionlog.Recorder
	rec.RecordBackground(context.Background(), "x", errors.New("e"))
	app := fiber.New()
	app.Get("/", func(c fiber.Ctx) error {
		rec.Record(c, errors.New("e"))
		return c.SendString("ok")
	})
	resp, err := app.Test(httptest.NewRequest("GET", "/", nil))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("nil recorder: %v %v", resp, err)
	}
}

func TestTypeName(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("x"), "*errors.errorString"},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", &customError{})), "*github.com/adminkernel/kernel/host/exceptionlog_test.customError"},
		{errors.Join(context.DeadlineExceeded, errors.New("y")), "context.deadlineExceededError"},
		{fmt.Errorf("no wrap %s", "here"), "*errors.errorString"},
		{&envelope.PanicError{Value: 42}, "panic(int)"},
		{fmt.Errorf("wrapped: %w", &envelope.PanicError{Value: "s"}), "panic(string)"},
	}
	for _, tt := range tests {
		if got := exceptionlog.TypeName(tt.err); got != tt.want {
			t.Errorf("TypeName(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func (r reply) expect(t *testing.T, status, code int) reply {
	t.Helper()
	if r.status != status || int(r.env.Code) != code {
		t.Fatalf("HTTP %d code %d, want HTTP %d code %d (%s)", r.status, r.env.Code, status, code, r.raw)
	}
	return r
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
