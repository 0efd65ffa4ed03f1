package serve_test

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

// codeHost stands for a vendor's provider (plugins/codehost).
type codeHost struct{}

func (*codeHost) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{Code: "code_host", DisplayName: "CodeHost", ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}

func (*codeHost) Configure(context.Context, pluginsdk.Settings) error { return nil }

func (*codeHost) AuthorizeURL(context.Context, pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	return pluginsdk.AuthorizeResponse{URL: "https://code.example/authorize"}, nil
}

func (*codeHost) Exchange(context.Context, pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	return pluginsdk.Fail(pluginsdk.ExchangeFailed, "not in an example"), nil
}

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
	serve.Serve(newCodeHost)
}
