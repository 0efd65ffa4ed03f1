package resource

import (
	"context"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

// Item is one row on the wire: "id", "createTime", "updateTime", every
// described field by its JSON name, and for an Org field its
// organisation's name (orgId → orgName).
type Item map[string]any

// service runs a resource's operations for a caller: data scope on every
// read and write, organisations only within the scope, dictionary values
// only among the enabled items, unique fields free among the live rows.
type service struct {
	s      *spec
	st     *store
	d      *module.Deps
	scopes *datascope.Cache
	dict   *dict.Service
	now    func() time.Time
}

func newService(s *spec, d *module.Deps) *service {
	return &service{s: s, st: &store{s: s, dialect: d.Dialect}, d: d, scopes: d.Scopes(), dict: dict.New(d), now: time.Now}
}

func (sv *service) notFound(id int64) error {
	return errcode.New(errcode.ResourceNotFound).With("resource", sv.s.Name).With("id", id)
}

// orgNameKey is the key of an Org field's name: orgId → orgName.
func orgNameKey(name string) string {
	return strings.TrimSuffix(name, "Id") + "Name"
}

// items turns rows into wire items, with organisation names read once.
func (sv *service) items(ctx context.Context, rows []row) ([]Item, error) {
	var orgIDs []int64
	for _, r := range rows {
		for _, f := range sv.s.fields {
			if id, ok := r.values[f.col].(int64); ok && f.Type == Org {
				orgIDs = append(orgIDs, id)
			}
		}
	}
	names := map[int64]string{}
	if len(orgIDs) > 0 {
		orgs, err := sv.d.Client.SysOrg.Query().Where(sysorg.IDIn(orgIDs...)).Select(sysorg.FieldID, sysorg.FieldName).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range orgs {
			names[o.ID] = o.Name
		}
	}
	out := make([]Item, len(rows))
	for i, r := range rows {
		it := Item{"id": r.id, "createTime": request.EntityTime(r.createTime), "updateTime": request.EntityTimePtr(r.updateTime)}
		for _, f := range sv.s.fields {
			if reserved[f.col] {
				continue
			}
			it[f.Name] = f.wire(r.values[f.col])
			if f.Type == Org {
				var name *string
				if id, ok := r.values[f.col].(int64); ok {
					if n, ok := names[id]; ok {
						name = &n
					}
				}
				it[orgNameKey(f.Name)] = name
			}
		}
		out[i] = it
	}
	return out, nil
}

// parseFilter reads the list filters from the query (get: a query value
// by name, case-insensitive).
func (sv *service) parseFilter(get func(string) string) (filter, error) {
	var f filter
	var key strings.Builder
	for _, fd := range sv.s.fields {
		switch fd.Filter {
		case Eq, Contains:
			raw := get(fd.Name)
			v, err := fd.parseText(raw)
			if err != nil || v == nil {
				if err != nil {
					return f, err
				}
				continue
			}
			key.WriteString(fd.Name + "=" + raw + "&")
			if fd.Filter == Contains {
				f.preds = append(f.preds, sql.ContainsFold(fd.col, v.(string)))
			} else {
				f.preds = append(f.preds, sql.EQ(fd.col, v))
			}
		case Range:
			for _, end := range []string{"From", "To"} {
				raw := get(fd.Name + end)
				v, err := fd.parseText(raw)
				if err != nil {
					return f, request.Invalid(fd.Name + end)
				}
				if v == nil {
					continue
				}
				key.WriteString(fd.Name + end + "=" + raw + "&")
				if end == "From" {
					f.preds = append(f.preds, sql.GTE(fd.col, v))
				} else {
					f.preds = append(f.preds, sql.LTE(fd.col, rangeEnd(fd, v)))
				}
			}
		}
	}
	f.key = key.String()
	return f, nil
}

func (sv *service) total(ctx context.Context, key string, count func(context.Context) (int, error)) (int, error) {
	if sv.d.Totals == nil {
		return count(ctx)
	}
	return sv.d.Totals.Total(ctx, sv.s.table, key, count)
}

func (sv *service) bump(ctx context.Context) {
	if sv.d.Totals != nil {
		sv.d.Totals.Bump(ctx, sv.s.table)
	}
}

// Page lists the live rows within who's scope matching f.
func (sv *service) Page(ctx context.Context, who datascope.Caller, f filter, p request.Page) ([]Item, int, error) {
	rows, total, err := sv.st.page(ctx, sv.d.Client, sv.total, who, f, p)
	if err != nil {
		return nil, 0, err
	}
	items, err := sv.items(ctx, rows)
	return items, total, err
}

// Get reads one live row within who's scope.
func (sv *service) Get(ctx context.Context, who datascope.Caller, id int64) (Item, error) {
	r, err := sv.st.one(ctx, sv.d.Client, who, id, false)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, sv.notFound(id)
	}
	items, err := sv.items(ctx, []row{*r})
	if err != nil {
		return nil, err
	}
	return items[0], nil
}

