package pluginsdk_test

import (
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/pluginsdk"
)

// newCodeHost is the provider's constructor, as a vendor package exports
// it (codehost.New): it takes the plugin's logger and returns the concrete
// provider.
func newCodeHost(log hclog.Logger) *codeHost {
	log.Debug("starting")
	return &codeHost{}
}

// A plugin binary's whole main function: Serve builds the logger (JSON on
// standard error, re-logged by the host under provider.<code>), hands it to
// the constructor and serves the provider until the host ends the plugin.
// Build it as adminkernel-provider-code_host.
func ExampleServe() {
	pluginsdk.Serve(newCodeHost)
}
