package org

import (
	"context"
	"crypto/rand"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/request"
)

// orgService holds the rules of the organisation tree.
type orgService struct {
	client *ent.Client
	store  cache.Store
}

// changed runs after a committed change of the org tree: cached data
// scopes ("own org and below" is resolved through the tree) are dropped.
func (s *orgService) changed(ctx context.Context) error {
	if s.store == nil {
		return nil
	}
	_, err := datascope.InvalidateAll(ctx, s.store)
	return err
}

// List returns every live organisation, by sort then id.
func (s *orgService) List(ctx context.Context) ([]SysOrg, error) {
	all, err := s.client.SysOrg.Query().Where(sysorg.IsDelete(false)).
		Order(sysorg.BySort(), sysorg.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SysOrg, len(all))
	for i, o := range all {
		out[i] = toSysOrg(o)
	}
	return out, nil
}

func (s *orgService) live(ctx context.Context, id int64) (*ent.SysOrg, error) {
	o, err := s.client.SysOrg.Query().Where(sysorg.ID(id), sysorg.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.OrgNotFound)
	}
	return o, err
}

// Get returns a live organisation (42xxx OrgNotFound otherwise).
func (s *orgService) Get(ctx context.Context, id int64) (SysOrg, error) {
	o, err := s.live(ctx, id)
	if err != nil {
		return SysOrg{}, err
	}
	return toSysOrg(o), nil
}

// codeTaken reports whether a live org other than except holds code.
func (s *orgService) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return s.client.SysOrg.Query().
		Where(sysorg.Code(code), sysorg.IsDelete(false), sysorg.IDNEQ(except)).Exist(ctx)
}

// checkParent returns 42008 unless parentID is 0 or a live org.
func (s *orgService) checkParent(ctx context.Context, parentID int64) error {
	if parentID == 0 {
		return nil
	}
	ok, err := s.client.SysOrg.Query().Where(sysorg.ID(parentID), sysorg.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.OrgInvalidParent)
	}
	return nil
}

// codeChars are letters and digits without the easily confused 0 O 1 l I.
const codeChars = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789"

func randomCode() string {
	b := make([]byte, 0, generatedCode)
	limit := 256 - 256%len(codeChars) // rejection sampling: no modulo bias
	var r [generatedCode]byte
	for len(b) < generatedCode {
		_, _ = rand.Read(r[:]) // never fails (crypto/rand)
		for _, x := range r {
			if int(x) < limit && len(b) < generatedCode {
				b = append(b, codeChars[int(x)%len(codeChars)])
			}
		}
	}
	return string(b)
}

// Add creates an organisation under a live parent (or at the root) and
// returns its id; an empty code is generated.
func (s *orgService) Add(ctx context.Context, userID int64, in OrgInput) (int64, error) {
	f, err := in.validate()
	if err != nil {
		return 0, err
	}
	if err := s.checkParent(ctx, f.parentID); err != nil {
		return 0, err
	}
	var code string
	if f.code != nil {
		code = *f.code
		if taken, err := s.codeTaken(ctx, code, 0); err != nil {
			return 0, err
		} else if taken {
			return 0, errcode.New(errcode.OrgCodeExists)
		}
	} else {
		for range 10 {
			code = randomCode()
			taken, err := s.codeTaken(ctx, code, 0)
			if err != nil {
				return 0, err
			}
			if !taken {
				break
			}
		}
	}
	o, err := s.client.SysOrg.Create().
		SetParentID(f.parentID).SetName(f.name).SetCode(code).SetNillableCategory(f.category).
		SetSort(f.sort).SetEnabled(f.enabled).SetCreateUserID(userID).Save(ctx)
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.OrgCodeExists).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	if err := s.changed(ctx); err != nil {
		return 0, err
	}
	return o.ID, nil
}