// admit checks the references of values for who: the organisation exists
// and lies in the scope, dictionary values are enabled items.
func (sv *service) admit(ctx context.Context, who datascope.Caller, values map[string]any) error {
	for _, f := range sv.s.fields {
		v, ok := values[f.col]
		if !ok || v == nil {
			continue
		}
		switch f.Type {
		case Org:
			id := v.(int64)
			n, err := sv.d.Client.SysOrg.Query().Where(sysorg.ID(id), sysorg.IsDelete(false)).Count(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				return errcode.New(errcode.OrgNotFound).With("field", f.Name)
			}
			if f == sv.s.org && !who.Scope.HasOrg(id) {
				return errcode.New(errcode.OrgOutOfScope).With("field", f.Name)
			}
		case Dict:
			items, err := sv.dict.Items(ctx, f.Dict)
			if err != nil {
				return err
			}
			found := false
			for _, it := range items {
				if it.Value == v.(string) {
					found = true
					break
				}
			}
			if !found {
				return invalid(f, "dict").With("dict", f.Dict)
			}
		}
	}
	return nil
}

// unique refuses values whose unique fields a live row (other than
// except) already holds.
func (sv *service) unique(ctx context.Context, q querier, values map[string]any, except int64) error {
	for _, f := range sv.s.fields {
		if !f.Unique {
			continue
		}
		if _, ok := values[f.col]; !ok {
			continue
		}
		id, err := sv.st.keyMatch(ctx, q, []*field{f}, values, except)
		if err != nil {
			return err
		}
		if id != 0 {
			return sv.keyExists(f.Name)
		}
	}
	return nil
}

func (sv *service) keyExists(field string) error {
	return errcode.New(errcode.ResourceKeyExists).With("resource", sv.s.Name).With("field", field)
}

// uniqueErr maps a unique-index violation (a concurrent write took the
// key between the check and the write) to 42036.
func (sv *service) uniqueErr(err error) error {
	if err != nil && sqlgraph.IsUniqueConstraintError(err) {
		name := ""
		for _, f := range sv.s.fields {
			if f.Unique {
				name = f.Name
				break
			}
		}
		if name == "" && len(sv.s.key) > 0 {
			name = sv.s.key[0].Name
		}
		return sv.keyExists(name)
	}
	return err
}

// Create writes a new row from a JSON body.
func (sv *service) Create(ctx context.Context, who datascope.Caller, body []byte) (int64, error) {
	values, err := sv.s.decodeBody(body, true)
	if err != nil {
		return 0, err
	}
	return sv.create(ctx, who, values)
}

