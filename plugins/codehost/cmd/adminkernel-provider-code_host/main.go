// Command adminkernel-provider-code_host is the code_host identity provider
// plugin, run by the kernel through pluginsdk.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/codehost"
	"github.com/adminkernel/kernel/pluginsdk"
)

func main() {
	pluginsdk.Serve(codehost.New)
}
