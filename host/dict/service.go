package dict

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/ent/sysdicttype"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/request"
)

// KeyPrefix namespaces dictionary entries in the cache: "dict:<typeCode>"
// holds the enabled items of one type.
const KeyPrefix = "dict:"

// SeedIDLimit: rows with a smaller id are seed rows and cannot be deleted
// (43010).
const SeedIDLimit = 1000

// Column bounds (ent schema); longer input is 48002.
const (
	maxNameLen   = 128
	maxRemarkLen = 512
	maxLabelLen  = 128
	maxValueLen  = 128
)

// codePattern: a type code is an identifier that is safe in a URL path
// (GET /sys/dict/items/{typeCode}).
var codePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Invalidate drops the cached items of the given types and publishes one
// DictChanged event per type (the dictionary service's InvalidateAsync).
func Invalidate(ctx context.Context, store cache.Store, ev *events.Bus, typeCodes ...string) error {
	if len(typeCodes) == 0 {
		return nil
	}
	keys := make([]string, len(typeCodes))
	for i, c := range typeCodes {
		keys[i] = KeyPrefix + c
	}
	if err := store.Delete(ctx, keys...); err != nil {
		return err
	}
	for _, c := range typeCodes {
		ev.Publish(events.DictChanged{TypeCode: c})
	}
	return nil
}

// InvalidateAll drops every cached dictionary, publishes one DictChanged
// event with an empty key and returns how many types were dropped (the
// dictionary cache-clearing action).
func InvalidateAll(ctx context.Context, store cache.Store, ev *events.Bus) (int, error) {
	n, err := store.DeletePrefix(ctx, KeyPrefix)
	if err != nil {
		return n, err
	}
	ev.Publish(events.DictChanged{})
	return n, nil
}

// Type is the contract's SysDictType.
type Type struct {
	ID int64 `json:"id"`
	request.Audit
	Code    string  `json:"code"`
	Name    string  `json:"name"`
	Sort    int     `json:"sort"`
	Enabled bool    `json:"enabled"`
	Remark  *string `json:"remark"`
}

// Item is the contract's SysDictItem.
type Item struct {
	ID int64 `json:"id"`
	request.Audit
	DictTypeCode string `json:"dictTypeCode"`
	Label        string `json:"label"`
	Value        string `json:"value"`
	Sort         int    `json:"sort"`
	Enabled      bool   `json:"enabled"`
}

// TypeInput is the body of POST and PUT /sys/dict/type (code is ignored by
// PUT: it is immutable). A missing enabled means true.
type TypeInput struct {
	Code    string        `json:"code"`
	Name    string        `json:"name"`
	Sort    request.Int64 `json:"sort"`
	Enabled *bool         `json:"enabled"`
	Remark  *string       `json:"remark"`
}

// ItemInput is the body of POST and PUT /sys/dict/item. A missing enabled
// means true.
type ItemInput struct {
	DictTypeCode string        `json:"dictTypeCode"`
	Label        string        `json:"label"`
	Value        string        `json:"value"`
	Sort         request.Int64 `json:"sort"`
	Enabled      *bool         `json:"enabled"`
}

// TypeFilter filters the type page: Code and Name match as substrings.
type TypeFilter struct {
	Code, Name string
}

// IDs is the body of the batch deletes.
type IDs struct {
	IDs []request.Int64 `json:"ids"`
}

func (in IDs) int64s() []int64 {
	ids := make([]int64, len(in.IDs))
	for i, v := range in.IDs {
		ids[i] = int64(v)
	}
	return ids
}

// Service is the dictionary service. Every change invalidates the cached
// items of the types it touches after the change is committed.
type Service struct {
	client *ent.Client
	store  cache.Store
	// ttl is the lifetime of cached items (Service:Cache:PermissionMinutes).
	ttl time.Duration
	// events receives a DictChanged event per invalidated type.
	events *events.Bus
}

