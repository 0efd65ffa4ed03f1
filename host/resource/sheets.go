package resource

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/spreadsheet"
)

// uploadMaxKey is the upload size limit imports share with the file area.
const uploadMaxKey = "sys.upload.maxSizeMb"

func (f *field) title(lang string) string {
	if lang == "en-US" {
		return f.Label.EN
	}
	return f.Label.ZH
}

// exportFields are the list fields, or those the columns query names.
func (sv *service) exportFields(csv string) ([]*field, error) {
	var all []*field
	for _, f := range sv.s.fields {
		if f.List || f.Form {
			all = append(all, f)
		}
	}
	return spreadsheet.Columns(csv, all, func(f *field) string { return f.Name })
}

// dictLabels maps a Dict field's values to labels (and back).
func (sv *service) dictLabels(ctx context.Context, f *field) (map[string]string, map[string]string, error) {
	items, err := sv.dict.Items(ctx, f.Dict)
	if err != nil {
		return nil, nil, err
	}
	byValue, byLabel := map[string]string{}, map[string]string{}
	for _, it := range items {
		byValue[it.Value] = it.Label
		byLabel[it.Label] = it.Value
	}
	return byValue, byLabel, nil
}

func (sv *service) mountExport(g *route.Group) {
	var filters []string
	for _, f := range sv.s.fields {
		switch f.Filter {
		case Eq, Contains:
			filters = append(filters, f.Name)
		case Range:
			filters = append(filters, f.Name+"From", f.Name+"To")
		}
	}
	g.Get("/export", route.Permission, sv.exportHandler).Doc("Export "+sv.s.Label.EN+" (xlsx)", nil, nil).
		Queries(append(filters, "columns")...).OpLog = true
}

// exportHandler streams the rows matching the filters within the scope,
// newest first, with the titles of the caller's language and dictionary
// labels; more than sys.export.maxRows rows is 46012.
func (sv *service) exportHandler(c fiber.Ctx) error {
	who, err := sv.scopes.RequestCaller(c)
	if err != nil {
		return err
	}
	f, err := sv.filterOf(c)
	if err != nil {
		return err
	}
	cols, err := sv.exportFields(request.Query(c, "columns"))
	if err != nil {
		return err
	}
	ctx := c.Context()
	max, err := sv.d.Settings.Int(ctx, spreadsheet.KeyExportMaxRows)
	if err != nil {
		return err
	}
	where := sv.st.where(who, f)
	cq, args := sv.st.b().Select(sql.Count("*")).From(sql.Table(sv.s.table)).Where(where).Query()
	var n int
	if err := queryInt(ctx, sv.d.Client, cq, args, &n); err != nil {
		return err
	}
	if n > max {
		return errcode.New(errcode.ExportRowLimitExceeded).With("max", max).With("total", n)
	}
	lang := request.Language(c)
	titles := make([]string, len(cols))
	widths := make([]float64, len(cols))
	labels := make([]map[string]string, len(cols))
	for i, fd := range cols {
		titles[i], widths[i] = fd.title(lang), 18
		if fd.Type == Dict {
			if labels[i], _, err = sv.dictLabels(ctx, fd); err != nil {
				return err
			}
		}
	}
	cells := make([]any, len(cols))
	next := func(last *row) ([]*row, error) {
		w := where
		if last != nil {
			w = sql.And(where, sql.Or(sql.LT("create_time", last.createTime),
				sql.And(sql.EQ("create_time", last.createTime), sql.LT("id", last.id))))
		}
		q, args := sv.st.b().Select(sv.st.selectColumns()...).From(sql.Table(sv.s.table)).Where(w).
			OrderBy(sql.Desc("create_time"), sql.Desc("id")).Limit(spreadsheet.ExportBatch).Query()
		rs, err := sv.d.Client.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		rows, err := sv.st.scan(rs)
		out := make([]*row, len(rows))
		for i := range rows {
			out[i] = &rows[i]
		}
		return out, err
	}
	emit := func(rows []*row, put func([]any) error) error {
		plain := make([]row, len(rows))
		for i, r := range rows {
			plain[i] = *r
		}
		items, err := sv.items(ctx, plain)
		if err != nil {
			return err
		}
		for j, r := range rows {
			for i, fd := range cols {
				cells[i] = sv.cell(fd, r.values, items[j], labels[i])
			}
			if err := put(cells); err != nil {
				return err
			}
		}
		return nil
	}
	write, done, err := spreadsheet.Export(titles, widths, next, emit)
	if err != nil {
		return err
	}
	return spreadsheet.Send(c, sv.s.Name+".xlsx", write, done)
}

