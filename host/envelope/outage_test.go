package envelope_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/outage"
)

var (
	errCacheDown = errors.New("cache: unavailable")
	errDBDown    = errors.New("database: unavailable")
)

// TestOutageAnswers: errors marked by a dependency's tracker are answered
// 503 with their code, args.retryAfterSeconds and Retry-After, counted as
// refused on that tracker, and never passed to the unhandled hook (no
// exception-log row) nor logged per request.
func TestOutageAnswers(t *testing.T) {
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logBuf, Level: hclog.Debug})
	redisT := outage.New(outage.Options{Name: "redis", Code: errcode.CacheUnavailable, Kind: errCacheDown, Log: log})
	dbT := outage.New(outage.Options{Name: "database", Code: errcode.DatabaseUnavailable, Kind: errDBDown, Log: log})
	var unhandled atomic.Int32
	httpLog := hclog.New(&hclog.LoggerOptions{Output: &logBuf, Level: hclog.Debug, Name: "http"})
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, httpLog, func(fiber.Ctx, error) { unhandled.Add(1) })})
	refused := errors.New("dial tcp 10.0.0.1:6379: connect: connection refused")
	app.Get("/cache", func(fiber.Ctx) error { return fmt.Errorf("rediscache: get: %w", redisT.Failed(refused)) })
	app.Get("/db", func(fiber.Ctx) error {
		return fmt.Errorf("session: read: %w", dbT.Failed(errors.New("pq: password=hunter2 driver: bad connection")))
	})
	// A business error whose cause is an outage is the outage.
	app.Get("/wrapped", func(fiber.Ctx) error {
		return errcode.New(errcode.TokenInvalid).Wrap(redisT.Failed(refused))
	})
	// Marked without a tracker's code: not an outage answer.
	app.Get("/untracked", func(fiber.Ctx) error { return (*outage.Tracker)(nil).Failed(refused) })

	tests := []struct {
		path      string
		status    int
		code      errcode.Code
		msgKey    string
		unhandled int32
	}{
		{"/cache", 503, errcode.CacheUnavailable, "error.system.cacheUnavailable", 0},
		{"/db", 503, errcode.DatabaseUnavailable, "error.system.databaseUnavailable", 0},
		{"/wrapped", 503, errcode.CacheUnavailable, "error.system.cacheUnavailable", 0},
		{"/cache", 503, errcode.CacheUnavailable, "error.system.cacheUnavailable", 0},
		{"/untracked", 500, errcode.SystemError, "error.system.internal", 1},
	}
	for _, tt := range tests {
		before := unhandled.Load()
		resp, err := app.Test(httptest.NewRequest("GET", tt.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		var b body
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatalf("%s: %q is not an envelope", tt.path, raw)
		}
		if resp.StatusCode != tt.status || b.Code != int(tt.code) || b.MsgKey != tt.msgKey {
			t.Errorf("%s: %d %d %q, want %d %d %q", tt.path, resp.StatusCode, b.Code, b.MsgKey, tt.status, tt.code, tt.msgKey)
		}
		if got := unhandled.Load() - before; got != tt.unhandled {
			t.Errorf("%s: unhandled hook called %d times, want %d", tt.path, got, tt.unhandled)
		}
		if tt.status == 503 {
			if got := resp.Header.Get("Retry-After"); got != "5" {
				t.Errorf("%s: Retry-After %q, want 5", tt.path, got)
			}
			if got, _ := b.Args["retryAfterSeconds"].(float64); got != outage.RetryAfterSeconds {
				t.Errorf("%s: args %v", tt.path, b.Args)
			}
			if got := envelope.CodeOf(fmt.Errorf("x: %w", redisT.Mark(refused))); got != errcode.CacheUnavailable {
				t.Errorf("CodeOf = %d", got)
			}
		}
		for _, leak := range []string{"hunter2", "10.0.0.1", "refused", "bad connection"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("%s: body leaks %q: %s", tt.path, leak, raw)
			}
		}
	}
	out := logBuf.String()
	if n := strings.Count(out, "redis unavailable"); n != 1 {
		t.Errorf("%d redis warnings, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, "database unavailable"); n != 1 {
		t.Errorf("%d database warnings, want 1:\n%s", n, out)
	}
	if strings.Count(out, "unhandled error") != 1 { // /untracked only
		t.Errorf("want exactly one per-request error line (the untracked one):\n%s", out)
	}
	redisT.Succeeded(redisT.Begin())
	dbT.Succeeded(dbT.Begin())
	if !strings.Contains(logBuf.String(), "redis is back after") || !strings.Contains(logBuf.String(), "; 3 requests were refused") {
		t.Errorf("redis back line missing or wrong count:\n%s", logBuf.String())
	}
	if !strings.Contains(logBuf.String(), "; 1 request was refused") {
		t.Errorf("database back line missing or wrong count:\n%s", logBuf.String())
	}
}
