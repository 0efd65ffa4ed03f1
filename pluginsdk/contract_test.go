package pluginsdk_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The root package is the contract alone: a vendor's provider package
// that reads it must not pull in go-plugin, gRPC or OpenTelemetry (the
// runtime is pluginsdk/serve). Every import of its non-test files is of
// the standard library (no dot in the first path element).
func TestContractImportsOnlyTheStandardLibrary(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: package pluginsdk imports only the standard library (the runtime belongs in pluginsdk/serve)", name, path)
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked %d files of package pluginsdk; want provider.go, descriptor.go, errors.go and doc.go at least", checked)
	}
}
