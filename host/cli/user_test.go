package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
)

// TestUserUnlockNeedsTheSharedCache: with the in-process cache the lockout
// counters live inside the running service, so the command refuses and
// says that a restart clears them; it needs exactly one account.
func TestUserUnlockNeedsTheSharedCache(t *testing.T) {
	dir := t.TempDir()
	_, _, err := run(t, context.Background(), host.Options{}, "user", "unlock", "superAdmin", "--content-root", dir, "--environment", "Development")
	if err == nil || !strings.Contains(err.Error(), "restart the service") {
		t.Fatalf("unlock with the in-process cache = %v, want the restart advice", err)
	}
	if _, _, err := run(t, context.Background(), host.Options{}, "user", "unlock", "--content-root", dir); err == nil {
		t.Fatal("unlock without an account was accepted")
	}
}