func typeDTO(r *ent.SysDictType) Type {
	return Type{
		ID: r.ID, Audit: request.AuditOf(r.IsDelete, r.CreateTime, r.CreateUserID, r.UpdateTime, r.UpdateUserID),

		Code: r.Code, Name: r.Name, Sort: r.Sort, Enabled: r.Enabled, Remark: r.Remark,
	}
}

func itemDTO(r *ent.SysDictItem) Item {
	return Item{
		ID: r.ID, Audit: request.AuditOf(r.IsDelete, r.CreateTime, r.CreateUserID, r.UpdateTime, r.UpdateUserID),

		DictTypeCode: r.DictTypeCode, Label: r.Label, Value: r.Value, Sort: r.Sort, Enabled: r.Enabled,
	}
}

// Base columns shared by both tables, keyed by lower-cased property name.
var baseSortColumns = map[string]string{
	"id": "id", "isdelete": "is_delete", "createtime": "create_time", "createuserid": "create_user_id",
	"updatetime": "update_time", "updateuserid": "update_user_id", "sort": "sort", "enabled": "enabled",
}

var typeSortColumns = merge(baseSortColumns, map[string]string{
	"code": sysdicttype.FieldCode, "name": sysdicttype.FieldName, "remark": sysdicttype.FieldRemark,
})

var itemSortColumns = merge(baseSortColumns, map[string]string{
	"dicttypecode": sysdictitem.FieldDictTypeCode, "label": sysdictitem.FieldLabel, "value": sysdictitem.FieldValue,
})

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func orderBy(col string, desc bool) func(*sql.Selector) {
	if desc {
		return ent.Desc(col)
	}
	return ent.Asc(col)
}

// order is the page order: sort then id, or a SortField naming a real
// column (id breaks ties).
func order(p request.Page, columns map[string]string) []func(*sql.Selector) {
	if col, ok := columns[strings.ToLower(strings.TrimSpace(p.SortField))]; ok {
		return []func(*sql.Selector){orderBy(col, p.Desc), orderBy("id", p.Desc)}
	}
	return []func(*sql.Selector){orderBy("sort", false), orderBy("id", false)}
}

// TypePage lists live types; Code and Name are fuzzy.
func (s *Service) TypePage(ctx context.Context, f TypeFilter, p request.Page) ([]Type, int, error) {
	code, name := f.Code, f.Name
	q := s.client.SysDictType.Query().Where(sysdicttype.IsDelete(false))
	if v := strings.TrimSpace(code); v != "" {
		q.Where(sysdicttype.CodeContainsFold(v))
	}
	if v := strings.TrimSpace(name); v != "" {
		q.Where(sysdicttype.NameContainsFold(v))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	var opts []sysdicttype.OrderOption
	for _, o := range order(p, typeSortColumns) {
		opts = append(opts, o)
	}
	rows, err := q.Order(opts...).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	items := make([]Type, len(rows))
	for i, r := range rows {
		items[i] = typeDTO(r)
	}
	return items, total, nil
}

func (s *Service) liveType(ctx context.Context, id int64) (*ent.SysDictType, error) {
	r, err := s.client.SysDictType.Query().Where(sysdicttype.ID(id), sysdicttype.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.DictTypeNotFound)
	}
	return r, err
}

// GetType returns a live type (43001).
func (s *Service) GetType(ctx context.Context, id int64) (Type, error) {
	r, err := s.liveType(ctx, id)
	if err != nil {
		return Type{}, err
	}
	return typeDTO(r), nil
}

func validateType(in *TypeInput) error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > maxNameLen {
		return request.Invalid("name")
	}
	in.Remark = blankToNil(in.Remark)
	if in.Remark != nil && utf8.RuneCountInString(*in.Remark) > maxRemarkLen {
		return request.Invalid("remark")
	}
	return nil
}

