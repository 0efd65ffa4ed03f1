package host_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPackageMapIsComplete: every package below host/ is named, by its path
// relative to host/, in docs/design/architecture.md's package map, so a new
// package cannot arrive unexplained.
func TestPackageMapIsComplete(t *testing.T) {
	doc, err := os.ReadFile("../docs/design/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const root = "github.com/adminkernel/kernel/host"
	checked := 0
	var missing []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if rel == "" {
			rel = "host"
		}
		checked++
		if !strings.Contains(string(doc), "`"+rel+"`") {
			missing = append(missing, rel)
		}
	}
	if checked < 50 {
		t.Fatalf("go list gave %d packages: the check ran on too few", checked)
	}
	if len(missing) > 0 {
		t.Fatalf("packages missing from docs/design/architecture.md's package map (name each as `path`): %s", strings.Join(missing, ", "))
	}
	t.Logf("%d packages, each in the map", checked)
}