// cell is the exported value of a field: labels for dictionaries and
// organisations, numbers as numbers, the rest as text.
func (sv *service) cell(f *field, values map[string]any, it Item, labels map[string]string) any {
	if f.col == "create_time" {
		return it["createTime"]
	}
	if f.col == "update_time" {
		if v, ok := it["updateTime"].(*string); ok && v != nil {
			return *v
		}
		return ""
	}
	v := values[f.col]
	switch f.Type {
	case Dict:
		if s, ok := v.(string); ok {
			if l, ok := labels[s]; ok {
				return l
			}
			return s
		}
		return ""
	case Org:
		if n, ok := it[orgNameKey(f.Name)].(*string); ok && n != nil {
			return *n
		}
		return f.text(v)
	case Int:
		if x, ok := v.(int64); ok {
			return x
		}
	case Decimal:
		if x, ok := v.(float64); ok {
			return round(x, f.Scale)
		}
	}
	return f.text(v)
}

// ---- import ----

func (sv *service) mountImport(g *route.Group, who bind.Caller[datascope.Caller]) {
	en := sv.s.Label.EN
	g.Get("/import/template", route.Permission, sv.templateHandler).Doc(en+" import template (xlsx)", nil, nil)
	g.Post("/import/preview", route.Permission, sv.previewHandler).Doc("Preview an import of "+en+" (multipart file)", nil, Preview{})
	g.Post("/import/commit", route.Permission, bind.Create(who, sv.Commit)).NeedsReauth().Doc("Commit an import of "+en, CommitInput{}, CommitResult{})
}

// importFields are the form fields, in order: the template's columns.
func (sv *service) importFields() []*field {
	var out []*field
	for _, f := range sv.s.fields {
		if f.Form && !f.ReadOnly {
			out = append(out, f)
		}
	}
	return out
}

func (sv *service) templateHandler(c fiber.Ctx) error {
	lang := request.Language(c)
	fields := sv.importFields()
	cols := make([]spreadsheet.Column, len(fields))
	example := make([]string, len(fields))
	var dicts []spreadsheet.Dict
	for i, f := range fields {
		cols[i] = spreadsheet.Column{Key: f.Name, Title: f.title(lang), Required: f.Required, DictTypeCode: f.Dict, Width: 18}
		if f.Type == Dict {
			_, byLabel, err := sv.dictLabels(c.Context(), f)
			if err != nil {
				return err
			}
			var labels []string
			for l := range byLabel {
				labels = append(labels, l)
			}
			if len(labels) > 0 {
				example[i] = labels[0]
				dicts = append(dicts, spreadsheet.Dict{Column: i, Labels: labels})
			}
		}
	}
	x, err := spreadsheet.Template(cols, example, dicts, 200)
	if err != nil {
		return err
	}
	return spreadsheet.Send(c, sv.s.Name+"-template.xlsx", func(w io.Writer) error { _, err := x.WriteTo(w); return err },
		func() { _ = x.Close() })
}

// RowError is one problem of an imported row.
type RowError struct {
	Field  string         `json:"field"`
	Code   errcode.Code   `json:"code"`
	MsgKey string         `json:"msgKey"`
	Args   map[string]any `json:"args,omitempty"`
}

// PreviewRow is one data row of an import.
type PreviewRow struct {
	Row    int            `json:"row"`
	Values map[string]any `json:"values"`
	Exists bool           `json:"exists"`
	Errors []RowError     `json:"errors"`
}

// Preview is the answer of an import preview.
type Preview struct {
	Total      int          `json:"total"`
	ErrorCount int          `json:"errorCount"`
	Existing   int          `json:"existing"`
	Rows       []PreviewRow `json:"rows"`
}