// AddType creates a type (43002 when a live type has the code).
func (s *Service) AddType(ctx context.Context, userID int64, in TypeInput) (int64, error) {
	code := strings.TrimSpace(in.Code)
	if !codePattern.MatchString(code) {
		return 0, request.Invalid("code")
	}
	if err := validateType(&in); err != nil {
		return 0, err
	}
	taken, err := s.client.SysDictType.Query().Where(sysdicttype.Code(code), sysdicttype.IsDelete(false)).Exist(ctx)
	if err != nil {
		return 0, err
	}
	if taken {
		return 0, errcode.New(errcode.DictTypeCodeExists)
	}
	r, err := s.client.SysDictType.Create().SetCode(code).SetName(in.Name).SetSort(int(in.Sort)).
		SetEnabled(in.Enabled == nil || *in.Enabled).SetNillableRemark(in.Remark).SetCreateUserID(userID).
		Save(ctx)
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.DictTypeCodeExists).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	return r.ID, Invalidate(ctx, s.store, s.events, code)
}

// UpdateType rewrites name, sort, enabled and remark; the code is immutable.
func (s *Service) UpdateType(ctx context.Context, userID, id int64, in TypeInput) error {
	if err := validateType(&in); err != nil {
		return err
	}
	r, err := s.liveType(ctx, id)
	if err != nil {
		return err
	}
	u := s.client.SysDictType.UpdateOneID(id).Where(sysdicttype.IsDelete(false)).
		SetName(in.Name).SetSort(int(in.Sort)).SetEnabled(in.Enabled == nil || *in.Enabled).SetUpdateUserID(userID)
	if in.Remark == nil {
		u.ClearRemark()
	} else {
		u.SetRemark(*in.Remark)
	}
	if err := u.Exec(ctx); err != nil {
		if ent.IsNotFound(err) {
			return errcode.New(errcode.DictTypeNotFound)
		}
		return err
	}
	return Invalidate(ctx, s.store, s.events, r.Code)
}

// DeleteType soft-deletes a live type and its items (43001 when missing).
func (s *Service) DeleteType(ctx context.Context, userID, id int64) error {
	return s.deleteTypes(ctx, []int64{id}, true, userID)
}

// DeleteTypeBatch soft-deletes the live types of in and their items;
// missing ids are skipped.
func (s *Service) DeleteTypeBatch(ctx context.Context, userID int64, in IDs) error {
	return s.deleteTypes(ctx, in.int64s(), false, userID)
}

