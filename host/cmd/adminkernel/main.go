// Command adminkernel runs the Admin Kernel with its built-in modules.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/cli"
	"github.com/adminkernel/kernel/host/tracing"
)

// version is set at build time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// go-redis logs through one process-wide logger: without a line per
	// failed dial (a Redis outage is logged once by the kernel).
	redis.SetLogger(rediscache.ProcessLogger())
	// OpenTelemetry's error handler and gRPC's logger, the same way (JSON
	// stays JSON).
	tracing.InstallProcessLoggers()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.New(host.Options{Version: version}).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "adminkernel:", err)
		os.Exit(1)
	}
}
