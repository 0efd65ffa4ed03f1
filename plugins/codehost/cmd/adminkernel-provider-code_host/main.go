// Command adminkernel-provider-code_host is the code_host identity provider
// plugin, run by the kernel through serve.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/codehost"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

func main() {
	serve.Serve(codehost.New)
}
