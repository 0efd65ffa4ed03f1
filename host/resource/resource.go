// Package resource serves a business table declared once — its ent schema
// plus a small description — with the semantics of the kernel's built-in
// areas: a paged list with filters, sorting and data scope, detail, create,
// update, soft delete and batch delete into the recycle bin (restore,
// purge), xlsx export and import (template, preview, commit with a
// duplicate strategy), permission codes derived from the routes, seeded
// menus and buttons, the operation log, and a description endpoint
// (GET /api/v1/sys/resource/{name}/schema) from which the console renders
// the standard list, filter, form and detail pages without a frontend
// build.
//
// A module attaches its resources with Attach:
//
//	m := resource.Attach(host.Module{Name: "Inventory"}, resource.Resource{
//		Name: "inventory-item", Path: "/inventory/item", Schema: schema.Item{},
//		Label: resource.Text{ZH: "物品", EN: "Items"}, Org: "orgId",
//		Fields: []resource.Field{{Name: "name", Label: ..., Required: true, List: true, Form: true, Filter: resource.Contains}},
//		Menu: resource.Menu{ID: 1100, ParentID: 1000},
//	})
//
// The table is the ent schema's (its entsql.Annotation table name and
// fields, with the kernel's IDMixin, AuditMixin and SoftDeleteMixin); the
// kernel creates and extends it under the same policy as its own schema
// (database.EnsureModuleTables). Rows are read and written through ent's
// dialect-aware SQL builder, so one description serves SQLite, PostgreSQL
// and MySQL/MariaDB alike.
package resource

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	entfield "entgo.io/ent/schema/field"

	"github.com/adminkernel/kernel/host/route"
)

// Text is a text in the console's two languages.
type Text struct {
	ZH string `json:"zh-CN"`
	EN string `json:"en-US"`
}

// Type is how a field is shown, edited and validated.
type Type string

// The field types of a description.
const (
	String   Type = "string"   // one line (a string column)
	TextArea Type = "text"     // several lines (a text column)
	Int      Type = "int"      // an integer column
	Decimal  Type = "decimal"  // a float column, rounded to Scale digits
	Bool     Type = "bool"     // a bool column
	Date     Type = "date"     // a time column holding a day ("2006-01-02", UTC midnight)
	DateTime Type = "datetime" // a time column (RFC 3339 on the wire)
	Dict     Type = "dict"     // a string column holding a value of dictionary Dict
	Org      Type = "org"      // an int64 column holding an organisation id
)

// Filter is how a field filters the list.
type Filter string

// The filters of a field.
const (
	Eq       Filter = "eq"       // ?<name>=v
	Contains Filter = "contains" // ?<name>=v, a substring (strings)
	Range    Filter = "range"    // ?<name>From=a&<name>To=b, both ends included
)

// Field describes one column of a resource.
type Field struct {
	// Name is the JSON name (camelCase); the column is its snake_case form
	// unless Column is set.
	Name   string
	Column string
	Label  Text
	Help   Text
	// Type defaults from the schema field: string → String (Text when the
	// field is field.Text), int kinds → Int, float → Decimal, bool → Bool,
	// time → DateTime. Dict needs Dict; Org needs an int64 column.
	Type Type
	// Dict is the dictionary type code of a Dict field (values are checked
	// against its enabled items).
	Dict string
	// Required refuses an empty value on create and update.
	Required bool
	// Min and Max bound numbers (Int, Decimal) and, for strings, Max bounds
	// the length in characters (default: the schema's size). Nil: no bound.
	Min, Max *float64
	// Scale is the number of decimals of a Decimal field (default 2).
	Scale int
	// List shows the field as a column of the table; Form puts it in the
	// create and edit form; Sortable lets the list sort by it; ReadOnly
	// shows it in forms without letting it change (never written).
	List, Form, Sortable, ReadOnly bool
	// Filter makes the field a filter of the list.
	Filter Filter
	// Unique: no two live rows share the value (the import's duplicate key
	// when Resource.Key is empty). The schema should hold the matching
	// unique index (with delete_key, see ent/schema).
	Unique bool
}

// N returns a pointer to v (Field.Min, Field.Max).
func N(v float64) *float64 { return &v }

// Ops is the set of operations a resource serves.
type Ops uint16

