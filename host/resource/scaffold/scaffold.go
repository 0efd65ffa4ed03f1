// Package scaffold generates a business module from a one-line
// description: the ent schema of its table, the resource description that
// host/resource serves, and HTTP tests through kerneltest that pass right
// after generation. It is the engine of `adminkernel new module`; it has
// no command-line code of its own, so it is tested without cobra.
//
// A field is name:type[:flags]:
//
//	sku:string:required,unique   qty:int   price:decimal   site:org
//	arrived:date   active:bool   kind:dict=warehouse_kind   note:text
//
// Types: string, text, int, decimal, bool, date, datetime, dict=<code>,
// org. Flags (comma-separated): required, unique, list / nolist (a column
// of the table: default on except text), filter / filter=eq|contains|range
// / nofilter (a filter of the list: default on, by type — contains for
// string, eq for bool, dict and org, range for int, date and datetime —
// and off for text and decimal, where filter gives contains and range).
//
// The table is the module name pluralised ("warehouse" → "warehouses",
// "category" → "categories"), unless Spec.Table names it. Labels are the
// field name title-cased in both languages: edit them (and the Chinese
// ones especially) in the generated module.go.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"unicode"
)

// Type is a field type of the command line.
type Type string

// The field types.
const (
	String   Type = "string"
	Text     Type = "text"
	Int      Type = "int"
	Decimal  Type = "decimal"
	Bool     Type = "bool"
	Date     Type = "date"
	DateTime Type = "datetime"
	Dict     Type = "dict"
	Org      Type = "org"
)

// OrgField is the field `new module --org` adds: the organisation data
// scope applies to.
const OrgField = "org_id:org"

var types = []Type{String, Text, Int, Decimal, Bool, Date, DateTime, Dict, Org}

// Field is one parsed --field.
type Field struct {
	Column   string // snake_case column name, as given
	Type     Type
	Dict     string // dictionary code of a dict field
	Required bool
	Unique   bool
	List     bool
	Filter   string // "", "eq", "contains" or "range"
	// LabelZH is the Chinese label (default: the English one).
	LabelZH string
}

// Spec is what to generate.
type Spec struct {
	// Name is the module's name: a lower-case Go package name.
	Name   string
	Fields []Field
	// MenuID is the id of the resource's menu page (its buttons take the
	// next ids) and the base of its dictionaries' ids; default 2000.
	MenuID int64
	// Table overrides the table name (default: Name pluralised).
	Table string
	// ImportPath is the generated package's import path (the test imports
	// it); Write derives it from the go.mod above the target directory
	// when empty.
	ImportPath string
}

