// Command adminkernel-provider-enterprise_chat is the enterprise_chat identity provider
// plugin, run by the kernel through serve.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/enterprisechat"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

func main() {
	serve.Serve(enterprisechat.New)
}
