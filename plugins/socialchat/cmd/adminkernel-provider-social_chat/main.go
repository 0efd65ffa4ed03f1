// Command adminkernel-provider-social_chat is the social_chat identity provider
// plugin, run by the kernel through serve.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/socialchat"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

func main() {
	serve.Serve(socialchat.New)
}
