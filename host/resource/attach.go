package resource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/recycle"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// Attach adds resources to m: their routes, menus, recycle-bin kinds,
// their share of an organisation's purge and their tables (m.Schema). It
// panics on a description that does not match its schema: a programming
// error the first test that builds the module finds.
func Attach(m module.Module, rs ...Resource) module.Module {
	specs := make([]*spec, len(rs))
	for i, r := range rs {
		s, err := compile(r)
		if err != nil {
			panic(fmt.Sprintf("module %s: %v", m.Name, err))
		}
		specs[i] = s
		m.Schema = append(m.Schema, r.Schema)
		m.Menus = append(m.Menus, s.menus()...)
		if r.Menu.ID != 0 {
			// The page's title in both languages (the seeded title is the
			// Chinese label; the console shows these by menu path).
			if m.Console == nil {
				m.Console = &module.Console{}
			}
			if m.Console.MenuTitles == nil {
				m.Console.MenuTitles = map[string]map[string]string{}
			}
			for lang, title := range map[string]string{"en-US": r.Label.EN, "zh-CN": r.Label.ZH} {
				if m.Console.MenuTitles[lang] == nil {
					m.Console.MenuTitles[lang] = map[string]string{}
				}
				if _, set := m.Console.MenuTitles[lang]["/r/"+r.Name]; !set {
					m.Console.MenuTitles[lang]["/r/"+r.Name] = title
				}
			}
		}
	}
	routes, kinds, forgets := m.Routes, m.Recycle, m.Forgets
	m.Routes = func(d *module.Deps, api *route.Group) error {
		if routes != nil {
			if err := routes(d, api); err != nil {
				return err
			}
		}
		for _, s := range specs {
			mount(api, newService(s, d))
		}
		return nil
	}
	m.Recycle = func(d *module.Deps) []module.RecycleKind {
		var out []module.RecycleKind
		if kinds != nil {
			out = kinds(d)
		}
		for _, s := range specs {
			if s.has(OpRecycle) && s.has(OpDelete|OpBatchDelete) {
				out = append(out, newService(s, d).recycleKind())
			}
		}
		return out
	}
	m.Forgets = func(d *module.Deps) []module.Forget {
		var out []module.Forget
		if forgets != nil {
			out = forgets(d)
		}
		for _, s := range specs {
			out = append(out, newService(s, d).forgets()...)
		}
		return out
	}
	return m
}

// menus are the resource's page and its buttons, one per group of codes.
func (s *spec) menus() []seed.Menu {
	if s.Menu.ID == 0 {
		return nil
	}
	out := []seed.Menu{{ID: s.Menu.ID, ParentID: s.Menu.ParentID, Type: seed.MenuPage, Title: s.Label.ZH,
		Path: "/r/" + s.Name, Component: "resource/" + s.Name, Icon: s.Menu.Icon, Sort: s.Menu.Sort, ModuleID: s.Menu.ModuleID}}
	buttons := []struct {
		title string
		ops   []string
	}{
		{"查询", []string{"page", "detail"}},
		{"新增", []string{"create"}},
		{"修改", []string{"update"}},
		{"删除", []string{"delete", "batchDelete"}},
		{"导出", []string{"export"}},
		{"导入", []string{"import"}},
	}
	id := s.Menu.ID
	for i, b := range buttons {
		var codes []string
		for _, op := range b.ops {
			if c, ok := s.codes[op]; ok {
				codes = append(codes, c)
				if op == "import" {
					codes = append(codes, route.PermissionCode("POST", s.base+"/import/preview"),
						route.PermissionCode("GET", s.base+"/import/template"))
				}
			}
		}
		if len(codes) == 0 {
			continue
		}
		id++
		out = append(out, seed.Menu{ID: id, ParentID: s.Menu.ID, Type: seed.MenuButton, Title: s.Label.ZH + "-" + b.title,
			Permission: strings.Join(codes, ";"), Sort: i + 1})
	}
	return out
}

