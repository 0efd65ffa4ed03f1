package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host"
)

// TestNewModule drives `new module` through the command tree: it writes
// the three files, refuses a second run without --force, applies
// --label-zh, --menu-id and --table, --print touches no disk, and bad
// input fails with the scaffold's message.
func TestNewModule(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/shop\n\ngo 1.26\n")
	args := []string{"new", "module", "shelf", "--dir", dir, "--field", "code:string:required,unique", "--field", "site:org",
		"--label-zh", "code=编码", "--menu-id", "3000", "--table", "shop_shelf"}
	out, _, err := run(t, ctx, host.Options{}, args...)
	if err != nil {
		t.Fatalf("new module: %v", err)
	}
	for _, name := range []string{"schema.go", "module.go", "module_test.go"} {
		if !strings.Contains(out, filepath.Join(dir, "shelf", name)) {
			t.Errorf("output does not name %s:\n%s", name, out)
		}
	}
	mod, err := os.ReadFile(filepath.Join(dir, "shelf", "module.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Label: t("编码", "Code")`, "resource.Menu{ID: 3000,", `Org:   "site"`} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("module.go lacks %q:\n%s", want, mod)
		}
	}
	test, _ := os.ReadFile(filepath.Join(dir, "shelf", "module_test.go"))
	sch, _ := os.ReadFile(filepath.Join(dir, "shelf", "schema.go"))
	if !strings.Contains(string(test), `"example.com/shop/shelf"`) || !strings.Contains(string(sch), `Table: "shop_shelf"`) {
		t.Errorf("import path or table wrong:\n%s\n%s", test, sch)
	}
	if _, _, err := run(t, ctx, host.Options{}, args...); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second run: %v, want a refusal naming --force", err)
	}
	if _, _, err := run(t, ctx, host.Options{}, append(args, "--force")...); err != nil {
		t.Fatalf("--force: %v", err)
	}

	empty := t.TempDir()
	out, _, err = run(t, ctx, host.Options{}, "new", "module", "crate", "--dir", empty, "--field", "n:int", "--print")
	if err != nil || !strings.Contains(out, "// ==== crate/schema.go ====") || !strings.Contains(out, "func TestCrateCRUD") {
		t.Fatalf("--print: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("--print wrote %v", entries)
	}

	out, _, err = run(t, ctx, host.Options{}, "new", "module", "crate", "--dir", empty, "--field", "n:int", "--org", "--print")
	if err != nil || !strings.Contains(out, `Org:   "orgId"`) || !strings.Contains(out, `field.Int64("org_id").Optional()`) || !strings.Contains(out, "func TestCrateDataScope") {
		t.Fatalf("--org: %v\n%s", err, out)
	}
	if _, _, err := run(t, ctx, host.Options{}, "new", "module", "crate", "--dir", empty, "--field", "site:org", "--org", "--print"); err == nil ||
		!strings.Contains(err.Error(), "at most one org field") {
		t.Fatalf("--org with an org field: %v", err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"new", "module", "Bad", "--field", "a:int"}, "lower-case Go package name"},
		{[]string{"new", "module", "box", "--field", "a:money"}, `unknown type "money"`},
		{[]string{"new", "module", "box", "--field", "id:int"}, "kernel's"},
		{[]string{"new", "module", "box", "--field", "a:int", "--field", "a:string"}, "declared twice"},
		{[]string{"new", "module", "box", "--field", "a:int", "--label-zh", "b=乙"}, "--label-zh"},
		{[]string{"new", "module", "box", "--field", "a:int", "--menu-id", "10"}, "below 1000"},
	} {
		if _, _, err := run(t, ctx, host.Options{}, append(c.args, "--dir", empty)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