func (sv *service) previewHandler(c fiber.Ctx) error {
	who, err := sv.scopes.RequestCaller(c)
	if err != nil {
		return err
	}
	fh, err := c.FormFile("file")
	if err != nil || fh.Size == 0 {
		return errcode.New(errcode.FileEmpty)
	}
	if ext := strings.ToLower(filepath.Ext(fh.Filename)); ext != ".xlsx" {
		return errcode.New(errcode.FileExtNotAllowed).With("ext", ext)
	}
	ctx := c.Context()
	mb, err := sv.d.Settings.Int(ctx, uploadMaxKey)
	if err != nil {
		return err
	}
	if fh.Size > int64(mb)<<20 {
		return errcode.New(errcode.FileTooLarge).With("max", mb)
	}
	max, err := sv.d.Settings.Int(ctx, spreadsheet.KeyImportMaxRows)
	if err != nil {
		return err
	}
	if sv.s.MaxImportRows < max {
		max = sv.s.MaxImportRows
	}
	file, err := fh.Open()
	if err != nil {
		return request.Invalid("file")
	}
	defer func() { _ = file.Close() }()
	sheet, err := spreadsheet.ReadAt(file, fh.Size, max)
	if err != nil {
		return err
	}
	out, err := sv.preview(ctx, who, sheet, request.Language(c))
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

// preview maps the sheet's columns (by title in either language or by
// field name) and checks every row as a create would, marking rows whose
// key a live row holds.
func (sv *service) preview(ctx context.Context, who datascope.Caller, sheet *spreadsheet.Sheet, _ string) (Preview, error) {
	fields := sv.importFields()
	at := make([]int, len(fields))
	for i, f := range fields {
		at[i] = -1
		for j, h := range sheet.Headers {
			h = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(h), "*"))
			h = strings.TrimSpace(strings.TrimSuffix(h, "*"))
			if strings.EqualFold(h, f.Name) || h == f.Label.ZH || strings.EqualFold(h, f.Label.EN) {
				at[i] = j
				break
			}
		}
		if at[i] < 0 && f.Required {
			return Preview{}, errcode.New(errcode.ImportColumnMissing).With("column", f.title("en-US"))
		}
	}
	labels := make([]map[string]string, len(fields))
	for i, f := range fields {
		if f.Type == Dict {
			_, byLabel, err := sv.dictLabels(ctx, f)
			if err != nil {
				return Preview{}, err
			}
			labels[i] = byLabel
		}
	}
	out := Preview{Rows: make([]PreviewRow, 0, len(sheet.Rows))}
	seen := map[string]int{}
	for _, r := range sheet.Rows {
		pr := PreviewRow{Row: r.Number, Values: map[string]any{}, Errors: []RowError{}}
		values := map[string]any{}
		for i, f := range fields {
			raw := ""
			if at[i] >= 0 && at[i] < len(r.Cells) {
				raw = r.Cells[at[i]]
			}
			if f.Type == Dict && labels[i] != nil {
				if v, ok := labels[i][strings.TrimSpace(raw)]; ok {
					raw = v
				}
			}
			v, err := f.parseText(raw)
			if err == nil && (v != nil || f.Required) {
				err = f.check(v)
			}
			if err != nil {
				pr.Errors = append(pr.Errors, rowError(f.Name, err))
				continue
			}
			if v != nil {
				values[f.col] = v
				pr.Values[f.Name] = f.wire(v)
			}
		}
		if len(pr.Errors) == 0 {
			if err := sv.admit(ctx, who, values); err != nil {
				pr.Errors = append(pr.Errors, rowError(fieldOf(err), err))
			}
		}
		if len(pr.Errors) == 0 && len(sv.s.key) > 0 {
			k := sv.keyText(values)
			if first, dup := seen[k]; dup {
				pr.Errors = append(pr.Errors, RowError{Field: sv.s.key[0].Name, Code: errcode.ImportDuplicateInFile,
					MsgKey: "error.import.duplicateInFile", Args: map[string]any{"row": first}})
			} else {
				seen[k] = r.Number
				id, err := sv.st.keyMatch(ctx, sv.d.Client, sv.s.key, values, 0)
				if err != nil {
					return Preview{}, err
				}
				pr.Exists = id != 0
			}
		}
		if len(pr.Errors) > 0 {
			out.ErrorCount++
		}
		if pr.Exists {
			out.Existing++
		}
		out.Rows = append(out.Rows, pr)
	}
	out.Total = len(out.Rows)
	return out, nil
}

func (sv *service) keyText(values map[string]any) string {
	var b strings.Builder
	for _, f := range sv.s.key {
		b.WriteString(f.text(values[f.col]))
		b.WriteByte(0)
	}
	return b.String()
}

func fieldOf(err error) string {
	if e := (*errcode.Error)(nil); errors.As(err, &e) {
		if f, ok := e.Args["field"].(string); ok {
			return f
		}
	}
	return ""
}

func rowError(field string, err error) RowError {
	re := RowError{Field: field, Code: errcode.RequestInvalid, MsgKey: "error.request.invalid"}
	if e := (*errcode.Error)(nil); errors.As(err, &e) {
		re.Code, re.Args = e.Code, e.Args
		re.MsgKey = ""
	}
	return re
}

