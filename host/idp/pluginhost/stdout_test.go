package pluginhost_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
)

// A plugin that prints to standard output before go-plugin's handshake:
// go-plugin reads that line where it expects the handshake and gives up at
// once ("Unrecognized remote plugin message: <line>"). The host logs that
// as "provider plugin not launched" and stops the process; the others start
// and the load succeeds. No restart is attempted: a plugin that never
// started is left out until the kernel restarts.
func TestPluginWritingToStdoutBeforeTheHandshake(t *testing.T) {
	t.Parallel()
	e := load(t, pluginDir(t, "chatty", "alpha"), nil)
	recorded(t, e.reg, "chatty", idp.NotLaunched, "Unrecognized remote plugin message")
	in := e.info(t, "chatty")
	if in.State != pluginhost.NotLaunched || in.PID != 0 ||
		!strings.Contains(in.Reason, "Unrecognized remote plugin message: chatty plugin: hello before the handshake") {
		t.Errorf("Plugins() chatty = %+v, want not launched with go-plugin's reason", in)
	}
	// hclog prints the multi-line error of go-plugin (with its hints about
	// architecture and permissions) under the line naming the plugin.
	if lines := e.log.lines("[ERROR] provider plugin not launched", "provider=chatty"); len(lines) != 1 ||
		!strings.Contains(e.log.String(), "| starting: Unrecognized remote plugin message: chatty plugin: hello before the handshake") {
		t.Errorf("want one error naming chatty with the reason, got %q\nlog:\n%s", lines, e.log)
	}
	if status(e.reg, "alpha") != idp.Ready {
		t.Errorf("alpha = %s, want ready", status(e.reg, "alpha"))
	}
	if lines := e.log.lines("restarting provider plugin failed", "chatty"); len(lines) != 0 {
		t.Errorf("the host retried chatty: %q", lines)
	}
}
