// Package bare is the baseline server of the HTTP comparison: a Fiber v3
// app with the kernel's Fiber settings where they matter (body limit, read
// and idle timeouts, the default JSON encoder, no proxy trust) and no
// middleware, answering GET /ping with a JSON object of the same shape and
// size as the kernel's GET /api/v1/ping envelope.
package bare

import (
	"time"

	"github.com/gofiber/fiber/v3"
)

// Envelope mirrors the kernel's envelope.Envelope carrying an auth.Ping.
type Envelope struct {
	Code   int    `json:"code"`
	MsgKey string `json:"msgKey"`
	Data   Ping   `json:"data"`
}

// Ping mirrors auth.Ping.
type Ping struct {
	Pong    bool      `json:"pong"`
	Account string    `json:"account"`
	At      time.Time `json:"at"`
}

// NewApp builds the server. The settings are those of host.buildApp with
// the defaults of config.Defaults.
func NewApp() *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:     "bare",
		BodyLimit:   4 << 20,
		ReadTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second,
	})
	app.Get("/ping", func(c fiber.Ctx) error {
		return c.JSON(Envelope{MsgKey: "common.success", Data: Ping{Pong: true, Account: "superAdmin", At: time.Now()}})
	})
	return app
}
