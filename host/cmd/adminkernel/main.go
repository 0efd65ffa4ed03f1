// Command adminkernel runs the Admin Kernel with its built-in modules.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
)

// version is set at build time: -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.New(host.Options{Version: version}).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "adminkernel:", err)
		os.Exit(1)
	}
}