// mount registers the resource's routes.
func mount(api *route.Group, sv *service) {
	s := sv.s
	who := bind.Caller[datascope.Caller](sv.scopes.RequestCaller)
	g := api.Group(s.Path)
	en := s.Label.EN
	api.Get("/sys/resource/"+s.Name+"/schema", route.Session, sv.describeHandler).
		Doc("Description of the "+en+" resource (console pages)", nil, Description{})
	if s.has(OpPage) {
		var filters []string
		for _, f := range s.fields {
			switch f.Filter {
			case Eq, Contains:
				filters = append(filters, f.Name)
			case Range:
				filters = append(filters, f.Name+"From", f.Name+"To")
			}
		}
		g.Get("/page", route.Permission, bind.PageAs(who, sv.d.Config.API.MaxPageSize, sv.filterOf, sv.Page)).
			Doc("Page of "+en, nil, []Item{}).Paged(filters...)
	}
	if s.has(OpExport) {
		sv.mountExport(g)
	}
	if s.has(OpImport) {
		sv.mountImport(g, who)
	}
	if s.has(OpDetail) {
		g.Get("/{id}", route.Permission, bind.ReadIDAs(who, sv.Get)).Doc(en+" detail", nil, Item{})
	}
	if s.has(OpCreate) {
		g.Post("", route.Permission, sv.createHandler).Doc("Create "+en, Item{}, int64(0))
	}
	if s.has(OpUpdate) {
		g.Put("/{id}", route.Permission, sv.updateHandler).Doc("Update "+en, Item{}, true)
	}
	if s.has(OpDelete) {
		g.Delete("/{id}", route.Permission, bind.ReadIDAs(who, sv.Delete)).Doc("Delete "+en+" (to the recycle bin)", nil, true)
	}
	if s.has(OpBatchDelete) {
		g.Post("/batch-delete", route.Permission, bind.Create(who, sv.BatchDelete)).Doc("Delete several "+en+" (to the recycle bin)", IDs{}, 0)
	}
}

func (sv *service) filterOf(c fiber.Ctx) (filter, error) {
	return sv.parseFilter(func(name string) string { return request.Query(c, name) })
}

func (sv *service) createHandler(c fiber.Ctx) error {
	who, err := sv.scopes.RequestCaller(c)
	if err != nil {
		return err
	}
	if !request.IsJSONContentType(c.Request().Header.ContentType()) {
		return request.UnsupportedMediaType()
	}
	id, err := sv.Create(c.Context(), who, c.Body())
	if err != nil {
		return err
	}
	return envelope.OK(c, id)
}

