// Command adminkernel-provider-enterprise_chat is the enterprise_chat identity provider
// plugin, run by the kernel through pluginsdk.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/enterprisechat"
	"github.com/adminkernel/kernel/pluginsdk"
)

func main() {
	pluginsdk.Serve(enterprisechat.New)
}
