package host_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
)

// TestServeLogsTheSettingsWarnings: the warnings `adminkernel config`
// prints (config.Warnings) are logged at WARN when the kernel starts.
func TestServeLogsTheSettingsWarnings(t *testing.T) {
	cfg := load(t, t.TempDir(), config.Development,
		"Service__Http__ListenAdress=http://:1", "Service__Http__ListenAddress=https://127.0.0.1:5443")
	want := cfg.Warnings()
	if len(want) != 2 {
		t.Fatalf("Warnings = %q, want the unknown key and the https address", want)
	}
	_, log := start(t, cfg)
	for _, w := range want {
		if !strings.Contains(log, "[WARN]  adminkernel.AdminKernel.Config: "+w) {
			t.Errorf("the start log lacks the warning %q:\n%s", w, log)
		}
	}
}