// deleteTypes soft-deletes live types and their items in one transaction.
// A seed id refuses the whole call (43010); with one id, a missing type is
// 43001, in a batch missing ids are skipped.
func (s *Service) deleteTypes(ctx context.Context, ids []int64, single bool, userID int64) error {
	if err := protectSeed(ids); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	var codes []string
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		types, err := tx.SysDictType.Query().Where(sysdicttype.IDIn(ids...), sysdicttype.IsDelete(false)).All(ctx)
		if err != nil {
			return err
		}
		if single && len(types) == 0 {
			return errcode.New(errcode.DictTypeNotFound)
		}
		for _, t := range types {
			if err := tx.SysDictType.UpdateOneID(t.ID).
				SetIsDelete(true).SetDeleteKey(t.ID).SetUpdateUserID(userID).Exec(ctx); err != nil {
				return err
			}
			items, err := tx.SysDictItem.Query().
				Where(sysdictitem.DictTypeCode(t.Code), sysdictitem.IsDelete(false)).
				IDs(ctx)
			if err != nil {
				return err
			}
			if err := softDeleteItems(ctx, tx, items, userID); err != nil {
				return err
			}
			codes = append(codes, t.Code)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return Invalidate(ctx, s.store, s.events, codes...)
}

func softDeleteItems(ctx context.Context, tx *ent.Tx, ids []int64, userID int64) error {
	for _, id := range ids {
		if err := tx.SysDictItem.UpdateOneID(id).
			SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(userID).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Items returns the enabled items of a type sorted by sort, read through the
// cache entry "dict:<typeCode>". An unknown type has no items.
func (s *Service) Items(ctx context.Context, typeCode string) ([]Item, error) {
	if !codePattern.MatchString(typeCode) {
		return []Item{}, nil // cannot exist; nothing cached for it
	}
	key := KeyPrefix + typeCode
	if b, ok, err := s.store.Get(ctx, key); err == nil && ok {
		var out []Item
		if json.Unmarshal(b, &out) == nil {
			return out, nil
		}
	}
	rows, err := s.client.SysDictItem.Query().
		Where(sysdictitem.DictTypeCode(typeCode), sysdictitem.IsDelete(false), sysdictitem.Enabled(true)).
		Order(ent.Asc(sysdictitem.FieldSort), ent.Asc(sysdictitem.FieldID)).
		All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, len(rows))
	for _, r := range rows {
		if r.DictTypeCode == typeCode { // exact, whatever the collation
			out = append(out, itemDTO(r))
		}
	}
	if b, err := json.Marshal(out); err == nil {
		// A cache write failure only costs a database read next time.
		_ = s.store.Set(ctx, key, b, s.ttl)
	}
	return out, nil
}

// ItemPage lists live items, disabled ones included; TypeCode is exact.
func (s *Service) ItemPage(ctx context.Context, typeCode string, p request.Page) ([]Item, int, error) {
	q := s.client.SysDictItem.Query().Where(sysdictitem.IsDelete(false))
	if v := strings.TrimSpace(typeCode); v != "" {
		q.Where(sysdictitem.DictTypeCode(v))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	var opts []sysdictitem.OrderOption
	for _, o := range order(p, itemSortColumns) {
		opts = append(opts, o)
	}
	rows, err := q.Order(opts...).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	items := make([]Item, len(rows))
	for i, r := range rows {
		items[i] = itemDTO(r)
	}
	return items, total, nil
}

func validateItem(in *ItemInput) error {
	in.DictTypeCode = strings.TrimSpace(in.DictTypeCode)
	in.Label = strings.TrimSpace(in.Label)
	if in.Label == "" || utf8.RuneCountInString(in.Label) > maxLabelLen {
		return request.Invalid("label")
	}
	if in.Value == "" || utf8.RuneCountInString(in.Value) > maxValueLen {
		return request.Invalid("value")
	}
	return nil
}

// typeExists reports whether a live type has the code (43001 otherwise).
func typeExists(ctx context.Context, tx *ent.Tx, code string) error {
	if !codePattern.MatchString(code) {
		return errcode.New(errcode.DictTypeNotFound)
	}
	ok, err := tx.SysDictType.Query().Where(sysdicttype.Code(code), sysdicttype.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.DictTypeNotFound)
	}
	return nil
}

// valueTaken reports whether another live item of the type has the value.
func valueTaken(ctx context.Context, tx *ent.Tx, code, value string, except int64) error {
	ok, err := tx.SysDictItem.Query().Where(
		sysdictitem.DictTypeCode(code), sysdictitem.Value(value),
		sysdictitem.IsDelete(false), sysdictitem.IDNEQ(except),
	).Exist(ctx)
	if err != nil {
		return err
	}
	if ok {
		return errcode.New(errcode.DictItemValueExists)
	}
	return nil
}

// AddItem adds an item to an existing type (43001); its value is unique
// within the type (43011).
func (s *Service) AddItem(ctx context.Context, userID int64, in ItemInput) (int64, error) {
	if err := validateItem(&in); err != nil {
		return 0, err
	}
	var id int64
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		if err := typeExists(ctx, tx, in.DictTypeCode); err != nil {
			return err
		}
		if err := valueTaken(ctx, tx, in.DictTypeCode, in.Value, 0); err != nil {
			return err
		}
		r, err := tx.SysDictItem.Create().SetDictTypeCode(in.DictTypeCode).SetLabel(in.Label).
			SetValue(in.Value).SetSort(int(in.Sort)).SetEnabled(in.Enabled == nil || *in.Enabled).
			SetCreateUserID(userID).Save(ctx)
		if err != nil {
			return err
		}
		id = r.ID
		return nil
	})
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.DictItemValueExists).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	return id, Invalidate(ctx, s.store, s.events, in.DictTypeCode)
}

