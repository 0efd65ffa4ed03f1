package envelope_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
)

const OrderNotFound errcode.Code = 60001

func newApp(t *testing.T, unhandled *atomic.Int32) *fiber.App {
	t.Helper()
	catalog, err := errcode.NewCatalog(errcode.Enum{Name: "OrderError", Members: []errcode.Member{
		{Code: OrderNotFound, Name: "OrderNotFound", MsgKey: "error.order.notFound"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{
		BodyLimit: 16,
		ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), func(fiber.Ctx, error) {
			unhandled.Add(1)
		}),
	})
	app.Use(envelope.Recover())
	app.Get("/ok", func(c fiber.Ctx) error { return envelope.OK(c, map[string]int{"n": 1}) })
	app.Get("/business", func(fiber.Ctx) error { return errcode.New(errcode.AccountLocked).With("lockMinutes", 10) })
	app.Get("/consumer", func(fiber.Ctx) error { return errcode.New(OrderNotFound) })
	app.Get("/unregistered", func(fiber.Ctx) error { return errcode.New(61234) })
	app.Get("/token", func(fiber.Ctx) error { return errcode.New(errcode.TokenInvalid) })
	app.Get("/limited", func(fiber.Ctx) error {
		return errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", 42)
	})
	app.Get("/boom", func(fiber.Ctx) error { return errors.New("dial tcp 10.0.0.1:5432: password=hunter2") })
	app.Get("/panic", func(fiber.Ctx) error { panic("kaboom") })
	app.Get("/disk-full", func(fiber.Ctx) error {
		return fmt.Errorf("ent: creating sys_user: %w", storageFull{errors.New("pq: could not extend file base/16384/2619")})
	})
	app.Get("/not-full", func(fiber.Ctx) error {
		return fmt.Errorf("ent: creating sys_user: %w", notFull{errors.New("pq: could not extend file")})
	})
	app.Get("/enospc", func(fiber.Ctx) error { return fmt.Errorf("write /data/ak.db-wal: %w", syscall.ENOSPC) })
	app.Post("/body", func(c fiber.Ctx) error { return envelope.OK(c, len(c.Body())) })
	return app
}

// storageFull is how host/database marks a driver error that says the
// storage is full (database.StorageFullError); notFull says it is not.
type storageFull struct{ error }

func (storageFull) StorageFull() bool { return true }

type notFull struct{ error }

func (notFull) StorageFull() bool { return false }

type body struct {
	Code    int            `json:"code"`
	MsgKey  string         `json:"msgKey"`
	Args    map[string]any `json:"args"`
	Message string         `json:"message"`
	Data    any            `json:"data"`
}

func TestErrorHandler(t *testing.T) {
	var unhandled atomic.Int32
	app := newApp(t, &unhandled)
	tests := []struct {
		name, method, path string
		body               string
		status, code       int
		msgKey             string
		unhandled          int32
	}{
		{"success", "GET", "/ok", "", 200, 0, "common.success", 0},
		{"business error is 200 with its code", "GET", "/business", "", 200, 40004, "error.auth.accountLocked", 0},
		{"consumer code uses its msgKey", "GET", "/consumer", "", 200, 60001, "error.order.notFound", 0},
		{"unregistered code", "GET", "/unregistered", "", 200, 61234, "error.code.61234", 0},
		{"token invalid is 401", "GET", "/token", "", 401, 40006, "error.auth.tokenInvalid", 0},
		{"rate limited is 429", "GET", "/limited", "", 429, 40008, "error.auth.tooManyRequests", 0},
		{"unhandled error is 500 without detail", "GET", "/boom", "", 500, 50000, "error.system.internal", 1},
		{"panic is recovered as 500", "GET", "/panic", "", 500, 50000, "error.system.internal", 1},
		{"full database storage is 503 / 50001", "GET", "/disk-full", "", 503, 50001, "error.system.storageFull", 1},
		{"ENOSPC is 503 / 50001", "GET", "/enospc", "", 503, 50001, "error.system.storageFull", 1},
		{"StorageFull() false is 500 / 50000", "GET", "/not-full", "", 500, 50000, "error.system.internal", 1},
		{"unknown route is 404", "GET", "/nope", "", 404, 48003, "error.request.notFound", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := unhandled.Load()
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var b body
			if err := json.Unmarshal(raw, &b); err != nil {
				t.Fatalf("body %q is not an envelope: %v", raw, err)
			}
			if resp.StatusCode != tt.status || b.Code != tt.code || b.MsgKey != tt.msgKey {
				t.Fatalf("got %d %d %q, want %d %d %q (body %s)", resp.StatusCode, b.Code, b.MsgKey, tt.status, tt.code, tt.msgKey, raw)
			}
			if got := unhandled.Load() - before; got != tt.unhandled {
				t.Errorf("unhandled hook called %d times, want %d", got, tt.unhandled)
			}
			for _, leak := range []string{"hunter2", "10.0.0.1", "kaboom", "goroutine", "extend file", "ak.db", "space"} {
				if strings.Contains(string(raw), leak) {
					t.Errorf("body leaks %q: %s", leak, raw)
				}
			}
			if tt.code == 40008 && resp.Header.Get("Retry-After") != "42" {
				t.Errorf("Retry-After = %q, want 42", resp.Header.Get("Retry-After"))
			}
			if tt.code == 0 && b.Data == nil {
				t.Errorf("success without data: %s", raw)
			}
			if tt.code != 0 && b.Data != nil {
				t.Errorf("failure with data: %s", raw)
			}
		})
	}
}

func TestPanicErrorKeepsStack(t *testing.T) {
	var seen error
	catalog, _ := errcode.NewCatalog()
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), func(_ fiber.Ctx, err error) { seen = err })})
	app.Use(envelope.Recover())
	app.Get("/", func(fiber.Ctx) error { panic(errors.New("nil map")) })
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var pe *envelope.PanicError
	if !errors.As(seen, &pe) || len(pe.Stack) == 0 || !strings.Contains(pe.Error(), "nil map") {
		t.Fatalf("unhandled hook got %v, want a *PanicError with a stack", seen)
	}
}

// WrittenCode reads the envelope code back from the answer written: a
// success, a business failure (HTTP 200 with its code), a framework error,
// and no code for an answer that is no envelope.
func TestWrittenCode(t *testing.T) {
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), nil)})
	var got []string
	app.Use(func(c fiber.Ctx) error {
		err := c.Next()
		if err != nil {
			_ = app.Config().ErrorHandler(c, err)
		}
		code, ok := envelope.WrittenCode(c)
		got = append(got, fmt.Sprintf("%s %d %v", c.Path(), code, ok))
		return nil
	})
	app.Get("/ok", func(c fiber.Ctx) error { return envelope.OK(c, map[string]int{"code": 7}) })
	app.Get("/wrong", func(c fiber.Ctx) error { return errcode.New(errcode.PasswordWrong) })
	app.Get("/page", func(c fiber.Ctx) error { return c.SendString("<html>") })
	app.Get("/json", func(c fiber.Ctx) error { return c.JSON(map[string]string{"status": "Healthy"}) })
	for _, p := range []string{"/ok", "/wrong", "/page", "/json", "/missing"} {
		resp, err := app.Test(httptest.NewRequest("GET", p, nil))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	want := []string{"/ok 0 true", "/wrong 40001 true", "/page 0 false", "/json 0 false", "/missing 48003 true"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("WrittenCode = %q, want %q", got, want)
	}
}
