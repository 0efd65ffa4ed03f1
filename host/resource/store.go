package resource

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	entfield "entgo.io/ent/schema/field"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/request"
)

// querier is what both ent.Client and ent.Tx offer (the sql/execquery
// feature): statements built with ent's dialect/sql builder run through it.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error)
}

// row is one row read: the column values by column name (nil for NULL),
// plus the kernel's columns.
type row struct {
	id                   int64
	createTime           time.Time
	updateTime           *time.Time
	createUser, updateBy *int64
	values               map[string]any
}

// store reads and writes a resource's table.
type store struct {
	s       *spec
	dialect string
}

func (st *store) b() *sql.DialectBuilder { return sql.Dialect(st.dialect) }

// selectColumns are the columns every read returns, in scan order.
func (st *store) selectColumns() []string {
	cols := []string{"id", "create_time", "update_time", "create_user_id", "update_user_id"}
	for _, f := range st.s.fields {
		if !reserved[f.col] {
			cols = append(cols, f.col)
		}
	}
	return cols
}

// scan reads rows of selectColumns.
func (st *store) scan(rows *stdsql.Rows) ([]row, error) {
	defer func() { _ = rows.Close() }()
	var out []row
	for rows.Next() {
		var (
			id                 int64
			ct                 stdsql.NullTime
			ut                 stdsql.NullTime
			cu, uu             stdsql.NullInt64
			dest               = []any{&id, &ct, &ut, &cu, &uu}
			fields             []*field
			holders            []any
			createUser, update *int64
		)
		for _, f := range st.s.fields {
			if reserved[f.col] {
				continue
			}
			h := holder(f.kind)
			fields = append(fields, f)
			holders = append(holders, h)
			dest = append(dest, h)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		r := row{id: id, createTime: ct.Time, values: make(map[string]any, len(fields))}
		if ut.Valid {
			t := ut.Time
			r.updateTime = &t
		}
		if cu.Valid {
			createUser = &cu.Int64
		}
		if uu.Valid {
			update = &uu.Int64
		}
		r.createUser, r.updateBy = createUser, update
		for i, f := range fields {
			r.values[f.col] = unhold(holders[i])
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func holder(k entfield.Type) any {
	switch k {
	case entfield.TypeString:
		return new(stdsql.NullString)
	case entfield.TypeBool:
		return new(stdsql.NullBool)
	case entfield.TypeFloat64, entfield.TypeFloat32:
		return new(stdsql.NullFloat64)
	case entfield.TypeTime:
		return new(stdsql.NullTime)
	default:
		return new(stdsql.NullInt64)
	}
}

func unhold(h any) any {
	switch v := h.(type) {
	case *stdsql.NullString:
		if v.Valid {
			return v.String
		}
	case *stdsql.NullBool:
		if v.Valid {
			return v.Bool
		}
	case *stdsql.NullFloat64:
		if v.Valid {
			return v.Float64
		}
	case *stdsql.NullTime:
		if v.Valid {
			return v.Time
		}
	case *stdsql.NullInt64:
		if v.Valid {
			return v.Int64
		}
	}
	return nil
}

// filter is a parsed list filter.
type filter struct {
	preds []*sql.Predicate
	key   string // the inputs of the WHERE clause, for the totals cache
}

// scope restricts to what who may see: rows of the scope's organisations,
// and the rows they created when the scope includes themselves.
func (st *store) scope(who datascope.Caller) *sql.Predicate {
	if st.s.org == nil || who.Scope.Unrestricted {
		return nil
	}
	var or []*sql.Predicate
	if len(who.Scope.OrgIDs) > 0 {
		ids := make([]any, len(who.Scope.OrgIDs))
		for i, id := range who.Scope.OrgIDs {
			ids[i] = id
		}
		or = append(or, sql.In(st.s.org.col, ids...))
	}
	if who.Scope.IncludeSelf {
		or = append(or, sql.EQ("create_user_id", who.UserID))
	}
	switch len(or) {
	case 0:
		return sql.False()
	case 1:
		return or[0]
	}
	return sql.Or(or...)
}

func scopeKey(who datascope.Caller) string {
	if who.Scope.Unrestricted {
		return "all"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "self=%v/%d;orgs=", who.Scope.IncludeSelf, who.UserID)
	for _, id := range who.Scope.OrgIDs {
		fmt.Fprintf(&b, "%d,", id)
	}
	return b.String()
}

// where is the live rows within who's scope matching f.
func (st *store) where(who datascope.Caller, f filter) *sql.Predicate {
	preds := []*sql.Predicate{sql.EQ("is_delete", false)}
	if p := st.scope(who); p != nil {
		preds = append(preds, p)
	}
	preds = append(preds, f.preds...)
	return sql.And(preds...)
}

// page reads one page: the ids first (ordered, from the index), then their
// rows (a deferred join), and the total through the totals cache.
func (st *store) page(ctx context.Context, q querier, totals func(ctx context.Context, key string, count func(context.Context) (int, error)) (int, error),
	who datascope.Caller, f filter, p request.Page) ([]row, int, error) {
	where := st.where(who, f)
	total, err := totals(ctx, scopeKey(who)+"|"+f.key, func(ctx context.Context) (int, error) {
		cq, args := st.b().Select(sql.Count("*")).From(sql.Table(st.s.table)).Where(where).Query()
		rows, err := q.QueryContext(ctx, cq, args...)
		if err != nil {
			return 0, err
		}
		defer func() { _ = rows.Close() }()
		n := 0
		if rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return 0, err
			}
		}
		return n, rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	if total == 0 || p.Offset() >= total {
		return []row{}, total, nil
	}
	sel := st.b().Select("id").From(sql.Table(st.s.table)).Where(where)
	order := "create_time"
	if fd := st.s.byName[strings.ToLower(p.SortField)]; fd != nil && (fd.Sortable || fd.col == "create_time") {
		order = fd.col
	}
	if p.Desc || p.SortField == "" {
		sel.OrderBy(sql.Desc(order), sql.Desc("id"))
	} else {
		sel.OrderBy(sql.Asc(order), sql.Asc("id"))
	}
	sel.Limit(p.Size)
	if off := p.Offset(); off > 0 {
		sel.Offset(off)
	}
	iq, args := sel.Query()
	ids, err := queryIDs(ctx, q, iq, args)
	if err != nil {
		return nil, 0, err
	}
	rows, err := st.byIDs(ctx, q, ids)
	if err != nil {
		return nil, 0, err
	}
	at := make(map[int64]row, len(rows))
	for _, r := range rows {
		at[r.id] = r
	}
	out := make([]row, 0, len(ids))
	for _, id := range ids {
		if r, ok := at[id]; ok {
			out = append(out, r)
		}
	}
	return out, total, nil
}

func anys(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// byIDs reads the rows of ids (any order).
func (st *store) byIDs(ctx context.Context, q querier, ids []int64) ([]row, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	sq, args := st.b().Select(st.selectColumns()...).From(sql.Table(st.s.table)).Where(sql.In("id", anys(ids)...)).Query()
	rows, err := q.QueryContext(ctx, sq, args...)
	if err != nil {
		return nil, err
	}
	return st.scan(rows)
}

// one reads the row id if it is live (deleted false) or in the bin
// (deleted true) and within who's scope; nil when not.
func (st *store) one(ctx context.Context, q querier, who datascope.Caller, id int64, deleted bool) (*row, error) {
	preds := []*sql.Predicate{sql.EQ("id", id), sql.EQ("is_delete", deleted)}
	if p := st.scope(who); p != nil {
		preds = append(preds, p)
	}
	sq, args := st.b().Select(st.selectColumns()...).From(sql.Table(st.s.table)).Where(sql.And(preds...)).Query()
	rows, err := q.QueryContext(ctx, sq, args...)
	if err != nil {
		return nil, err
	}
	out, err := st.scan(rows)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return &out[0], nil
}

// insert writes a new row of the column values.
func (st *store) insert(ctx context.Context, q querier, id, by int64, now time.Time, values map[string]any) error {
	cols := []string{"id", "create_time", "create_user_id", "is_delete", "delete_key"}
	vals := []any{id, now, by, false, int64(0)}
	for _, f := range st.s.fields {
		if v, ok := values[f.col]; ok {
			cols = append(cols, f.col)
			vals = append(vals, v)
		}
	}
	iq, args := st.b().Insert(st.s.table).Columns(cols...).Values(vals...).Query()
	_, err := q.ExecContext(ctx, iq, args...)
	return err
}

// update sets the column values of the live row id; it returns the
// number of rows changed (0: gone meanwhile).
func (st *store) update(ctx context.Context, q querier, id, by int64, now time.Time, values map[string]any) (int64, error) {
	u := st.b().Update(st.s.table).Set("update_time", now).Set("update_user_id", by)
	for _, f := range st.s.fields {
		if v, ok := values[f.col]; ok {
			u.Set(f.col, v)
		}
	}
	uq, args := u.Where(sql.And(sql.EQ("id", id), sql.EQ("is_delete", false))).Query()
	res, err := q.ExecContext(ctx, uq, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// softDelete moves live rows to the bin (delete_key = id frees their keys).
func (st *store) softDelete(ctx context.Context, q querier, ids []int64, by int64, now time.Time) (int64, error) {
	uq, args := st.b().Update(st.s.table).Set("is_delete", true).Set("delete_key", sql.Expr("id")).
		Set("update_time", now).Set("update_user_id", by).
		Where(sql.And(sql.In("id", anys(ids)...), sql.EQ("is_delete", false))).Query()
	res, err := q.ExecContext(ctx, uq, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// restore brings a binned row back.
func (st *store) restore(ctx context.Context, q querier, id, by int64, now time.Time) (int64, error) {
	uq, args := st.b().Update(st.s.table).Set("is_delete", false).Set("delete_key", int64(0)).
		Set("update_time", now).Set("update_user_id", by).
		Where(sql.And(sql.EQ("id", id), sql.EQ("is_delete", true))).Query()
	res, err := q.ExecContext(ctx, uq, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// purge deletes a binned row.
func (st *store) purge(ctx context.Context, q querier, id int64) (int64, error) {
	dq, args := st.b().Delete(st.s.table).Where(sql.And(sql.EQ("id", id), sql.EQ("is_delete", true))).Query()
	res, err := q.ExecContext(ctx, dq, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// deletedPage lists binned rows within who's scope, newest deletion first.
func (st *store) deletedPage(ctx context.Context, q querier, who datascope.Caller, p request.Page) ([]row, int, error) {
	preds := []*sql.Predicate{sql.EQ("is_delete", true)}
	if sp := st.scope(who); sp != nil {
		preds = append(preds, sp)
	}
	where := sql.And(preds...)
	cq, args := st.b().Select(sql.Count("*")).From(sql.Table(st.s.table)).Where(where).Query()
	var total int
	if err := queryInt(ctx, q, cq, args, &total); err != nil {
		return nil, 0, err
	}
	sel := st.b().Select(st.selectColumns()...).From(sql.Table(st.s.table)).Where(where).
		OrderBy(sql.Desc("update_time"), sql.Desc("id")).Limit(p.Size)
	if off := p.Offset(); off > 0 {
		sel.Offset(off)
	}
	sq, args := sel.Query()
	rows, err := q.QueryContext(ctx, sq, args...)
	if err != nil {
		return nil, 0, err
	}
	out, err := st.scan(rows)
	return out, total, err
}

// queryIDs reads a column of ids.
func queryIDs(ctx context.Context, q querier, query string, args []any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func queryInt(ctx context.Context, q querier, query string, args []any, n *int) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	if rows.Next() {
		if err := rows.Scan(n); err != nil {
			return err
		}
	}
	return rows.Err()
}

// keyMatch finds the live row whose key columns hold values (0 when none),
// excluding id except.
func (st *store) keyMatch(ctx context.Context, q querier, key []*field, values map[string]any, except int64) (int64, error) {
	if len(key) == 0 {
		return 0, nil
	}
	preds := []*sql.Predicate{sql.EQ("is_delete", false)}
	for _, f := range key {
		v, ok := values[f.col]
		if !ok || v == nil {
			return 0, nil
		}
		preds = append(preds, sql.EQ(f.col, v))
	}
	if except != 0 {
		preds = append(preds, sql.NEQ("id", except))
	}
	sq, args := st.b().Select("id").From(sql.Table(st.s.table)).Where(sql.And(preds...)).Limit(1).Query()
	var id int
	if err := queryInt(ctx, q, sq, args, &id); err != nil {
		return 0, err
	}
	return int64(id), nil
}

// rangeEnd widens a date "to" bound to the end of its day.
func rangeEnd(f *field, v any) any {
	if t, ok := v.(time.Time); ok && f.Type == Date {
		return t.Add(24*time.Hour - time.Nanosecond)
	}
	return v
}

// round rounds v to scale decimals, half away from zero on the decimal
// the user wrote (1.255 → 1.26, where math.Round(1.255*100) gives 1.25).
func round(v float64, scale int) float64 {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		p := math.Pow10(scale)
		return math.Round(v*p) / p
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	// half away from zero: add or subtract 1/2, then truncate
	half := big.NewRat(1, 2)
	if r.Sign() < 0 {
		r.Sub(r, half)
	} else {
		r.Add(r, half)
	}
	q := new(big.Int).Quo(r.Num(), r.Denom())
	out, _ := new(big.Rat).SetFrac(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).Float64()
	return out
}
