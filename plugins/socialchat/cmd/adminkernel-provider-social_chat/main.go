// Command adminkernel-provider-social_chat is the social_chat identity provider
// plugin, run by the kernel through pluginsdk.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/socialchat"
	"github.com/adminkernel/kernel/pluginsdk"
)

func main() {
	pluginsdk.Serve(socialchat.New)
}