// UpdateItem rewrites an item (43003). A different dictTypeCode moves it to
// that type, which must exist (43001); an empty one keeps its type.
func (s *Service) UpdateItem(ctx context.Context, userID, id int64, in ItemInput) error {
	if err := validateItem(&in); err != nil {
		return err
	}
	var codes []string
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		cur, err := tx.SysDictItem.Query().Where(sysdictitem.ID(id), sysdictitem.IsDelete(false)).Only(ctx)
		if ent.IsNotFound(err) {
			return errcode.New(errcode.DictItemNotFound)
		}
		if err != nil {
			return err
		}
		code := cur.DictTypeCode
		codes = append(codes, code)
		if in.DictTypeCode != "" && in.DictTypeCode != code {
			if err := typeExists(ctx, tx, in.DictTypeCode); err != nil {
				return err
			}
			code = in.DictTypeCode
			codes = append(codes, code)
		}
		if err := valueTaken(ctx, tx, code, in.Value, id); err != nil {
			return err
		}
		return tx.SysDictItem.UpdateOneID(id).SetDictTypeCode(code).SetLabel(in.Label).SetValue(in.Value).
			SetSort(int(in.Sort)).SetEnabled(in.Enabled == nil || *in.Enabled).SetUpdateUserID(userID).
			Exec(ctx)
	})
	if ent.IsConstraintError(err) {
		return errcode.New(errcode.DictItemValueExists).Wrap(err)
	}
	if err != nil {
		return err
	}
	return Invalidate(ctx, s.store, s.events, codes...)
}

// DeleteItem soft-deletes a live item (43003 when missing).
func (s *Service) DeleteItem(ctx context.Context, userID, id int64) error {
	return s.deleteItems(ctx, []int64{id}, true, userID)
}

// DeleteItemBatch soft-deletes the live items of in; missing ids are
// skipped.
func (s *Service) DeleteItemBatch(ctx context.Context, userID int64, in IDs) error {
	return s.deleteItems(ctx, in.int64s(), false, userID)
}

// deleteItems soft-deletes live items. A seed id refuses the whole call
// (43010); with one id, a missing item is 43003, in a batch missing ids
// are skipped.
func (s *Service) deleteItems(ctx context.Context, ids []int64, single bool, userID int64) error {
	if err := protectSeed(ids); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	var codes []string
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		rows, err := tx.SysDictItem.Query().Where(sysdictitem.IDIn(ids...), sysdictitem.IsDelete(false)).All(ctx)
		if err != nil {
			return err
		}
		if single && len(rows) == 0 {
			return errcode.New(errcode.DictItemNotFound)
		}
		live := make([]int64, len(rows))
		seen := map[string]bool{}
		for i, r := range rows {
			live[i] = r.ID
			if !seen[r.DictTypeCode] {
				seen[r.DictTypeCode] = true
				codes = append(codes, r.DictTypeCode)
			}
		}
		return softDeleteItems(ctx, tx, live, userID)
	})
	if err != nil {
		return err
	}
	return Invalidate(ctx, s.store, s.events, codes...)
}

func protectSeed(ids []int64) error {
	for _, id := range ids {
		if id <= 0 {
			return request.Invalid("ids")
		}
	}
	for _, id := range ids {
		if id < SeedIDLimit {
			return errcode.New(errcode.SeedDataProtected)
		}
	}
	return nil
}

func blankToNil(p *string) *string {
	if p == nil {
		return nil
	}
	v := strings.TrimSpace(*p)
	if v == "" {
		return nil
	}
	return &v
}
