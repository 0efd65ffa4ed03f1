// Command adminkernel-provider-team_chat is the team_chat identity provider
// plugin, run by the kernel through pluginsdk.Serve.
package main

import (
	"github.com/adminkernel/kernel/plugins/teamchat"
	"github.com/adminkernel/kernel/pluginsdk"
)

func main() {
	pluginsdk.Serve(teamchat.New)
}
