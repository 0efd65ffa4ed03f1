// Command exitnow is a plugin binary for scripts/providers-cli.sh that
// exits at once, before the go-plugin handshake: `adminkernel providers
// test` must fail on it, not report a pass.
package main

import "os"

func main() {
	os.Exit(0)
}
