package scaffold

import (
	"fmt"
	"net/url"
	"strconv"
)

// model is what the templates see.
type model struct {
	Package, Type, Resource, Path, Table, ImportPath string
	Label                                            string
	MenuID                                           int64
	Fields                                           []fieldModel
	Dicts                                            []dictModel
	Org                                              *fieldModel // the org field
	Unique                                           *fieldModel // the first unique field
	Filter                                           *fieldModel // the first filter field
	Update                                           *fieldModel // the field the update test changes
	HasTime                                          bool        // a date or datetime field (time is imported by the test)
}

type fieldModel struct {
	Field
	JSON, Label, LabelZH string
	Ent                  string // ent field expression
	ResType              string // resource.Type expression, "" when derived
	DictConst            string
	FilterConst          string // resource.Eq, ...
	Sortable             bool
	// Test values: Go literals of the JSON bodies of rows 1 and 2 and of
	// the update, and of what the detail answers (decoded into any).
	V1, V2, V3, Upd, W1, WUpd string
	// Query is the page query selecting row 1 only.
	Query string
	// Loose: the answer is compared by presence only (datetime: its
	// wire format follows the server's zone).
	Loose bool
}

type dictModel struct {
	Const, Code, Name string
	ID                int64
}

func (s *Spec) model() model {
	m := model{
		Package: s.Name, Type: upperFirst(s.Name), Resource: s.Name, Path: "/" + s.Name,
		Table: s.TableName(), ImportPath: s.ImportPath, Label: title(s.Name), MenuID: s.MenuID,
	}
	for _, f := range s.Fields {
		fm := fieldModel{Field: f, JSON: camel(f.Column), Label: title(f.Column), LabelZH: f.LabelZH}
		if fm.LabelZH == "" {
			fm.LabelZH = fm.Label
		}
		opt := ""
		if !f.Required {
			opt = ".Optional()"
		}
		col := strconv.Quote(f.Column)
		switch f.Type {
		case String:
			fm.Ent = "field.String(" + col + ").MaxRuneLen(100)" + opt
			fm.V1, fm.V2, fm.V3, fm.Upd = q(f.Column+"-1"), q(f.Column+"-2"), q(f.Column+"-3"), q(f.Column+"-1b")
			fm.Sortable = true
		case Text:
			fm.Ent = "field.Text(" + col + ")" + opt
			fm.V1, fm.V2, fm.V3, fm.Upd = q(f.Column+" 1"), q(f.Column+" 2"), q(f.Column+" 3"), q(f.Column+" 1b")
		case Int:
			fm.Ent = "field.Int64(" + col + ").Default(0)"
			fm.V1, fm.V2, fm.V3, fm.Upd = "10", "20", "30", "11"
			fm.Sortable = true
		case Decimal:
			fm.Ent = "field.Float(" + col + ")" + opt
			fm.V1, fm.V2, fm.V3, fm.Upd = "1.5", "2.25", "4.5", "3.75"
			fm.Sortable = true
		case Bool:
			fm.Ent = "field.Bool(" + col + ").Default(false)"
			fm.V1, fm.V2, fm.V3, fm.Upd = "true", "false", "false", "false"
		case Date:
			fm.Ent = "field.Time(" + col + ")" + opt
			fm.ResType = "resource.Date"
			fm.V1, fm.V2, fm.V3, fm.Upd = q("2026-03-05"), q("2026-04-06"), q("2026-06-08"), q("2026-05-07")
			fm.Sortable = true
		case DateTime:
			fm.Ent = "field.Time(" + col + ")" + opt
			fm.ResType = "resource.DateTime"
			fm.V1, fm.V2, fm.V3, fm.Upd = q("2026-03-05T10:00:00Z"), q("2026-04-06T10:00:00Z"), q("2026-06-08T10:00:00Z"), q("2026-05-07T10:00:00Z")
			fm.Sortable, fm.Loose = true, true
		case Dict:
			fm.Ent = "field.String(" + col + ").MaxRuneLen(32)" + opt
			fm.ResType = "resource.Dict"
			fm.DictConst = "Dict" + upperFirst(camel(f.Column))
			fm.V1, fm.V2, fm.V3, fm.Upd = q("a"), q("b"), q("b"), q("b")
			m.Dicts = append(m.Dicts, dictModel{Const: fm.DictConst, Code: f.Dict, Name: title(f.Column), ID: s.MenuID + int64(10*len(m.Dicts))})
		case Org:
			fm.Ent = "field.Int64(" + col + ")" + opt
			fm.ResType = "resource.Org"
			fm.V1, fm.V2, fm.V3 = "4", "5", "5"
		}
		fm.W1, fm.WUpd = want(f.Type, fm.V1), want(f.Type, fm.Upd)
		raw1, _ := strconv.Unquote(fm.V1)
		if raw1 == "" {
			raw1 = fm.V1
		}
		switch f.Filter {
		case "eq", "contains":
			fm.FilterConst = map[string]string{"eq": "resource.Eq", "contains": "resource.Contains"}[f.Filter]
			fm.Query = url.Values{fm.JSON: {raw1}}.Encode()
		case "range":
			fm.FilterConst = "resource.Range"
			fm.Query = url.Values{fm.JSON + "From": {raw1}, fm.JSON + "To": {raw1}}.Encode()
		}
		if f.Type == Date || f.Type == DateTime {
			m.HasTime = true
		}
		m.Fields = append(m.Fields, fm)
	}
	for i := range m.Fields {
		f := &m.Fields[i]
		if f.Type == Org && m.Org == nil {
			m.Org = f
		}
		if f.Unique && m.Unique == nil {
			m.Unique = f
		}
		if f.Filter != "" && m.Filter == nil {
			m.Filter = f
		}
		if f.Type != Org && m.Update == nil {
			m.Update = f
		}
	}
	return m
}

func q(s string) string { return strconv.Quote(s) }

// want is the Go literal of what a JSON value decodes to (numbers are
// float64).
func want(t Type, v string) string {
	switch t {
	case Int, Decimal, Org:
		if v == "" {
			return ""
		}
		f, _ := strconv.ParseFloat(v, 64)
		return fmt.Sprintf("float64(%s)", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return v
}
