package user

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/spreadsheet"
)

// Import column keys (ImportRow.cells).
const (
	colAccount  = "account"
	colName     = "name"
	colNickname = "nickname"
	colPhone    = "phone"
	colEmail    = "email"
	colGender   = "gender"
	colOrg      = "orgName"
	colPosition = "positionName"
	colEnabled  = "enabled"
	colRoles    = "roleCodes"
)

// Dictionaries of the import's drop-down columns.
const (
	dictGender = "gender"
	dictStatus = "common_status"
)

// importColumns are the columns of the user import, in template order.
var importColumns = []spreadsheet.Column{
	{Key: colAccount, Title: "账号", Required: true, Hint: "登录账号，唯一，不含空格", Width: 18},
	{Key: colName, Title: "姓名", Required: true, Width: 14},
	{Key: colNickname, Title: "昵称", Width: 14},
	{Key: colPhone, Title: "手机号", Hint: "数字，可带 + 前缀", Width: 16},
	{Key: colEmail, Title: "邮箱", Width: 24},
	{Key: colGender, Title: "性别", DictTypeCode: dictGender, Width: 8},
	{Key: colOrg, Title: "机构", Hint: "机构名称或编码", Width: 18},
	{Key: colPosition, Title: "岗位", Hint: "岗位名称或编码", Width: 14},
	{Key: colEnabled, Title: "状态", DictTypeCode: dictStatus, Hint: "空为启用", Width: 8},
	{Key: colRoles, Title: "角色编码", Hint: "多个用逗号分隔", Width: 20},
}

// importExample is the template's example row.
var importExample = []string{"zhangsan", "张三", "小张", "13800000000", "zhangsan@example.com", "男", "", "", "启用", ""}

// Import strategies for accounts that exist (ImportCommitInput.strategy).
const (
	StrategySkip      = 0
	StrategyOverwrite = 1
	StrategyError     = 2
)

// CellError is one error of an import row: {columnKey, code, args?}.
type CellError struct {
	ColumnKey string         `json:"columnKey"`
	Code      errcode.Code   `json:"code"`
	Args      map[string]any `json:"args,omitempty"`
}

// ImportRow is the contract's ImportRow: the row number in the file, the
// cells by column key, and the row's errors.
type ImportRow struct {
	Index  int               `json:"index"`
	Cells  map[string]string `json:"cells"`
	Errors []CellError       `json:"errors"`
}

// ImportPreview is the contract's ImportPreview.
type ImportPreview struct {
	Headers      []string             `json:"headers"`
	Mapping      map[string]string    `json:"mapping"`
	Columns      []spreadsheet.Column `json:"columns"`
	Rows         []ImportRow          `json:"rows"`
	Total        int                  `json:"total"`
	ErrorRows    int                  `json:"errorRows"`
	ColumnErrors []CellError          `json:"columnErrors"`
}

// ImportRowsInput is the body of validate and error-report.
type ImportRowsInput struct {
	Rows []ImportRow `json:"rows"`
}

// ImportCommitInput is the body of commit.
type ImportCommitInput struct {
	Rows     []ImportRow    `json:"rows"`
	Strategy *request.Int64 `json:"strategy"`
}

// ImportPassword is the generated initial password of one inserted user.
type ImportPassword struct {
	Index           int    `json:"index"`
	Account         string `json:"account"`
	InitialPassword string `json:"initialPassword"`
}

// ImportResult answers commit. Passwords (an addition to the contract,
// docs/reference/compatibility.md) are the generated initial passwords of the
// inserted users, reported this once (Cache-Control: no-store).
type ImportResult struct {
	Total     int              `json:"total"`
	Inserted  int              `json:"inserted"`
	Updated   int              `json:"updated"`
	Skipped   int              `json:"skipped"`
	Failed    int              `json:"failed"`
	Failures  []ImportRow      `json:"failures"`
	Passwords []ImportPassword `json:"passwords"`
}

// Importer implements the user import (host/spreadsheet for the files).
type Importer struct {
	s     *Service
	dicts *dict.Service
}

// NewImporter returns the import over the user service.
func NewImporter(s *Service, dicts *dict.Service) *Importer {
	return &Importer{s: s, dicts: dicts}
}

func (im *Importer) maxRows(ctx context.Context) (int, error) {
	return im.s.d.Settings.Int(ctx, spreadsheet.KeyImportMaxRows)
}