// Update changes a live organisation; its new parent must be live and
// neither the org itself nor one of its descendants. A nil code keeps the
// current one.
func (s *orgService) Update(ctx context.Context, userID, id int64, in OrgInput) error {
	f, err := in.validate()
	if err != nil {
		return err
	}
	live, err := s.client.SysOrg.Query().Where(sysorg.IsDelete(false)).
		Select(sysorg.FieldID, sysorg.FieldParentID).All(ctx)
	if err != nil {
		return err
	}
	parentOf := make(map[int64]int64, len(live))
	for _, o := range live {
		parentOf[o.ID] = o.ParentID
	}
	if _, ok := parentOf[id]; !ok {
		return errcode.New(errcode.OrgNotFound)
	}
	if f.parentID != 0 {
		if _, ok := parentOf[f.parentID]; !ok {
			return errcode.New(errcode.OrgInvalidParent)
		}
	}
	// The new parent must be neither the org itself nor one of its
	// descendants: a cycle would detach the whole branch from the tree.
	seen := make(map[int64]bool)
	for cur := f.parentID; cur != 0 && !seen[cur]; cur = parentOf[cur] {
		if cur == id {
			return errcode.New(errcode.OrgInvalidParent)
		}
		seen[cur] = true
	}
	u := s.client.SysOrg.Update().Where(sysorg.ID(id), sysorg.IsDelete(false)).
		SetParentID(f.parentID).SetName(f.name).SetSort(f.sort).SetEnabled(f.enabled).SetUpdateUserID(userID)
	if f.code != nil {
		if taken, err := s.codeTaken(ctx, *f.code, id); err != nil {
			return err
		} else if taken {
			return errcode.New(errcode.OrgCodeExists)
		}
		u.SetCode(*f.code)
	}
	if f.category == nil {
		u.ClearCategory()
	} else {
		u.SetCategory(*f.category)
	}
	n, err := u.Save(ctx)
	if ent.IsConstraintError(err) {
		return errcode.New(errcode.OrgCodeExists).Wrap(err)
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.OrgNotFound)
	}
	return s.changed(ctx)
}

