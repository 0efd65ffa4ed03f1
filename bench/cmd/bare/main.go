// Command bare is the baseline of the HTTP comparison: a Fiber v3 server
// with the kernel's Fiber settings and no middleware, answering GET /ping
// with a JSON object shaped like the kernel's ping envelope (see package
// bench/internal/bare).
//
//	go run ./bench/cmd/bare -addr 127.0.0.1:5199
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/bench/internal/bare"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5199", "listen address")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	app := bare.NewApp()
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	fmt.Fprintf(os.Stderr, "bare: listening on http://%s\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
		return err
	}
	return <-errc
}