// ---- template ----

// choices is a dictionary column's offered labels and what they mean.
type choices struct {
	labels []string
	// values maps a label or a value (case-insensitive) to the value.
	values map[string]string
}

// defaults of the seeded dictionaries, used when a dictionary has no
// enabled items (as the user service's gender check does).
var dictDefaults = map[string][][2]string{
	dictGender: {{"男", "1"}, {"女", "2"}, {"未知", "0"}},
	dictStatus: {{"启用", "1"}, {"停用", "0"}},
}

func (im *Importer) choices(ctx context.Context, typeCode string) (choices, error) {
	items, err := im.dicts.Items(ctx, typeCode)
	if err != nil {
		return choices{}, err
	}
	c := choices{values: map[string]string{}}
	add := func(label, value string) {
		c.labels = append(c.labels, label)
		c.values[strings.ToLower(label)] = value
		c.values[strings.ToLower(value)] = value
	}
	for _, it := range items {
		add(it.Label, it.Value)
	}
	if len(items) == 0 {
		for _, p := range dictDefaults[typeCode] {
			add(p[0], p[1])
		}
	}
	return c, nil
}

// Template writes the import template: the headers, the dictionary
// columns as drop-downs, an example row.
func (im *Importer) Template(ctx context.Context) (func(io.Writer) error, func(), error) {
	max, err := im.maxRows(ctx)
	if err != nil {
		return nil, nil, err
	}
	var dicts []spreadsheet.Dict
	for i, c := range importColumns {
		if c.DictTypeCode == "" {
			continue
		}
		ch, err := im.choices(ctx, c.DictTypeCode)
		if err != nil {
			return nil, nil, err
		}
		dicts = append(dicts, spreadsheet.Dict{Column: i, Labels: ch.labels})
	}
	f, err := spreadsheet.Template(importColumns, importExample, dicts, max)
	if err != nil {
		return nil, nil, err
	}
	return func(w io.Writer) error { _, err := f.WriteTo(w); return err }, func() { _ = f.Close() }, nil
}

// ---- preview ----

// headerKey normalises a header for matching: trimmed, without the
// required mark, lower case.
func headerKey(h string) string {
	return strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(h), "*")))
}

// Preview reads an uploaded workbook, maps its headers to columns (by key
// or title; mappingJSON {header: key} overrides, "" ignores a header) and
// validates its rows. The workbook is read by spreadsheet.ReadAt (bounded
// whatever the file); the answer carries at most PreviewCellRunes
// characters of a header or cell (clip), the checks see all of it.
func (im *Importer) Preview(ctx context.Context, who datascope.Caller, file io.ReaderAt, size int64, mappingJSON string) (*ImportPreview, error) {
	override := map[string]string{}
	if strings.TrimSpace(mappingJSON) != "" {
		if err := json.Unmarshal([]byte(mappingJSON), &override); err != nil {
			return nil, request.Invalid("mapping")
		}
	}
	known := map[string]string{}
	for _, c := range importColumns {
		known[strings.ToLower(c.Key)] = c.Key
		known[strings.ToLower(c.Title)] = c.Key
	}
	for h, k := range override {
		if k != "" && !slices.ContainsFunc(importColumns, func(c spreadsheet.Column) bool { return c.Key == k }) {
			return nil, request.Invalid("mapping").With("header", h)
		}
	}
	max, err := im.maxRows(ctx)
	if err != nil {
		return nil, err
	}
	sheet, err := spreadsheet.ReadAt(file, size, max)
	if err != nil {
		return nil, err
	}
	p := &ImportPreview{Headers: sheet.Headers, Mapping: map[string]string{}, Columns: importColumns, ColumnErrors: []CellError{}}
	byIndex := make([]string, len(sheet.Headers))
	used := map[string]bool{}
	for i, h := range sheet.Headers {
		key, ok := override[h]
		if !ok {
			key = known[headerKey(h)]
		}
		if key == "" || used[key] {
			continue
		}
		used[key] = true
		byIndex[i] = key
		p.Mapping[h] = key
	}
	for _, c := range importColumns {
		if c.Required && !used[c.Key] {
			p.ColumnErrors = append(p.ColumnErrors, CellError{ColumnKey: c.Key, Code: errcode.ImportColumnMissing, Args: map[string]any{"title": c.Title}})
		}
	}
	rows := make([]ImportRow, len(sheet.Rows))
	for i, r := range sheet.Rows {
		cells := make(map[string]string, len(importColumns))
		for j, v := range r.Cells {
			if j < len(byIndex) && byIndex[j] != "" {
				cells[byIndex[j]] = v
			}
		}
		rows[i] = ImportRow{Index: r.Number, Cells: cells}
	}
	if len(p.ColumnErrors) > 0 {
		// Rows are checked once the required columns are mapped.
		for i := range rows {
			rows[i].Errors = []CellError{}
		}
		p.Rows, p.Total = rows, len(rows)
		clipPreview(p)
		return p, nil
	}
	checked, err := im.check(ctx, who, rows, -1)
	if err != nil {
		return nil, err
	}
	p.Rows, p.Total, p.ErrorRows = checked.rows, len(rows), checked.errorRows
	clipPreview(p)
	return p, nil
}

