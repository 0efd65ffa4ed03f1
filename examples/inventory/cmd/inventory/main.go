// Command inventory is the kernel plus the example inventory module.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/adminkernel/kernel/examples/inventory"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.New(host.Options{
		Version: "example",
		Modules: []host.Module{inventory.Module()},
	}).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "inventory:", err)
		os.Exit(1)
	}
}
