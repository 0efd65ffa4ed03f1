package bench_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

// pingEnvelope is the body of GET /api/v1/ping.
func pingEnvelope() envelope.Envelope {
	return envelope.Envelope{Code: errcode.Success, MsgKey: envelope.SuccessKey,
		Data: auth.Ping{Pong: true, Account: "superAdmin", At: request.OffsetStamp{Time: time.Now()}}}
}

// BenchmarkEnvelope is the envelope encoding of the ping answer: Marshal
// is the JSON encoding alone (encoding/json, what Fiber's default encoder
// calls); OK is envelope.OK inside a Fiber handler, dispatched the way the
// server does (routing, Content-Type, body copy), without middleware.
func BenchmarkEnvelope(b *testing.B) {
	b.Run("Marshal", func(b *testing.B) {
		env := pingEnvelope()
		b.ReportAllocs()
		report := cpuPerOp(b)
		for b.Loop() {
			if _, err := json.Marshal(env); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
	b.Run("OK", func(b *testing.B) {
		app := fiber.New()
		at := request.OffsetStamp{Time: time.Now()}
		app.Get("/ping", func(c fiber.Ctx) error {
			return envelope.OK(c, auth.Ping{Pong: true, Account: "superAdmin", At: at})
		})
		h := app.Handler()
		fctx := newOf(h)
		fctx.Request.Header.SetMethod(http.MethodGet)
		fctx.Request.SetRequestURI("/ping")
		h(fctx)
		if got := fctx.Response.StatusCode(); got != http.StatusOK {
			b.Fatalf("HTTP %d: %s", got, fctx.Response.Body())
		}
		b.ReportAllocs()
		report := cpuPerOp(b)
		for b.Loop() {
			fctx.Response.Reset()
			h(fctx)
		}
		report()
	})
}