// PreviewCellRunes is the most of a header or cell a preview answers: a
// longer one is cut there and ends with PreviewEllipsis (it fails its
// column's length check anyway, which saw all of it). A workbook cell may
// hold 32 767 characters (host/spreadsheet); echoing them all back is what
// made a preview answer grow with the file.
const PreviewCellRunes = 256

// PreviewEllipsis marks a cut header or cell.
const PreviewEllipsis = "…"

func clip(s string) string {
	if len(s) <= PreviewCellRunes || utf8.RuneCountInString(s) <= PreviewCellRunes {
		return s
	}
	return textclip.Runes(s, PreviewCellRunes) + PreviewEllipsis
}

// clipPreview cuts the headers, the mapping's headers and the cells of a
// preview to PreviewCellRunes. A cut cell its checks let through (a long
// list of role codes) gets a 46008 (args max) on its column: what the
// client would send back to commit is no longer the file's value.
func clipPreview(p *ImportPreview) {
	for i, h := range p.Headers {
		p.Headers[i] = clip(h)
	}
	mapping := make(map[string]string, len(p.Mapping))
	for h, k := range p.Mapping {
		mapping[clip(h)] = k
	}
	p.Mapping = mapping
	for i := range p.Rows {
		r := &p.Rows[i]
		for k, v := range r.Cells {
			c := clip(v)
			if c == v {
				continue
			}
			r.Cells[k] = c
			if slices.ContainsFunc(r.Errors, func(e CellError) bool { return e.ColumnKey == k }) {
				continue
			}
			if len(r.Errors) == 0 && len(p.ColumnErrors) == 0 {
				p.ErrorRows++
			}
			r.Errors = append(r.Errors, CellError{ColumnKey: k, Code: errcode.ImportCellFormatInvalid, Args: map[string]any{"max": PreviewCellRunes}})
		}
	}
}

// Validate checks rows sent back by the client (after edits).
func (im *Importer) Validate(ctx context.Context, who datascope.Caller, in ImportRowsInput) (*ImportPreview, error) {
	if err := im.bounded(ctx, in.Rows); err != nil {
		return nil, err
	}
	checked, err := im.check(ctx, who, in.Rows, -1)
	if err != nil {
		return nil, err
	}
	headers := make([]string, len(importColumns))
	mapping := make(map[string]string, len(importColumns))
	for i, c := range importColumns {
		headers[i] = c.Title
		mapping[c.Title] = c.Key
	}
	return &ImportPreview{
		Headers: headers, Mapping: mapping, Columns: importColumns, Rows: checked.rows,
		Total: len(in.Rows), ErrorRows: checked.errorRows, ColumnErrors: []CellError{},
	}, nil
}

// bounded refuses an empty row list (46002) or one above the row limit
// (46003).
func (im *Importer) bounded(ctx context.Context, rows []ImportRow) error {
	if len(rows) == 0 {
		return errcode.New(errcode.ImportFileEmpty)
	}
	max, err := im.maxRows(ctx)
	if err != nil {
		return err
	}
	if len(rows) > max {
		return errcode.New(errcode.ImportRowLimitExceeded).With("max", max)
	}
	return nil
}

// ---- checking ----