func (sv *service) create(ctx context.Context, who datascope.Caller, values map[string]any) (int64, error) {
	if err := sv.admit(ctx, who, values); err != nil {
		return 0, err
	}
	if sv.s.org != nil && !who.Scope.Unrestricted && values[sv.s.org.col] == nil {
		return 0, errcode.New(errcode.OrgOutOfScope).With("field", sv.s.org.Name)
	}
	id := sv.d.NewID()
	err := database.WithTx(ctx, sv.d.Client, func(tx *ent.Tx) error {
		if err := sv.unique(ctx, tx, values, 0); err != nil {
			return err
		}
		return sv.st.insert(ctx, tx, id, who.UserID, sv.now(), values)
	})
	if err != nil {
		return 0, sv.uniqueErr(err)
	}
	sv.bump(ctx)
	return id, nil
}

// Update changes the form fields present in a JSON body of a live row
// within who's scope.
func (sv *service) Update(ctx context.Context, who datascope.Caller, id int64, body []byte) (bool, error) {
	values, err := sv.s.decodeBody(body, false)
	if err != nil {
		return false, err
	}
	return true, sv.update(ctx, who, id, values)
}

func (sv *service) update(ctx context.Context, who datascope.Caller, id int64, values map[string]any) error {
	if err := sv.admit(ctx, who, values); err != nil {
		return err
	}
	if v, ok := values[sv.orgCol()]; ok && v == nil && sv.s.org != nil && !who.Scope.Unrestricted {
		return errcode.New(errcode.OrgOutOfScope).With("field", sv.s.org.Name)
	}
	err := database.WithTx(ctx, sv.d.Client, func(tx *ent.Tx) error {
		r, err := sv.st.one(ctx, tx, who, id, false)
		if err != nil {
			return err
		}
		if r == nil {
			return sv.notFound(id)
		}
		if err := sv.unique(ctx, tx, values, id); err != nil {
			return err
		}
		n, err := sv.st.update(ctx, tx, id, who.UserID, sv.now(), values)
		if err != nil {
			return err
		}
		if n == 0 {
			return sv.notFound(id)
		}
		return nil
	})
	if err != nil {
		return sv.uniqueErr(err)
	}
	sv.bump(ctx)
	return nil
}

func (sv *service) orgCol() string {
	if sv.s.org == nil {
		return ""
	}
	return sv.s.org.col
}

// Delete moves a live row within who's scope to the recycle bin.
func (sv *service) Delete(ctx context.Context, who datascope.Caller, id int64) (bool, error) {
	n, err := sv.delete(ctx, who, []int64{id})
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, sv.notFound(id)
	}
	return true, nil
}

// IDs is the body of a batch delete.
type IDs struct {
	IDs []request.Int64 `json:"ids"`
}

// BatchDelete moves the live rows within who's scope among ids to the bin
// (all or none: one id outside is 42035) and answers how many moved.
func (sv *service) BatchDelete(ctx context.Context, who datascope.Caller, in IDs) (int, error) {
	if len(in.IDs) == 0 || len(in.IDs) > 1000 {
		return 0, request.Invalid("ids")
	}
	ids := make([]int64, 0, len(in.IDs))
	seen := map[int64]bool{}
	for _, id := range in.IDs {
		if id <= 0 {
			return 0, request.Invalid("ids")
		}
		if !seen[int64(id)] {
			seen[int64(id)] = true
			ids = append(ids, int64(id))
		}
	}
	n, err := sv.delete(ctx, who, ids)
	return int(n), err
}

func (sv *service) delete(ctx context.Context, who datascope.Caller, ids []int64) (int64, error) {
	var n int64
	err := database.WithTx(ctx, sv.d.Client, func(tx *ent.Tx) error {
		for _, id := range ids {
			r, err := sv.st.one(ctx, tx, who, id, false)
			if err != nil {
				return err
			}
			if r == nil {
				return sv.notFound(id)
			}
		}
		var err error
		n, err = sv.st.softDelete(ctx, tx, ids, who.UserID, sv.now())
		return err
	})
	if err != nil {
		return 0, err
	}
	sv.bump(ctx)
	return n, nil
}
