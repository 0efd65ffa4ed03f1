package scaffold

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// warehouse is the brief's example: every type and a unique field.
var warehouse = []string{"sku:string:required,unique", "qty:int", "price:decimal", "site:org", "arrived:date",
	"active:bool", "kind:dict=warehouse_kind", "note:text"}

func render(t *testing.T, name string, fields ...string) map[string]string {
	t.Helper()
	s, err := New(name, fields)
	if err != nil {
		t.Fatal(err)
	}
	s.ImportPath = "example.com/app/" + name
	files, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		gofmt, err := format.Source(f.Data)
		if err != nil {
			t.Fatalf("%s does not parse: %v", f.Name, err)
		}
		if !bytes.Equal(gofmt, f.Data) {
			t.Errorf("%s is not gofmt-clean", f.Name)
		}
		out[f.Name] = string(f.Data)
	}
	if len(out) != 3 {
		t.Fatalf("files = %d, want schema.go, module.go, module_test.go", len(out))
	}
	return out
}

func contains(t *testing.T, file, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", file, w, text)
		}
	}
}

func TestRenderWarehouse(t *testing.T) {
	f := render(t, "warehouse", warehouse...)
	contains(t, "schema.go", f["schema.go"],
		"package warehouse\n",
		"type Warehouse struct{ ent.Schema }",
		"schema.IDMixin{}, schema.AuditMixin{}, schema.SoftDeleteMixin{}",
		`entsql.Annotation{Table: "warehouses"}`,
		`field.String("sku").MaxRuneLen(100),`, // required: not Optional
		`field.Int64("qty").Default(0),`,
		`field.Float("price").Optional(),`,
		`field.Int64("site").Optional(),`,
		`field.Time("arrived").Optional(),`,
		`field.Bool("active").Default(false),`,
		`field.String("kind").MaxRuneLen(32).Optional(),`,
		`field.Text("note").Optional(),`,
		`index.Fields("sku", "delete_key").Unique(),`,
		`index.Fields("is_delete", "create_time", "id"),`,
		`index.Fields("site", "is_delete", "id"),`,
	)
	contains(t, "module.go", f["module.go"],
		`Name = "warehouse"`, `Base = "/api/v1/warehouse"`, `DictKind = "warehouse_kind"`,
		`{ID: 2000, Code: DictKind, Name: "Kind", Items: []seed.DictItem{`,
		`{ID: 2000 + 1, Label: "A", Value: "a"},`,
		`Org:   "site",`,
		`resource.Menu{ID: 2000, ParentID: 0, ModuleID: 2`,
		`{Name: "sku", Label: t("Sku", "Sku"), Required: true, Unique: true, List: true, Form: true, Filter: resource.Contains, Sortable: true},`,
		`{Name: "qty", Label: t("Qty", "Qty"), List: true, Form: true, Filter: resource.Range, Sortable: true},`,
		`{Name: "price", Label: t("Price", "Price"), List: true, Form: true, Sortable: true},`,
		`{Name: "site", Label: t("Site", "Site"), Type: resource.Org, List: true, Form: true, Filter: resource.Eq},`,
		`{Name: "arrived", Label: t("Arrived", "Arrived"), Type: resource.Date, List: true, Form: true, Filter: resource.Range, Sortable: true},`,
		`{Name: "active", Label: t("Active", "Active"), List: true, Form: true, Filter: resource.Eq},`,
		`{Name: "kind", Label: t("Kind", "Kind"), Type: resource.Dict, Dict: DictKind, List: true, Form: true, Filter: resource.Eq},`,
		`{Name: "note", Label: t("Note", "Note"), Form: true},`,
		`resource.Attach(host.Module{Name: "Warehouse", Dicts: Dicts}, Resource())`,
	)
	contains(t, "module_test.go", f["module_test.go"],
		"package warehouse_test", `"example.com/app/warehouse"`,
		"func TestWarehouseCRUD(t *testing.T)", "func TestWarehouseDataScope(t *testing.T)",
		`const query = "sku=sku-1"`, `errcode.ResourceKeyExists`, `errcode.OrgOutOfScope`,
		`"/api/v1/sys/recycle/"+warehouse.Name+"/page"`, `if got["qty"] != float64(10) {`,
	)
}