// planned is a checked row: what it would write.
type planned struct {
	account, name                  string
	nickname, phone, email, gender *string
	orgID, positionID              *int64
	enabled                        bool
	roleIDs                        []int64
	hasRoles                       bool
	present                        map[string]bool
	existing                       *ent.SysUser
}

type checked struct {
	rows      []ImportRow
	plans     []planned
	errorRows int
}

// ref is an org or a position as the import names it.
type ref struct {
	byCode map[string]int64
	byName map[string][]int64
}

func (r ref) find(v string) (int64, bool) {
	if id, ok := r.byCode[strings.ToLower(v)]; ok {
		return id, true
	}
	if ids := r.byName[strings.ToLower(v)]; len(ids) == 1 {
		return ids[0], true
	}
	return 0, false
}

type roleRef struct {
	id        int64
	grantable bool
}

// context of one check: the dictionaries, orgs, positions, roles and the
// accounts of the rows that exist.
type checkContext struct {
	gender, status choices
	orgs, posts    ref
	roles          map[string]roleRef
	existing       map[string]*ent.SysUser
	// phones are the live holders of the file's phones (phone -> user id).
	phones map[string]int64
	// holds caches the authority verdict per (org, roles).
	holds map[string]*errcode.Error
}

func (im *Importer) load(ctx context.Context, rows []ImportRow) (*checkContext, error) {
	c := im.s.d.Client
	cc := &checkContext{roles: map[string]roleRef{}, existing: map[string]*ent.SysUser{}, phones: map[string]int64{}, holds: map[string]*errcode.Error{}}
	var err error
	if cc.gender, err = im.choices(ctx, dictGender); err != nil {
		return nil, err
	}
	if cc.status, err = im.choices(ctx, dictStatus); err != nil {
		return nil, err
	}
	orgs, err := c.SysOrg.Query().Where(sysorg.IsDelete(false)).Select(sysorg.FieldID, sysorg.FieldName, sysorg.FieldCode).All(ctx)
	if err != nil {
		return nil, err
	}
	cc.orgs = ref{byCode: map[string]int64{}, byName: map[string][]int64{}}
	for _, o := range orgs {
		if o.Code != "" {
			cc.orgs.byCode[strings.ToLower(o.Code)] = o.ID
		}
		cc.orgs.byName[strings.ToLower(o.Name)] = append(cc.orgs.byName[strings.ToLower(o.Name)], o.ID)
	}
	posts, err := c.SysPosition.Query().Where(sysposition.IsDelete(false)).Select(sysposition.FieldID, sysposition.FieldName, sysposition.FieldCode).All(ctx)
	if err != nil {
		return nil, err
	}
	cc.posts = ref{byCode: map[string]int64{}, byName: map[string][]int64{}}
	for _, p := range posts {
		if p.Code != "" {
			cc.posts.byCode[strings.ToLower(p.Code)] = p.ID
		}
		cc.posts.byName[strings.ToLower(p.Name)] = append(cc.posts.byName[strings.ToLower(p.Name)], p.ID)
	}
	roles, err := c.SysRole.Query().Where(sysrole.IsDelete(false)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range roles {
		cc.roles[strings.ToLower(r.Code)] = roleRef{id: r.ID, grantable: r.Enabled && r.IsDelegatable}
	}
	var norms []string
	for _, r := range rows {
		if a := strings.TrimSpace(r.Cells[colAccount]); validAccount(a) {
			norms = append(norms, schema.NormalizeAccount(a))
		}
	}
	for chunk := range slices.Chunk(norms, 500) {
		list, err := c.SysUser.Query().Where(sysuser.AccountNormIn(chunk...), sysuser.IsDelete(false)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, u := range list {
			cc.existing[u.AccountNorm] = u
		}
	}
	var phones []string
	for _, r := range rows {
		if p := strings.TrimSpace(r.Cells[colPhone]); p != "" {
			phones = append(phones, p)
		}
	}
	for chunk := range slices.Chunk(phones, 500) {
		list, err := c.SysUser.Query().Where(sysuser.PhoneIn(chunk...), sysuser.IsDelete(false)).
			Select(sysuser.FieldID, sysuser.FieldPhone).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, u := range list {
			if u.Phone != nil {
				cc.phones[*u.Phone] = u.ID
			}
		}
	}
	return cc, nil
}

func cellErr(key string, code errcode.Code, args map[string]any) CellError {
	return CellError{ColumnKey: key, Code: code, Args: args}
}

// check validates every row. strategy < 0 (preview, validate) reports an
// existing account as 46010; at commit Skip and Overwrite accept it and
// Overwrite checks that the caller may change that user.
func (im *Importer) check(ctx context.Context, who datascope.Caller, rows []ImportRow, strategy int) (*checked, error) {
	cc, err := im.load(ctx, rows)
	if err != nil {
		return nil, err
	}
	out := &checked{rows: make([]ImportRow, len(rows)), plans: make([]planned, len(rows))}
	seen, phones := map[string]int{}, map[string]int{}
	for i, r := range rows {
		cells := r.Cells
		if cells == nil {
			cells = map[string]string{}
		}
		row := ImportRow{Index: r.Index, Cells: cells, Errors: []CellError{}}
		p, errs := im.checkRow(ctx, who, cc, cells)
		if p.account != "" {
			norm := schema.NormalizeAccount(p.account)
			if first, dup := seen[norm]; dup {
				errs = append(errs, cellErr(colAccount, errcode.ImportDuplicateInFile, map[string]any{"row": first}))
			} else {
				seen[norm] = r.Index
				if u, ok := cc.existing[norm]; ok {
					p.existing = u
					if e := im.existingErr(ctx, who, u, p, strategy); e != nil {
						errs = append(errs, *e)
					}
				}
			}
		}
		if p.phone != nil && (p.existing == nil || strategy == StrategyOverwrite) {
			// A phone signs in by SMS: one live holder (40036), once per file.
			if first, dup := phones[*p.phone]; dup {
				errs = append(errs, cellErr(colPhone, errcode.ImportDuplicateInFile, map[string]any{"row": first}))
			} else {
				phones[*p.phone] = r.Index
				if holder, ok := cc.phones[*p.phone]; ok && (p.existing == nil || holder != p.existing.ID) {
					errs = append(errs, cellErr(colPhone, errcode.PhoneTaken, nil))
				}
			}
		}
		if len(errs) == 0 && (p.existing == nil || strategy == StrategyOverwrite) {
			if e := im.authority(ctx, who, cc, p); e != nil {
				errs = append(errs, *e)
			}
		}
		row.Errors = append(row.Errors, errs...) // [] (not null) for a row without errors
		if len(errs) > 0 {
			out.errorRows++
		}
		out.rows[i], out.plans[i] = row, p
	}
	return out, nil
}

// existingErr is the error of a row whose account exists, if any.
func (im *Importer) existingErr(ctx context.Context, who datascope.Caller, u *ent.SysUser, p planned, strategy int) *CellError {
	dup := cellErr(colAccount, errcode.ImportDuplicateInDb, nil)
	switch strategy {
	case StrategySkip:
		return nil
	case StrategyOverwrite:
		switch {
		case !who.Scope.ContainsUser(u.ID, u.OrgID):
			e := cellErr(colAccount, errcode.UserOutOfDataScope, nil)
			return &e
		case u.IsSuperAdmin:
			e := cellErr(colAccount, errcode.SuperAdminProtected, nil)
			return &e
		case u.ID == who.UserID:
			e := cellErr(colAccount, errcode.CannotOperateSelf, nil)
			return &e
		}
		if err := im.s.limits.Users(ctx, who, u.ID); err != nil {
			e := cellErr(colAccount, errcode.AuthorityExceeded, nil)
			return &e
		}
		return nil
	}
	return &dup
}

// authority is the 41006 check of what the row's user would hold, cached
// per (org, roles).
func (im *Importer) authority(ctx context.Context, who datascope.Caller, cc *checkContext, p planned) *CellError {
	if who.SuperAdmin {
		return nil
	}
	org := p.orgID
	roles := p.roleIDs
	if p.existing != nil {
		if !p.present[colOrg] {
			org = p.existing.OrgID
		}
		if !p.hasRoles {
			if sameID(org, p.existing.OrgID) {
				return nil // an overwrite that keeps the roles and the org holds what it held
			}
			// An org move with the current roles may widen an org-relative
			// scope.
			current, err := userRoleIDs(ctx, im.s.d.Client, p.existing.ID)
			if err != nil {
				ce := cellErr(colOrg, errcode.AuthorityExceeded, nil)
				return &ce
			}
			roles = current
		}
	}
	key := fmt.Sprint(org, roles)
	if org != nil {
		key = fmt.Sprint(*org, roles)
	}
	e, ok := cc.holds[key]
	if !ok {
		var id int64
		if p.existing != nil {
			id = p.existing.ID
		}
		err := im.s.limits.WouldHold(ctx, who, id, org, roles)
		if ec, isCode := errcode.As(err); isCode {
			e = ec
		} else if err != nil {
			e = errcode.New(errcode.AuthorityExceeded)
		}
		cc.holds[key] = e
	}
	if e == nil {
		return nil
	}
	ce := cellErr(colRoles, e.Code, nil)
	return &ce
}

func sameID(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// checkRow checks the cells of one row.
func (im *Importer) checkRow(_ context.Context, who datascope.Caller, cc *checkContext, cells map[string]string) (planned, []CellError) {
	var errs []CellError
	p := planned{present: map[string]bool{}, enabled: true}
	get := func(k string) string {
		v, ok := cells[k]
		if ok {
			p.present[k] = true
		}
		return strings.TrimSpace(v)
	}
	format := func(k string) { errs = append(errs, cellErr(k, errcode.ImportCellFormatInvalid, nil)) }
	opt := func(k string, max int, valid func(string) bool) *string {
		v := get(k)
		if v == "" {
			return nil
		}
		if utf8.RuneCountInString(v) > max || hasControl(v) || (valid != nil && !valid(v)) {
			format(k)
			return nil
		}
		return &v
	}
	p.account = get(colAccount)
	switch {
	case p.account == "":
		errs = append(errs, cellErr(colAccount, errcode.ImportCellRequired, nil))
	case !validAccount(p.account):
		format(colAccount)
		p.account = ""
	}
	p.name = get(colName)
	switch {
	case p.name == "":
		errs = append(errs, cellErr(colName, errcode.ImportCellRequired, nil))
	case utf8.RuneCountInString(p.name) > maxName || hasControl(p.name):
		format(colName)
	}
	p.nickname = opt(colNickname, maxNickname, nil)
	p.phone = opt(colPhone, maxPhone, validPhone)
	p.email = opt(colEmail, maxEmail, validEmail)
	if v := get(colGender); v != "" {
		if g, ok := cc.gender.values[strings.ToLower(v)]; ok {
			p.gender = &g
		} else {
			errs = append(errs, cellErr(colGender, errcode.ImportCellDictInvalid, map[string]any{"dictTypeCode": dictGender}))
		}
	}
	if v := get(colEnabled); v != "" {
		if s, ok := cc.status.values[strings.ToLower(v)]; ok {
			p.enabled = s != "0"
		} else {
			errs = append(errs, cellErr(colEnabled, errcode.ImportCellDictInvalid, map[string]any{"dictTypeCode": dictStatus}))
		}
	}
	if v := get(colOrg); v != "" {
		if id, ok := cc.orgs.find(v); ok {
			p.orgID = &id
			if !who.Scope.Unrestricted && !who.Scope.HasOrg(id) {
				errs = append(errs, cellErr(colOrg, errcode.ImportOrgOutOfScope, nil))
			}
		} else {
			errs = append(errs, cellErr(colOrg, errcode.ImportCellRefNotFound, map[string]any{"value": v}))
		}
	} else if !who.Scope.Unrestricted {
		// A restricted caller places every user in an org of their scope.
		errs = append(errs, cellErr(colOrg, errcode.ImportOrgOutOfScope, nil))
	}
	if v := get(colPosition); v != "" {
		if id, ok := cc.posts.find(v); ok {
			p.positionID = &id
		} else {
			errs = append(errs, cellErr(colPosition, errcode.ImportCellRefNotFound, map[string]any{"value": v}))
		}
	}
	if v := get(colRoles); v != "" {
		p.hasRoles = true
		for _, code := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '，' || r == ';' || r == ' ' }) {
			r, ok := cc.roles[strings.ToLower(code)]
			if !ok {
				errs = append(errs, cellErr(colRoles, errcode.ImportCellRefNotFound, map[string]any{"value": code}))
				continue
			}
			if !who.SuperAdmin && !r.grantable {
				errs = append(errs, cellErr(colRoles, errcode.RoleNotDelegatable, map[string]any{"value": code}))
				continue
			}
			if !slices.Contains(p.roleIDs, r.id) {
				p.roleIDs = append(p.roleIDs, r.id)
			}
		}
		slices.Sort(p.roleIDs)
	} else if _, ok := cells[colRoles]; ok {
		p.hasRoles = true
	}
	return p, errs
}

// ---- commit ----

// Commit checks every row and, when none fails, writes them all in one
// transaction; otherwise it writes nothing and reports the failures.
func (im *Importer) Commit(ctx context.Context, who datascope.Caller, in ImportCommitInput) (*ImportResult, error) {
	strategy := StrategySkip
	if in.Strategy != nil {
		strategy = int(*in.Strategy)
	}
	if strategy != StrategySkip && strategy != StrategyOverwrite && strategy != StrategyError {
		return nil, request.Invalid("strategy")
	}
	if err := im.bounded(ctx, in.Rows); err != nil {
		return nil, err
	}
	ch, err := im.check(ctx, who, in.Rows, strategy)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{Total: len(in.Rows), Failures: []ImportRow{}, Passwords: []ImportPassword{}}
	if ch.errorRows > 0 {
		for _, r := range ch.rows {
			if len(r.Errors) > 0 {
				res.Failures = append(res.Failures, r)
			}
		}
		res.Failed = len(res.Failures)
		return res, nil
	}
	policy, err := im.s.accounts.Policy(ctx)
	if err != nil {
		return nil, err
	}
	type insert struct {
		plan  planned
		index int
		hash  string
	}
	var inserts []insert
	var updates []planned
	for i, p := range ch.plans {
		switch {
		case p.existing == nil:
			plain, err := policy.Generate(password.GeneratedMinLength)
			if err != nil {
				return nil, err
			}
			hash, err := password.HashGeneratedWith(ctx, im.s.d.Hasher, plain)
			if err != nil {
				return nil, err
			}
			inserts = append(inserts, insert{plan: p, index: ch.rows[i].Index, hash: hash})
			res.Passwords = append(res.Passwords, ImportPassword{Index: ch.rows[i].Index, Account: p.account, InitialPassword: plain})
		case strategy == StrategyOverwrite:
			updates = append(updates, p)
		default:
			res.Skipped++
		}
	}
	now := time.Now()
	var disabled []int64
	err = database.WithTx(ctx, im.s.d.Client, func(tx *ent.Tx) error {
		for batch := range slices.Chunk(inserts, 500) {
			created, err := tx.SysUser.MapCreateBulk(batch, func(c *ent.SysUserCreate, i int) {
				p := batch[i].plan
				c.SetAccount(p.account).SetName(p.name).
					SetNillableNickname(p.nickname).SetNillablePhone(p.phone).SetNillableEmail(p.email).SetNillableGender(p.gender).
					SetNillableOrgID(p.orgID).SetNillablePositionID(p.positionID).
					SetEnabled(p.enabled).SetPasswordHash(batch[i].hash).SetMustChangePassword(true).SetPasswordChangedAt(now).
					SetCreateUserID(who.UserID)
			}).Save(ctx)
			if err != nil {
				return err
			}
			var links []*ent.SysUserRoleCreate
			for i, u := range created {
				for _, r := range batch[i].plan.roleIDs {
					links = append(links, tx.SysUserRole.Create().SetUserID(u.ID).SetRoleID(r).SetCreateUserID(who.UserID))
				}
			}
			for lb := range slices.Chunk(links, 500) {
				if err := tx.SysUserRole.CreateBulk(lb...).Exec(ctx); err != nil {
					return err
				}
			}
		}
		for _, p := range updates {
			if err := im.overwrite(ctx, tx, who, p); err != nil {
				return err
			}
			if p.existing.Enabled && !p.enabled && p.present[colEnabled] {
				disabled = append(disabled, p.existing.ID)
			}
		}
		return nil
	})
	if ent.IsConstraintError(err) {
		// Another request took an account between the check and the insert.
		return nil, errcode.New(errcode.AccountExists).Wrap(err)
	}
	if err != nil {
		return nil, err
	}
	res.Inserted, res.Updated = len(inserts), len(updates)
	for _, id := range disabled {
		if _, err := im.s.d.Sessions.RevokeUser(ctx, id, reasonDisabled, ""); err != nil {
			return nil, err
		}
	}
	if len(updates) > 0 {
		ids := make([]int64, len(updates))
		for i, p := range updates {
			ids[i] = p.existing.ID
		}
		if err := im.s.d.InvalidateAccess(ctx, ids...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// overwrite updates an existing user from the columns the row carries
// (a blank optional cell clears the field; the roles are replaced when the
// roles column is there).
func (im *Importer) overwrite(ctx context.Context, tx *ent.Tx, who datascope.Caller, p planned) error {
	id := p.existing.ID
	upd := tx.SysUser.UpdateOneID(id).Where(sysuser.IsDelete(false)).SetName(p.name).SetUpdateUserID(who.UserID)
	set := func(key string, v *string, setFn func(string) *ent.SysUserUpdateOne, clearFn func() *ent.SysUserUpdateOne) {
		if p.present[key] {
			setOrClear(v, setFn, clearFn)
		}
	}
	set(colNickname, p.nickname, upd.SetNickname, upd.ClearNickname)
	set(colPhone, p.phone, upd.SetPhone, upd.ClearPhone)
	set(colEmail, p.email, upd.SetEmail, upd.ClearEmail)
	set(colGender, p.gender, upd.SetGender, upd.ClearGender)
	if p.present[colOrg] {
		setOrClear(p.orgID, upd.SetOrgID, upd.ClearOrgID)
	}
	if p.present[colPosition] {
		setOrClear(p.positionID, upd.SetPositionID, upd.ClearPositionID)
	}
	if p.present[colEnabled] {
		upd.SetEnabled(p.enabled)
	}
	if err := upd.Exec(ctx); err != nil {
		if ent.IsNotFound(err) {
			return errcode.New(errcode.UserNotFound).With("id", id)
		}
		return err
	}
	if !p.hasRoles {
		return nil
	}
	if _, err := tx.SysUserRole.Delete().Where(sysuserrole.UserID(id)).Exec(ctx); err != nil {
		return err
	}
	return linkRoles(ctx, tx, who.UserID, id, p.roleIDs)
}

// ---- error report ----

// ErrorReport checks the rows and writes them with their errors: the cells
// in error filled red, the messages (in lang) in a last column.
func (im *Importer) ErrorReport(ctx context.Context, who datascope.Caller, in ImportRowsInput, lang string) (func(io.Writer) error, func(), error) {
	if err := im.bounded(ctx, in.Rows); err != nil {
		return nil, nil, err
	}
	ch, err := im.check(ctx, who, in.Rows, -1)
	if err != nil {
		return nil, nil, err
	}
	texts, err := errcode.LanguagePack(lang)
	if err != nil {
		return nil, nil, err
	}
	titles := make([]string, 0, len(importColumns)+2)
	widths := make([]float64, 0, len(importColumns)+2)
	titles = append(titles, "行号")
	widths = append(widths, 8)
	col := map[string]int{}
	for i, c := range importColumns {
		titles = append(titles, c.Title)
		widths = append(widths, c.Width)
		col[c.Key] = i + 1
	}
	titles = append(titles, "错误")
	widths = append(widths, 60)
	st, err := spreadsheet.NewStream(titles, widths)
	if err != nil {
		return nil, nil, err
	}
	rows := ch.rows
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Index < rows[j].Index })
	for _, r := range rows {
		cells := make([]any, 0, len(titles))
		cells = append(cells, r.Index)
		for _, c := range importColumns {
			cells = append(cells, r.Cells[c.Key])
		}
		marked := map[int]bool{}
		msgs := make([]string, 0, len(r.Errors))
		for _, e := range r.Errors {
			marked[col[e.ColumnKey]] = true
			title := e.ColumnKey
			if i, ok := col[e.ColumnKey]; ok {
				title = titles[i]
			}
			text := texts[im.s.d.Catalog.MsgKey(e.Code)]
			if text == "" {
				text = im.s.d.Catalog.MsgKey(e.Code)
			}
			msgs = append(msgs, fmt.Sprintf("%s: %s (%d)", title, text, e.Code))
		}
		cells = append(cells, strings.Join(msgs, "; "))
		if err := st.MarkedRow(cells, marked); err != nil {
			_ = st.Close()
			return nil, nil, err
		}
	}
	return func(w io.Writer) error { _, err := st.WriteTo(w); return err }, func() { _ = st.Close() }, nil
}
