// Command adminkernel-provider-code_host is the code_host identity provider
// plugin, run by the kernel through pluginsdk.Serve.
package main

import (
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/plugins/codehost"
	"github.com/adminkernel/kernel/pluginsdk"
)

func main() {
	pluginsdk.Serve(func(log hclog.Logger) pluginsdk.Provider { return codehost.New(log) })
}
