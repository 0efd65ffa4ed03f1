package pluginsdk_test

import (
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/pluginsdk"
)

// A plugin binary's whole main function: Serve builds the logger (JSON on
// standard error, re-logged by the host under provider.<code>), hands it to
// the factory and serves the provider until the host ends the plugin.
// Build it as adminkernel-provider-code_host.
func ExampleServe() {
	pluginsdk.Serve(func(log hclog.Logger) pluginsdk.Provider {
		log.Debug("starting")
		return &codeHost{}
	})
}
