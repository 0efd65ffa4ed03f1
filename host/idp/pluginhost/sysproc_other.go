//go:build !linux

package pluginhost

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: plugins end when the
// host closes them (Close, plugin.CleanupClients) or when they notice the
// host's connection is gone.
func sysProcAttr() *syscall.SysProcAttr { return nil }

const orphanSafe = false
