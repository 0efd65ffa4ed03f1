// Command adminkernel-provider-team_chat is the team_chat identity provider
// plugin, run by the kernel through serve.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/teamchat"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

func main() {
	serve.Serve(teamchat.New)
}