// CommitInput is the body of an import commit: the rows (as previewed,
// possibly edited) and what to do with a row whose key a live row holds.
type CommitInput struct {
	Rows []struct {
		Row    int            `json:"row"`
		Values map[string]any `json:"values"`
	} `json:"rows"`
	// Strategy: "skip" (default) keeps the live row, "overwrite" updates
	// it, "fail" refuses the whole import (42036).
	Strategy string `json:"strategy"`
}

// CommitResult counts what an import did.
type CommitResult struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
	Skipped int `json:"skipped"`
}

// Commit imports rows: each is checked again as a create (or, for an
// existing key with Overwrite, an update); the first failing row stops the
// import with its error (args row) and nothing is written — all rows are
// written in one transaction.
func (sv *service) Commit(ctx context.Context, who datascope.Caller, in CommitInput) (CommitResult, error) {
	var res CommitResult
	switch in.Strategy {
	case "", "skip", "overwrite", "fail":
	default:
		return res, request.Invalid("strategy")
	}
	if len(in.Rows) == 0 || len(in.Rows) > sv.s.MaxImportRows {
		return res, request.Invalid("rows")
	}
	fields := sv.importFields()
	type prepared struct {
		row    int
		values map[string]any
	}
	rows := make([]prepared, 0, len(in.Rows))
	seen := map[string]int{}
	for _, r := range in.Rows {
		values := map[string]any{}
		for _, f := range fields {
			var raw any
			for k, v := range r.Values {
				if strings.EqualFold(k, f.Name) {
					raw = v
				}
			}
			v, err := f.fromAny(raw)
			if err == nil && (v != nil || f.Required) {
				err = f.check(v)
			}
			if err != nil {
				return res, withRow(err, r.Row)
			}
			if v != nil {
				values[f.col] = v
			}
		}
		if err := sv.admit(ctx, who, values); err != nil {
			return res, withRow(err, r.Row)
		}
		if sv.s.org != nil && !who.Scope.Unrestricted && values[sv.s.org.col] == nil {
			return res, withRow(errcode.New(errcode.OrgOutOfScope).With("field", sv.s.org.Name), r.Row)
		}
		if len(sv.s.key) > 0 {
			k := sv.keyText(values)
			if first, dup := seen[k]; dup {
				return res, errcode.New(errcode.ImportDuplicateInFile).With("row", r.Row).With("first", first)
			}
			seen[k] = r.Row
		}
		rows = append(rows, prepared{r.Row, values})
	}
	now := sv.now()
	err := sv.inTx(ctx, func(tx *ent.Tx) error {
		res = CommitResult{}
		for _, r := range rows {
			id, err := sv.st.keyMatch(ctx, tx, sv.s.key, r.values, 0)
			if err != nil {
				return err
			}
			if id != 0 {
				switch in.Strategy {
				case "fail":
					return withRow(sv.keyExists(sv.s.key[0].Name), r.row)
				case "overwrite":
					existing, err := sv.st.one(ctx, tx, who, id, false)
					if err != nil {
						return err
					}
					if existing == nil { // a row outside the scope holds the key
						return withRow(sv.keyExists(sv.s.key[0].Name), r.row)
					}
					if err := sv.unique(ctx, tx, r.values, id); err != nil {
						return withRow(err, r.row)
					}
					if _, err := sv.st.update(ctx, tx, id, who.UserID, now, r.values); err != nil {
						return err
					}
					res.Updated++
				default:
					res.Skipped++
				}
				continue
			}
			if err := sv.unique(ctx, tx, r.values, 0); err != nil {
				return withRow(err, r.row)
			}
			if err := sv.st.insert(ctx, tx, sv.d.NewID(), who.UserID, now, r.values); err != nil {
				return err
			}
			res.Created++
		}
		return nil
	})
	if err != nil {
		return CommitResult{}, sv.uniqueErr(err)
	}
	return res, nil
}

func withRow(err error, row int) error {
	if e := (*errcode.Error)(nil); errors.As(err, &e) {
		return e.With("row", row)
	}
	return err
}

// fromAny reads a committed JSON value (as the preview answered it).
func (f *field) fromAny(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return f.parseText(x)
	case bool:
		if f.Type != Bool {
			return nil, invalid(f, "type")
		}
		return x, nil
	case float64:
		switch f.Type {
		case Int, Org:
			if x != float64(int64(x)) {
				return nil, invalid(f, "type")
			}
			return int64(x), nil
		case Decimal:
			return round(x, f.Scale), nil
		}
	}
	return nil, invalid(f, "type")
}