// The operations of a resource.
const (
	OpPage Ops = 1 << iota
	OpDetail
	OpCreate
	OpUpdate
	OpDelete
	OpBatchDelete
	OpExport
	OpImport
	OpRecycle
	// All is every operation (the default).
	All = OpPage | OpDetail | OpCreate | OpUpdate | OpDelete | OpBatchDelete | OpExport | OpImport | OpRecycle
)

var opNames = []struct {
	op   Ops
	name string
}{{OpPage, "page"}, {OpDetail, "detail"}, {OpCreate, "create"}, {OpUpdate, "update"}, {OpDelete, "delete"},
	{OpBatchDelete, "batchDelete"}, {OpExport, "export"}, {OpImport, "import"}, {OpRecycle, "recycle"}}

// Menu places the resource's page in the menu tree. The page gets ID, its
// buttons ID+1, ID+2, ... (at most ID+6): keep ten ids free per resource.
type Menu struct {
	ID, ParentID int64
	Icon         string
	Sort         int
	// ModuleID is the top-level module of a page without a parent.
	ModuleID int64
}

// Resource is a business table served by the kernel.
type Resource struct {
	// Name is the resource's name: lower-case letters, digits and '-',
	// unique across modules; it is the recycle-bin type and the segment of
	// the description endpoint.
	Name string
	// Path is the API path below /api/v1 ("/inventory/item").
	Path string
	// Schema is the ent schema of the table.
	Schema ent.Interface
	Label  Text
	Fields []Field
	// Org names the Org field data scope applies to: a caller sees and
	// writes the rows of the organisations their scope holds (and the rows
	// they created, when the scope includes themselves). Empty: every
	// caller holding the codes sees every row.
	Org string
	// Key names the fields that identify a row on import (Skip/Overwrite);
	// default: the Unique fields.
	Key []string
	// Ops are the operations served (zero: All).
	Ops  Ops
	Menu Menu
	// MaxImportRows caps the rows of one import (default 5000).
	MaxImportRows int
}

// spec is a compiled resource.
type spec struct {
	Resource
	table   string
	fields  []*field // described fields
	byName  map[string]*field
	org     *field
	key     []*field
	base    string // /api/v1/<path>
	codes   map[string]string
	columns map[string]entfield.Type // every column of the table
}