// Delete soft-deletes a live organisation without live children or users.
func (s *orgService) Delete(ctx context.Context, userID, id int64) error {
	if _, err := s.live(ctx, id); err != nil {
		return err
	}
	children, err := s.client.SysOrg.Query().
		Where(sysorg.ParentID(id), sysorg.IsDelete(false), sysorg.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if children {
		return errcode.New(errcode.OrgHasChildren)
	}
	users, err := s.client.SysUser.Query().Where(sysuser.OrgID(id), sysuser.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if users {
		return errcode.New(errcode.OrgHasUsers)
	}
	n, err := s.client.SysOrg.Update().Where(sysorg.ID(id), sysorg.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(userID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.OrgNotFound)
	}
	return s.changed(ctx)
}

// Copy clones the org and its live subtree as a sibling of the org, in one
// transaction, and returns the new root's id.
func (s *orgService) Copy(ctx context.Context, userID, id int64, in CopyInput) (int64, error) {
	name := ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	if utf8.RuneCountInString(name) > maxOrgName {
		return 0, request.Invalid("name")
	}
	var root int64
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		var err error
		root, err = copyTree(ctx, tx, id, name, userID)
		if ent.IsConstraintError(err) {
			return errcode.New(errcode.OrgCodeExists).Wrap(err)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := s.changed(ctx); err != nil {
		return 0, err
	}
	return root, nil
}

func copyTree(ctx context.Context, tx *ent.Tx, id int64, name string, userID int64) (int64, error) {
	all, err := tx.SysOrg.Query().Where(sysorg.IsDelete(false)).All(ctx)
	if err != nil {
		return 0, err
	}
	var source *ent.SysOrg
	children := make(map[int64][]*ent.SysOrg)
	// Codes compare case-insensitively here, so a clone never collides on a
	// database whose collation ignores case (MySQL).
	used := make(map[string]bool, len(all))
	for _, o := range all {
		if o.ID == id {
			source = o
		}
		children[o.ParentID] = append(children[o.ParentID], o)
		used[strings.ToLower(o.Code)] = true
	}
	if source == nil {
		return 0, errcode.New(errcode.OrgNotFound)
	}
	for _, kids := range children {
		sort.Slice(kids, func(i, j int) bool {
			if kids[i].Sort != kids[j].Sort {
				return kids[i].Sort < kids[j].Sort
			}
			return kids[i].ID < kids[j].ID
		})
	}
	if name == "" {
		name = textclip.Runes(source.Name, maxOrgName-utf8.RuneCountInString(copyNameSuffix)) + copyNameSuffix
	}
	// Breadth first from the source: a parent is always cloned before its
	// children. visited guards against a cycle in existing data.
	newID := make(map[int64]int64)
	visited := map[int64]bool{id: true}
	queue := []*ent.SysOrg{source}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		parent, nodeName := source.ParentID, name
		if o.ID != id {
			parent, nodeName = newID[o.ParentID], o.Name
		}
		clone, err := tx.SysOrg.Create().
			SetParentID(parent).SetName(nodeName).SetCode(cloneCode(o.Code, used)).
			SetNillableCategory(o.Category).SetSort(o.Sort).SetEnabled(o.Enabled).
			SetCreateUserID(userID).Save(ctx)
		if err != nil {
			return 0, err
		}
		newID[o.ID] = clone.ID
		for _, kid := range children[o.ID] {
			if !visited[kid.ID] {
				visited[kid.ID] = true
				queue = append(queue, kid)
			}
		}
	}
	return newID[id], nil
}

// cloneCode returns code-copy, code-copy2, ... : the first one no live org
// holds (case-insensitively), within the column's length, and records it.
func cloneCode(code string, used map[string]bool) string {
	for i := 1; ; i++ {
		suffix := "-copy"
		if i > 1 {
			suffix += strconv.Itoa(i)
		}
		candidate := textclip.Runes(code, maxOrgCode-len(suffix)) + suffix
		if !used[strings.ToLower(candidate)] {
			used[strings.ToLower(candidate)] = true
			return candidate
		}
	}
}

// positionService holds the rules of positions.
type positionService struct {
	client *ent.Client
}

// positionSort maps the contract's sortable property names (compared
// case-insensitively) to columns; anything else keeps the default order.
var positionSort = map[string]string{
	"id":         sysposition.FieldID,
	"name":       sysposition.FieldName,
	"code":       sysposition.FieldCode,
	"sort":       sysposition.FieldSort,
	"enabled":    sysposition.FieldEnabled,
	"createtime": sysposition.FieldCreateTime,
	"updatetime": sysposition.FieldUpdateTime,
}

// Page returns one page of live positions whose name contains name
// (case-insensitively; blank matches all) and their total.
func (s *positionService) Page(ctx context.Context, name string, pg request.Page) ([]SysPosition, int, error) {
	q := s.client.SysPosition.Query().Where(sysposition.IsDelete(false))
	if name = strings.TrimSpace(name); name != "" {
		q = q.Where(sysposition.NameContainsFold(name))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	if col, ok := positionSort[strings.ToLower(strings.TrimSpace(pg.SortField))]; ok {
		dir := sql.OrderAsc()
		if pg.Desc {
			dir = sql.OrderDesc()
		}
		q = q.Order(sql.OrderByField(col, dir).ToFunc(), sysposition.ByID())
	} else {
		q = q.Order(sysposition.BySort(), sysposition.ByID())
	}
	rows, err := q.Offset(pg.Offset()).Limit(pg.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	items := make([]SysPosition, len(rows))
	for i, r := range rows {
		items[i] = toSysPosition(r)
	}
	return items, total, nil
}

func (s *positionService) live(ctx context.Context, id int64) (*ent.SysPosition, error) {
	p, err := s.client.SysPosition.Query().Where(sysposition.ID(id), sysposition.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.PositionNotFound)
	}
	return p, err
}

// Get returns a live position.
func (s *positionService) Get(ctx context.Context, id int64) (SysPosition, error) {
	p, err := s.live(ctx, id)
	if err != nil {
		return SysPosition{}, err
	}
	return toSysPosition(p), nil
}

// codeTaken reports whether a live position other than except holds code.
func (s *positionService) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return s.client.SysPosition.Query().
		Where(sysposition.Code(code), sysposition.IsDelete(false), sysposition.IDNEQ(except)).Exist(ctx)
}

// Add creates a position with a code no live position holds.
func (s *positionService) Add(ctx context.Context, userID int64, in PositionInput) (int64, error) {
	f, err := in.validate()
	if err != nil {
		return 0, err
	}
	if taken, err := s.codeTaken(ctx, f.code, 0); err != nil {
		return 0, err
	} else if taken {
		return 0, errcode.New(errcode.PositionCodeExists)
	}
	pos, err := s.client.SysPosition.Create().
		SetName(f.name).SetCode(f.code).SetSort(f.sort).SetEnabled(f.enabled).
		SetCreateUserID(userID).Save(ctx)
	if err != nil {
		return 0, err
	}
	return pos.ID, nil
}

// Update changes a live position.
func (s *positionService) Update(ctx context.Context, userID, id int64, in PositionInput) error {
	f, err := in.validate()
	if err != nil {
		return err
	}
	if _, err := s.live(ctx, id); err != nil {
		return err
	}
	if taken, err := s.codeTaken(ctx, f.code, id); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.PositionCodeExists)
	}
	n, err := s.client.SysPosition.Update().Where(sysposition.ID(id), sysposition.IsDelete(false)).
		SetName(f.name).SetCode(f.code).SetSort(f.sort).SetEnabled(f.enabled).
		SetUpdateUserID(userID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.PositionNotFound)
	}
	return nil
}

// Delete soft-deletes a live position no live user holds.
func (s *positionService) Delete(ctx context.Context, userID, id int64) error {
	if _, err := s.live(ctx, id); err != nil {
		return err
	}
	held, err := s.client.SysUser.Query().Where(sysuser.PositionID(id), sysuser.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if held {
		return errcode.New(errcode.PositionHasUsers)
	}
	n, err := s.client.SysPosition.Update().Where(sysposition.ID(id), sysposition.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(userID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.PositionNotFound)
	}
	return nil
}