var (
	nameRE   = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z][a-z0-9]*)*$`)
	dictRE   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	tableRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	reserved = []string{"id", "create_time", "create_user_id", "update_time", "update_user_id", "is_delete", "delete_key"}
	// names the generated files import or declare: a module of that name
	// would not compile.
	clashes = []string{"ent", "entsql", "entschema", "field", "index", "schema", "host", "resource", "seed",
		"kerneltest", "errcode", "fmt", "testing", "context", "strings", "sys", "auth", "api",
		// package-level names of module.go (the schema type is the name
		// title-cased)
		"module", "name", "base", "dicts",
		// identifiers of the generated test
		"t", "k", "p", "b", "n", "it", "id", "ur", "ctx", "body", "page", "create", "detail", "list", "admin",
		"one", "two", "got", "tok", "clerk", "codes", "own", "other", "other5", "query", "dup", "bin"}
)

// kernelModules are the kernel's module names, lower-cased (two modules
// of one name stop composition).
var kernelModules = []string{"meta", "auth", "reauth", "mfa", "org", "user", "role", "menu", "config", "dict",
	"externalauth", "log", "monitor", "dashboard", "cache", "notice", "job", "upload", "recycle", "console"}

// ParseField parses name:type[:flags].
func ParseField(s string) (Field, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return Field{}, fmt.Errorf("field %q: want name:type[:flags] (for example sku:string:required,unique)", s)
	}
	f := Field{Column: parts[0]}
	if !nameRE.MatchString(f.Column) || len(f.Column) > 48 {
		return Field{}, fmt.Errorf("field %q: the name must be lower-case snake_case (letters, digits, '_' before a letter), at most 48", f.Column)
	}
	if slices.Contains(reserved, f.Column) {
		return Field{}, fmt.Errorf("field %q: column %s is the kernel's (reserved: %s)", f.Column, f.Column, strings.Join(reserved, ", "))
	}
	typ, arg, hasArg := strings.Cut(parts[1], "=")
	f.Type = Type(typ)
	if !slices.Contains(types, f.Type) {
		return Field{}, fmt.Errorf("field %s: unknown type %q (types: string, text, int, decimal, bool, date, datetime, dict=<code>, org)", f.Column, parts[1])
	}
	switch {
	case f.Type == Dict && !hasArg:
		return Field{}, fmt.Errorf("field %s: a dict field names its dictionary: %s:dict=<code>", f.Column, f.Column)
	case f.Type == Dict && !dictRE.MatchString(arg):
		return Field{}, fmt.Errorf("field %s: dictionary code %q must be lower-case letters, digits and '_'", f.Column, arg)
	case f.Type != Dict && hasArg:
		return Field{}, fmt.Errorf("field %s: only dict takes =<code>", f.Column)
	}
	f.Dict = arg
	f.List = f.Type != Text
	f.Filter = defaultFilter(f.Type)
	if len(parts) == 3 {
		for _, flag := range strings.Split(parts[2], ",") {
			switch flag {
			case "required":
				f.Required = true
			case "unique":
				f.Unique = true
			case "list":
				f.List = true
			case "nolist":
				f.List = false
			case "filter":
				switch f.Filter = defaultFilter(f.Type); f.Type {
				case Text:
					f.Filter = "contains"
				case Decimal:
					f.Filter = "range"
				}
			case "filter=eq", "filter=contains", "filter=range":
				f.Filter = strings.TrimPrefix(flag, "filter=")
			case "nofilter":
				f.Filter = ""
			default:
				return Field{}, fmt.Errorf("field %s: unknown flag %q (flags: required, unique, list, nolist, filter, filter=eq|contains|range, nofilter)", f.Column, flag)
			}
		}
	}
	switch {
	case f.Unique && (f.Type == Text || f.Type == Bool || f.Type == Decimal || f.Type == Org || f.Type == Dict):
		return Field{}, fmt.Errorf("field %s: a %s field cannot be unique", f.Column, f.Type)
	case f.Filter == "contains" && f.Type != String && f.Type != Text:
		return Field{}, fmt.Errorf("field %s: a contains filter needs a string or text field", f.Column)
	case f.Filter == "range" && f.Type != Int && f.Type != Decimal && f.Type != Date && f.Type != DateTime:
		return Field{}, fmt.Errorf("field %s: a range filter needs an int, decimal, date or datetime field", f.Column)
	}
	return f, nil
}

func defaultFilter(t Type) string {
	switch t {
	case String:
		return "contains"
	case Bool, Dict, Org:
		return "eq"
	case Int, Date, DateTime:
		return "range"
	}
	return ""
}

// New checks a module name and its fields (ParseField each) and returns
// the spec with defaults.
func New(name string, fields []string) (*Spec, error) {
	s := &Spec{Name: name, MenuID: 2000}
	for _, raw := range fields {
		f, err := ParseField(raw)
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	return s, s.Check()
}

// Check validates the spec.
func (s *Spec) Check() error {
	if !regexp.MustCompile(`^[a-z][a-z0-9]*$`).MatchString(s.Name) || len(s.Name) > 40 {
		return fmt.Errorf("module name %q: a lower-case Go package name (letters and digits, starting with a letter, at most 40)", s.Name)
	}
	if token.IsKeyword(s.Name) || slices.Contains(clashes, s.Name) {
		return fmt.Errorf("module name %q is a Go keyword or a name the generated code uses: pick another", s.Name)
	}
	if slices.Contains(kernelModules, s.Name) {
		return fmt.Errorf("module name %q is a kernel module's (module names compare case-insensitively): pick another", s.Name)
	}
	if len(s.Fields) == 0 {
		return errors.New("no fields: give at least one --field name:type")
	}
	if s.MenuID < 1000 {
		return fmt.Errorf("menu id %d: ids below 1000 are the kernel's", s.MenuID)
	}
	if s.Table != "" && (!tableRE.MatchString(s.Table) || strings.HasPrefix(s.Table, "sys_")) {
		return fmt.Errorf("table %q: lower-case letters, digits and '_', not sys_", s.Table)
	}
	seen := map[string]bool{}
	orgs := 0
	for _, f := range s.Fields {
		key := strings.ReplaceAll(f.Column, "_", "")
		if seen[key] {
			return fmt.Errorf("field %s declared twice", f.Column)
		}
		seen[key] = true
		if f.Type == Org {
			orgs++
		}
	}
	if orgs > 1 {
		return errors.New("at most one org field (data scope applies to one)")
	}
	for _, o := range s.Fields {
		if o.Type != Org {
			continue
		}
		// The answer carries the organisation's name next to the id
		// (orgId → orgName, site → siteName).
		nameKey := strings.TrimSuffix(camel(o.Column), "Id") + "Name"
		for _, f := range s.Fields {
			if camel(f.Column) == nameKey {
				return fmt.Errorf("field %s: the answer uses %s for the name of org field %s's organisation", f.Column, nameKey, o.Column)
			}
		}
	}
	return nil
}

// TableName is the table the schema declares.
func (s *Spec) TableName() string {
	if s.Table != "" {
		return s.Table
	}
	return plural(s.Name)
}

// plural is a naive English plural of a lower-case word.
func plural(w string) string {
	switch {
	case strings.HasSuffix(w, "y") && len(w) > 1 && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "s") || strings.HasSuffix(w, "x") || strings.HasSuffix(w, "z") ||
		strings.HasSuffix(w, "ch") || strings.HasSuffix(w, "sh"):
		return w + "es"
	}
	return w + "s"
}

// camel is the camelCase of a snake_case name ("arrived_on" → "arrivedOn").
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = upperFirst(parts[i])
	}
	return strings.Join(parts, "")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// title is a label from a snake_case name ("arrived_on" → "Arrived on").
func title(s string) string { return upperFirst(strings.ReplaceAll(s, "_", " ")) }

//go:embed templates/*.tmpl
var tmplFS embed.FS

// File is one generated file.
type File struct {
	Name string // base name (schema.go, module.go, module_test.go)
	Data []byte
}

// Render returns the generated files, gofmt-formatted.
func (s *Spec) Render() ([]File, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	m := s.model()
	t, err := template.New("").Funcs(template.FuncMap{"q": strconv.Quote}).ParseFS(tmplFS, "templates/*.tmpl")
	if err != nil {
		return nil, err
	}
	var out []File
	for _, name := range []string{"schema.go", "module.go", "module_test.go"} {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, name+".tmpl", m); err != nil {
			return nil, fmt.Errorf("rendering %s: %w", name, err)
		}
		src, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("generated %s does not parse: %w\n%s", name, err, b.Bytes())
		}
		out = append(out, File{Name: name, Data: src})
	}
	return out, nil
}

// Write renders the module into dir/<name>/ and returns the paths
// written. A directory holding files is refused unless force.
func (s *Spec) Write(dir string, force bool) ([]string, error) {
	target := filepath.Join(dir, s.Name)
	if s.ImportPath == "" {
		p, err := ImportPath(target)
		if err != nil {
			return nil, err
		}
		s.ImportPath = p
	}
	files, err := s.Render()
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(target); err == nil && len(entries) > 0 && !force {
		return nil, fmt.Errorf("%s already holds %d file(s): pick another --dir or name, or pass --force to overwrite", target, len(entries))
	} else if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(target, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil { //nolint:gosec // source files, readable like any other

			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// ImportPath is the import path of the package in dir (which need not
// exist yet): the module path of the nearest go.mod above it plus the
// relative path.
func ImportPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modulePath(data)
			if mod == "" {
				return "", fmt.Errorf("%s: no module line", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		if !os.IsNotExist(err) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above: generate inside a Go module (go mod init)", abs)
		}
	}
}

// modulePath is the module line of a go.mod.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line, _, _ = strings.Cut(line, "//")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			p := strings.TrimSpace(rest)
			if u, err := strconv.Unquote(p); err == nil {
				return u
			}
			return p
		}
	}
	return ""
}