func (sv *service) updateHandler(c fiber.Ctx) error {
	who, err := sv.scopes.RequestCaller(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if !request.IsJSONContentType(c.Request().Header.ContentType()) {
		return request.UnsupportedMediaType()
	}
	ok, err := sv.Update(c.Context(), who, id, c.Body())
	if err != nil {
		return err
	}
	return envelope.OK(c, ok)
}

// Description is the data of GET /api/v1/sys/resource/{name}/schema.
type Description struct {
	Name       string            `json:"name"`
	Label      Text              `json:"label"`
	Base       string            `json:"base"`
	Key        string            `json:"key"`
	Operations []string          `json:"operations"`
	Codes      map[string]string `json:"codes"`
	Fields     []FieldDesc       `json:"fields"`
}

// FieldDesc describes one field to the console.
type FieldDesc struct {
	Name     string   `json:"name"`
	Label    Text     `json:"label"`
	Help     *Text    `json:"help,omitempty"`
	Type     Type     `json:"type"`
	Dict     string   `json:"dict,omitempty"`
	Required bool     `json:"required,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	Scale    int      `json:"scale,omitempty"`
	List     bool     `json:"list,omitempty"`
	Form     bool     `json:"form,omitempty"`
	Sortable bool     `json:"sortable,omitempty"`
	ReadOnly bool     `json:"readOnly,omitempty"`
	Unique   bool     `json:"unique,omitempty"`
	Filter   Filter   `json:"filter,omitempty"`
}

func (s *spec) description() Description {
	d := Description{Name: s.Name, Label: s.Label, Base: s.base, Key: "id", Codes: s.codes}
	for _, o := range opNames {
		if s.Ops&o.op != 0 {
			d.Operations = append(d.Operations, o.name)
		}
	}
	for _, f := range s.fields {
		fd := FieldDesc{Name: f.Name, Label: f.Label, Type: f.Type, Dict: f.Dict, Required: f.Required, Min: f.Min, Max: f.Max,
			Scale: f.Scale, List: f.List, Form: f.Form, Sortable: f.Sortable, ReadOnly: f.ReadOnly, Unique: f.Unique, Filter: f.Filter}
		if f.Help != (Text{}) {
			h := f.Help
			fd.Help = &h
		}
		d.Fields = append(d.Fields, fd)
	}
	return d
}

// describeHandler answers the description to callers holding at least one
// of the resource's codes (41007 otherwise: the description tells what
// the resource holds).
func (sv *service) describeHandler(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	if !p.SuperAdmin {
		codes, err := sv.d.Perms.Codes(c.Context(), p.UserID)
		if err != nil {
			return err
		}
		held := false
		for op, code := range sv.s.codes {
			if op != "recycle" && slices.Contains(codes, code) {
				held = true
				break
			}
		}
		if !held {
			return errcode.New(errcode.AreaPermissionRequired).With("resource", sv.s.Name)
		}
	}
	return envelope.OK(c, sv.s.description())
}

// ---- recycle bin ----

func (sv *service) recycleKind() module.RecycleKind {
	del := sv.s.codes["delete"]
	if del == "" {
		del = sv.s.codes["batchDelete"]
	}
	return module.RecycleKind{Type: sv.s.Name, RestoreCodes: []string{del}, PurgeCode: del,
		Page: sv.binPage, Restore: sv.restore, Purge: sv.purgeRow}
}

// label is a row's name in the bin — its "name" or "title" field, else its
// first string field, else its id — and its code: the first unique string
// field besides the name.
func (sv *service) label(r row) (string, *string) {
	var nameField *field
	for _, f := range sv.s.fields {
		if f.Type == String && (f.Name == "name" || f.Name == "title") {
			nameField = f
			break
		}
	}
	for _, f := range sv.s.fields {
		if nameField == nil && f.Type == String {
			nameField = f
		}
	}
	name := fmt.Sprint(r.id)
	if nameField != nil {
		if v, ok := r.values[nameField.col].(string); ok && v != "" {
			name = v
		}
	}
	var code *string
	for _, f := range sv.s.fields {
		if f != nameField && f.Unique && f.Type == String {
			if v, ok := r.values[f.col].(string); ok {
				code = recycle.NonEmpty(v)
				break
			}
		}
	}
	return name, code
}

func (sv *service) binPage(ctx context.Context, who datascope.Caller, p request.Page) ([]module.RecycleItem, int, error) {
	rows, total, err := sv.st.deletedPage(ctx, sv.d.Client, who, p)
	return recycle.PageOf(ctx, sv.d.Client, total, rows, err, func(r row) (int64, string, *string, recycle.Deleted) {
		name, code := sv.label(r)
		return r.id, name, code, recycle.Deleted{At: recycle.When(r.updateTime, r.createTime), By: r.updateBy}
	})
}

func (sv *service) restore(ctx context.Context, who datascope.Caller, id int64) error {
	err := sv.inTx(ctx, func(tx *ent.Tx) error {
		r, err := sv.st.one(ctx, tx, who, id, true)
		if err != nil {
			return err
		}
		if r == nil {
			return recycle.NotFound(id)
		}
		if err := sv.unique(ctx, tx, r.values, id); err != nil {
			if e := (*errcode.Error)(nil); errors.As(err, &e) && e.Code == errcode.ResourceKeyExists {
				return recycle.Conflict()
			}
			return err
		}
		n, err := sv.st.restore(ctx, tx, id, who.UserID, sv.now())
		return recycle.Affected(int(n), err, id)
	})
	if err != nil && sqlgraph.IsUniqueConstraintError(err) {
		return recycle.Conflict()
	}
	return err
}

// inTx runs fn in a transaction and, once committed, drops the cached
// totals of the table.
func (sv *service) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	if err := database.WithTx(ctx, sv.d.Client, fn); err != nil {
		return err
	}
	sv.bump(ctx)
	return nil
}

func (sv *service) purgeRow(ctx context.Context, who datascope.Caller, id int64) error {
	return sv.inTx(ctx, func(tx *ent.Tx) error {
		r, err := sv.st.one(ctx, tx, who, id, true)
		if err != nil {
			return err
		}
		if r == nil {
			return recycle.NotFound(id)
		}
		n, err := sv.st.purge(ctx, tx, id)
		return recycle.Affected(int(n), err, id)
	})
}

// forgets: a purged organisation leaves the resource's rows without an
// organisation where the column allows it.
func (sv *service) forgets() []module.Forget {
	var out []module.Forget
	for _, f := range sv.s.fields {
		if f.Type != Org || !f.null {
			continue
		}
		col := f.col
		out = append(out, module.Forget{Of: module.ForgetOrg, What: sv.s.Name + "." + f.Name, Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			q, args := sql.Dialect(sv.d.Dialect).Update(sv.s.table).SetNull(col).Where(sql.EQ(col, id)).Query()
			_, err := tx.ExecContext(ctx, q, args...)
			return err
		}})
	}
	return out
}
