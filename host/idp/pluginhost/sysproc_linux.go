package pluginhost

import "syscall"

// sysProcAttr puts a plugin in its own process group (a Ctrl-C on the
// host's terminal reaches the host, which then ends its plugins, and not
// the plugins directly) and has the kernel send it SIGKILL when the thread
// that started it dies, so no plugin outlives a killed host. Plugins are
// started from a goroutine locked to its thread for the plugin's whole
// life (see supervisor.run), because Pdeathsig follows the thread, not the
// process.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// orphanSafe reports whether plugins die with the host even when it is
// killed.
const orphanSafe = true