type field struct {
	Field
	col  string
	kind entfield.Type
	size int  // schema size of strings (0: default)
	null bool // nullable column
	// hasDefault: the column has a default (an omitted value takes it).
	hasDefault bool
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,47}$`)
var pathRE = regexp.MustCompile(`^(/[a-z0-9][a-z0-9-]*)+$`)

// reserved columns the kernel writes itself.
var reserved = map[string]bool{"id": true, "create_time": true, "create_user_id": true, "update_time": true,
	"update_user_id": true, "is_delete": true, "delete_key": true}

// compile checks r against its schema and resolves every field.
func compile(r Resource) (*spec, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("resource %q: "+format, append([]any{r.Name}, args...)...)
	}
	if !nameRE.MatchString(r.Name) {
		return nil, fail("name must be lower-case letters, digits and '-' (at most 48)")
	}
	if !pathRE.MatchString(r.Path) || strings.HasPrefix(r.Path, "/sys/") || strings.HasPrefix(r.Path, "/auth/") {
		return nil, fail("path %q must be lower-case segments below /api/v1, outside /sys and /auth", r.Path)
	}
	if r.Schema == nil {
		return nil, fail("no ent schema")
	}
	if r.Ops == 0 {
		r.Ops = All
	}
	if r.MaxImportRows <= 0 {
		r.MaxImportRows = 5000
	}
	if r.Label.ZH == "" || r.Label.EN == "" {
		return nil, fail("the label needs both languages")
	}
	s := &spec{Resource: r, byName: map[string]*field{}, columns: map[string]entfield.Type{}, base: "/api/v1" + r.Path}
	table, descs, err := schemaFields(r.Schema)
	if err != nil {
		return nil, fail("%v", err)
	}
	s.table = table
	byCol := map[string]*entfield.Descriptor{}
	for _, d := range descs {
		byCol[d.StorageKey] = d
		s.columns[d.StorageKey] = d.Info.Type
	}
	for c := range reserved {
		if _, ok := byCol[c]; !ok {
			return nil, fail("table %s lacks column %s: embed schema.IDMixin, AuditMixin and SoftDeleteMixin", table, c)
		}
	}
	if len(r.Fields) == 0 {
		return nil, fail("no fields")
	}
	for i := range r.Fields {
		f := &field{Field: r.Fields[i]}
		if f.Name == "" || strings.ContainsAny(f.Name, " _-.") || !unicode.IsLower(rune(f.Name[0])) {
			return nil, fail("field %q: the name is the camelCase JSON name", f.Name)
		}
		if f.Label.ZH == "" || f.Label.EN == "" {
			return nil, fail("field %s: the label needs both languages", f.Name)
		}
		if _, dup := s.byName[strings.ToLower(f.Name)]; dup {
			return nil, fail("field %s declared twice", f.Name)
		}
		f.col = f.Column
		if f.col == "" {
			f.col = snake(f.Name)
		}
		d, ok := byCol[f.col]
		if !ok {
			return nil, fail("field %s: the schema has no column %s", f.Name, f.col)
		}
		if f.col == "id" || f.col == "is_delete" || f.col == "delete_key" || f.col == "create_user_id" || f.col == "update_user_id" {
			return nil, fail("field %s: column %s is the kernel's", f.Name, f.col)
		}
		if reserved[f.col] && (f.Form || f.Required || f.Filter == Contains) {
			return nil, fail("field %s: column %s is written by the kernel (read-only, list and range filter only)", f.Name, f.col)
		}
		if reserved[f.col] {
			f.ReadOnly = true
		}
		f.kind, f.size, f.null, f.hasDefault = d.Info.Type, d.Size, d.Optional, constDefault(d.Default)
		if err := f.resolveType(); err != nil {
			return nil, fail("field %s: %v", f.Name, err)
		}
		if !f.null && !f.Required && !f.ReadOnly && !constDefault(d.Default) && f.Form {
			return nil, fail("field %s: column %s is NOT NULL without a default: make it Required or Optional()", f.Name, f.col)
		}
		s.fields = append(s.fields, f)
		s.byName[strings.ToLower(f.Name)] = f
	}
	// Columns NOT NULL without a default that no form field writes would
	// make every create fail.
	for _, d := range descs {
		if reserved[d.StorageKey] || d.Optional || constDefault(d.Default) {
			continue
		}
		f := s.column(d.StorageKey)
		if f == nil || !f.Form || f.ReadOnly {
			return nil, fail("column %s is NOT NULL without a default and no form field writes it", d.StorageKey)
		}
	}
	if r.Org != "" {
		f := s.byName[strings.ToLower(r.Org)]
		if f == nil || f.Type != Org {
			return nil, fail("Org %q must name a field of type org", r.Org)
		}
		s.org = f
	}
	keys := r.Key
	if len(keys) == 0 {
		for _, f := range s.fields {
			if f.Unique {
				keys = append(keys, f.Name)
			}
		}
	}
	for _, k := range keys {
		f := s.byName[strings.ToLower(k)]
		if f == nil || !f.Form {
			return nil, fail("key %q must name a form field", k)
		}
		s.key = append(s.key, f)
	}
	if r.Ops&OpImport != 0 && r.Ops&OpCreate == 0 {
		return nil, fail("import needs create")
	}
	if r.Menu.ID != 0 && r.Menu.ID < 1000 {
		return nil, fail("menu ids below 1000 are the kernel's")
	}
	s.codes = s.permissionCodes()
	return s, nil
}

func (s *spec) column(col string) *field {
	for _, f := range s.fields {
		if f.col == col {
			return f
		}
	}
	return nil
}

// resolveType checks f.Type against the column, or derives it.
func (f *field) resolveType() error {
	k := f.kind
	isInt := k >= entfield.TypeInt8 && k <= entfield.TypeUint64 || k == entfield.TypeInt
	isFloat := k == entfield.TypeFloat64 || k == entfield.TypeFloat32
	want := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("type %s needs %s, not %s", f.Type, what, k)
		}
		return nil
	}
	var err error
	switch f.Type {
	case "":
		switch {
		case k == entfield.TypeString && f.size >= math.MaxInt32:
			f.Type = TextArea
		case k == entfield.TypeString:
			f.Type = String
		case isInt:
			f.Type = Int
		case isFloat:
			f.Type = Decimal
		case k == entfield.TypeBool:
			f.Type = Bool
		case k == entfield.TypeTime:
			f.Type = DateTime
		default:
			return fmt.Errorf("column type %s is not supported", k)
		}
	case String, TextArea, Dict:
		err = want(k == entfield.TypeString, "a string column")
	case Int:
		err = want(isInt, "an integer column")
	case Org:
		err = want(k == entfield.TypeInt64, "an int64 column")
	case Decimal:
		err = want(isFloat, "a float column")
	case Bool:
		err = want(k == entfield.TypeBool, "a bool column")
	case Date, DateTime:
		err = want(k == entfield.TypeTime, "a time column")
	default:
		return fmt.Errorf("unknown type %q", f.Type)
	}
	if err != nil {
		return err
	}
	if f.Type == Dict && f.Dict == "" {
		return fmt.Errorf("a dict field names its dictionary (Dict)")
	}
	if f.Type == Decimal && f.Scale == 0 {
		f.Scale = 2
	}
	if f.Scale < 0 || f.Scale > 8 {
		return fmt.Errorf("scale %d out of 0-8", f.Scale)
	}
	if (f.Type == String || f.Type == Dict) && f.Max == nil && f.size > 0 && f.size < math.MaxInt32 {
		f.Max = N(float64(f.size))
	}
	if f.Type == String && f.size == 0 && f.Max == nil {
		f.Max = N(255) // ent's default varchar size
	}
	switch f.Filter {
	case "", Eq, Range:
	case Contains:
		if f.Type != String && f.Type != TextArea {
			return fmt.Errorf("a contains filter needs a string field")
		}
	default:
		return fmt.Errorf("unknown filter %q", f.Filter)
	}
	if f.Filter == Range && f.Type != Int && f.Type != Decimal && f.Type != Date && f.Type != DateTime {
		return fmt.Errorf("a range filter needs a number or a time")
	}
	if f.Sortable && (f.Type == TextArea) {
		return fmt.Errorf("a text field is not sortable")
	}
	return nil
}

// schemaFields returns the table name and every field of an ent schema,
// its mixins' first, with StorageKey set to the column.
func schemaFields(sc ent.Interface) (string, []*entfield.Descriptor, error) {
	table := ""
	for _, a := range sc.Annotations() {
		if ea, ok := a.(entsql.Annotation); ok && ea.Table != "" {
			table = ea.Table
		}
		if ea, ok := a.(*entsql.Annotation); ok && ea != nil && ea.Table != "" {
			table = ea.Table
		}
	}
	if table == "" {
		return "", nil, fmt.Errorf("the schema has no entsql.Annotation{Table: ...}")
	}
	if strings.HasPrefix(table, "sys_") {
		return "", nil, fmt.Errorf("table %s: sys_ tables are the kernel's", table)
	}
	var all []ent.Field
	for _, m := range sc.Mixin() {
		all = append(all, m.Fields()...)
	}
	all = append(all, sc.Fields()...)
	out := make([]*entfield.Descriptor, 0, len(all))
	seen := map[string]bool{}
	for _, f := range all {
		d := f.Descriptor()
		if d.Err != nil {
			return "", nil, fmt.Errorf("field %s: %w", d.Name, d.Err)
		}
		if d.StorageKey == "" {
			d.StorageKey = d.Name
		}
		if seen[d.StorageKey] {
			return "", nil, fmt.Errorf("column %s declared twice", d.StorageKey)
		}
		seen[d.StorageKey] = true
		out = append(out, d)
	}
	return table, out, nil
}

// constDefault reports whether a schema default is a constant, which the
// table's column carries (database.TablesOf); a function default (such as
// time.Now) is the writer's business, and a resource writes none.
func constDefault(v any) bool {
	switch v.(type) {
	case bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}

// snake is the snake_case form of a camelCase name ("orgId" → "org_id").
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// permissionCodes are the codes of the served operations, derived from
// the routes as every route's code is.
func (s *spec) permissionCodes() map[string]string {
	one := func(method, path string) string { return route.PermissionCode(method, s.base+path) }
	all := map[Ops]string{
		OpPage:        one("GET", "/page"),
		OpDetail:      one("GET", "/{id}"),
		OpCreate:      one("POST", ""),
		OpUpdate:      one("PUT", "/{id}"),
		OpDelete:      one("DELETE", "/{id}"),
		OpBatchDelete: one("POST", "/batch-delete"),
		OpExport:      one("GET", "/export"),
		OpImport:      one("POST", "/import/commit"),
		OpRecycle:     route.PermissionCode("GET", "/api/v1/sys/recycle/{type}/page"), // the bin's own code
	}
	out := map[string]string{}
	for _, o := range opNames {
		if s.Ops&o.op != 0 {
			out[o.name] = all[o.op]
		}
	}
	return out
}

func (s *spec) has(op Ops) bool { return s.Ops&op != 0 }
