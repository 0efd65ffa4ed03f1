//go:build unix && !unit

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// TestHangupReopensTheLogFile: what `serve` installs turns a SIGHUP into
// Kernel.ReopenLogs: after logrotate's rename the lines go to a new file
// of the configured name, the first of them saying so; the process
// survives the signal.
func TestHangupReopensTheLogFile(t *testing.T) {
	k := kerneltest.Start(t, []string{"Logging__File=logs/adminkernel.log", "Service__Job__SchedulerDisabled=true"})
	path := filepath.Join(k.Config().ContentRoot, "logs", "adminkernel.log")
	if k.Log() != "" {
		t.Errorf("with Logging:File the kernel also wrote to its output:\n%s", k.Log())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := reopenOnHangup(ctx, k.Kernel)
	defer stop()
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, "the reopened log file", func() bool {
		b, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(b), "log file reopened")
	})
	k.Logger("AdminKernel.Test").Info("after the rotation")
	b, _ := os.ReadFile(path)
	old, _ := os.ReadFile(path + ".1")
	if !strings.Contains(string(b), "after the rotation") || strings.Contains(string(old), "after the rotation") {
		t.Fatalf("new file:\n%s\nrotated file:\n%s", b, old)
	}
	if !strings.Contains(string(old), "starting") {
		t.Errorf("the rotated file lost the lines written before:\n%s", old)
	}
}