// TestRenderMinimal: one optional field, no unique, org or dict: no
// dictionary, no data-scope test, no unique test.
func TestRenderMinimal(t *testing.T) {
	f := render(t, "category", "title:string", "born_on:datetime:nofilter", "memo:text:list,filter")
	contains(t, "schema.go", f["schema.go"], `Table: "categories"`, `field.String("title").MaxRuneLen(100).Optional(),`)
	contains(t, "module.go", f["module.go"],
		`{Name: "bornOn", Label: t("Born on", "Born on"), Type: resource.DateTime, List: true, Form: true, Sortable: true},`,
		`{Name: "memo", Label: t("Memo", "Memo"), List: true, Form: true, Filter: resource.Contains},`)
	for name, text := range f {
		for _, no := range []string{"seed.", "Org:", "DataScope", "ResourceKeyExists", "Dicts"} {
			if strings.Contains(text, no) {
				t.Errorf("%s holds %q:\n%s", name, no, text)
			}
		}
	}
}

func TestLabelZHAndOptions(t *testing.T) {
	s, err := New("box", []string{"size:int:required,filter=eq,nolist"})
	if err != nil {
		t.Fatal(err)
	}
	s.Fields[0].LabelZH = "尺寸"
	s.MenuID, s.Table, s.ImportPath = 3000, "app_box", "x/box"
	files, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "module.go", string(files[1].Data), `{Name: "size", Label: t("尺寸", "Size"), Required: true, Form: true, Filter: resource.Eq},`,
		`resource.Menu{ID: 3000,`)
	contains(t, "schema.go", string(files[0].Data), `Table: "app_box"`)
}

func TestPlural(t *testing.T) {
	for in, want := range map[string]string{"warehouse": "warehouses", "category": "categories", "day": "days",
		"box": "boxes", "bus": "buses", "batch": "batches", "dish": "dishes"} {
		if got := plural(in); got != want {
			t.Errorf("plural(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name   string
		fields []string
		want   string
	}{
		{"Warehouse", []string{"a:string"}, "lower-case Go package name"},
		{"ware_house", []string{"a:string"}, "lower-case Go package name"},
		{"9lives", []string{"a:string"}, "lower-case Go package name"},
		{"func", []string{"a:string"}, "Go keyword"},
		{"resource", []string{"a:string"}, "Go keyword or a name the generated code uses"},
		{"page", []string{"a:string"}, "a name the generated code uses"},
		{"user", []string{"a:string"}, "a kernel module's"},
		{"box", nil, "no fields"},
		{"box", []string{"size:float"}, `unknown type "float"`},
		{"box", []string{"size"}, "want name:type[:flags]"},
		{"box", []string{"a:string", "a:int"}, "field a declared twice"},
		{"box", []string{"arrived_on:date", "arrivedon:date"}, "declared twice"},
		{"box", []string{"id:int"}, "column id is the kernel's"},
		{"box", []string{"create_time:datetime"}, "column create_time is the kernel's"},
		{"box", []string{"is_delete:bool"}, "reserved"},
		{"box", []string{"Size:int"}, "lower-case snake_case"},
		{"box", []string{"a_1:int"}, "lower-case snake_case"},
		{"box", []string{"kind:dict"}, "names its dictionary"},
		{"box", []string{"kind:dict=Bad-Code"}, "dictionary code"},
		{"box", []string{"kind:string=x"}, "only dict takes"},
		{"box", []string{"a:string:shiny"}, `unknown flag "shiny"`},
		{"box", []string{"a:text:unique"}, "cannot be unique"},
		{"box", []string{"a:int:filter=contains"}, "contains filter needs"},
		{"box", []string{"a:bool:filter=range"}, "range filter needs"},
		{"box", []string{"a:org", "b:org"}, "at most one org field"},
		{"box", []string{"org_id:org", "org_name:string"}, "the answer uses orgName"},
	}
	for _, c := range cases {
		_, err := New(c.name, c.fields)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %q) = %v, want an error with %q", c.name, c.fields, err, c.want)
		}
	}
	s, _ := New("box", []string{"a:string"})
	s.MenuID = 999
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "below 1000") {
		t.Errorf("menu id 999: %v", err)
	}
	s.MenuID, s.Table = 2000, "sys_box"
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "not sys_") {
		t.Errorf("table sys_box: %v", err)
	}
}

func TestWriteRefusesAFolderWithFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app // the app\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New("box", []string{"a:string"})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := s.Write(dir, false)
	if err != nil || len(paths) != 3 {
		t.Fatalf("Write = %v, %v", paths, err)
	}
	if s.ImportPath != "example.com/app/box" {
		t.Errorf("import path = %q", s.ImportPath)
	}
	if _, err := s.Write(dir, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second Write: %v, want a refusal naming --force", err)
	}
	if _, err := s.Write(dir, true); err != nil {
		t.Fatalf("Write with force: %v", err)
	}
	if _, err := (&Spec{Name: "box", Fields: s.Fields, MenuID: 2000}).Write(filepath.Join(t.TempDir(), "nomod"), false); err == nil ||
		!strings.Contains(err.Error(), "no go.mod") {
		t.Fatalf("outside a module: %v", err)
	}
}

// repoRoot is the repository root (this package is host/resource/scaffold).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

// TestGeneratedModuleIsGreen generates the warehouse module into a
// temporary folder under testdata (inside this repository's module, so it
// compiles against the working tree; testdata is outside ./...) and runs
// go vet and go test on it: right after generation its tests pass.
func TestGeneratedModuleIsGreen(t *testing.T) {
	root := repoRoot(t)
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	dir := filepath.Join(root, "host", "resource", "scaffold", "testdata", "tmp-"+hex.EncodeToString(rnd[:]))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s, err := New("warehouse", warehouse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	if want := "github.com/adminkernel/kernel/host/resource/scaffold/testdata/" + filepath.Base(dir) + "/warehouse"; s.ImportPath != want {
		t.Fatalf("import path %q, want %q", s.ImportPath, want)
	}
	// A second module: no unique field, a datetime, a filtered text, a
	// required date, the --org field.
	s2, err := New("ledger", []string{"title:string:nofilter", "posted:datetime", "memo:text:filter", "due:date:required", "amount:decimal:filter", OrgField})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	// Explicit paths: a ... pattern matches nothing below testdata.
	pkgs := []string{}
	for _, name := range []string{"warehouse", "ledger"} {
		pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join("host", "resource", "scaffold", "testdata", filepath.Base(dir), name)))
	}
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "go", args...) //nolint:gosec // the go tool with fixed arguments
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd(append([]string{"vet"}, pkgs...)...)
	out := gocmd(append([]string{"test", "-count=1", "-v"}, pkgs...)...)
	for _, want := range []string{"--- PASS: TestWarehouseCRUD/page", "--- PASS: TestWarehouseCRUD/update", "--- PASS: TestWarehouseCRUD/unique",
		"--- PASS: TestWarehouseCRUD/delete,_recycle_bin,_restore", "--- PASS: TestWarehouseDataScope",
		"--- PASS: TestLedgerCRUD/page", "--- PASS: TestLedgerCRUD/update", "--- PASS: TestLedgerDataScope"} {
		if !strings.Contains(out, want) {
			t.Errorf("the generated tests: no %q in\n%s", want, out)
		}
	}
}
