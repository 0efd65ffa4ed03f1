package org

import (
	"context"
	"crypto/rand"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/textclip"
)

// Field bounds (ent/schema/org.go).
const (
	maxOrgName     = 128
	maxOrgCode     = 64
	maxOrgCategory = 32
	generatedCode  = 10
	copyNameSuffix = "-副本"
)

// SysOrg is an organisation as the API returns it.
type SysOrg struct {
	ID           int64   `json:"id"`
	ParentID     int64   `json:"parentId"`
	Name         string  `json:"name"`
	Code         string  `json:"code"`
	Category     *string `json:"category"`
	Sort         int     `json:"sort"`
	Enabled      bool    `json:"enabled"`
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
}

func toSysOrg(o *ent.SysOrg) SysOrg {
	return SysOrg{
		ID: o.ID, ParentID: o.ParentID, Name: o.Name, Code: o.Code, Category: o.Category,
		Sort: o.Sort, Enabled: o.Enabled, IsDelete: o.IsDelete,
		CreateTime: request.EntityTime(o.CreateTime), CreateUserID: o.CreateUserID,
		UpdateTime: request.EntityTimePtr(o.UpdateTime), UpdateUserID: o.UpdateUserID,
	}
}

// OrgInput is the body of POST /sys/org/add and PUT /sys/org/{id}. An
// empty code is generated on add and left unchanged on update; an omitted
// enabled means true.
type OrgInput struct {
	ParentID request.Int64 `json:"parentId"`
	Name     string        `json:"name"`
	Code     *string       `json:"code"`
	Category *string       `json:"category"`
	Sort     request.Int64 `json:"sort"`
	Enabled  *bool         `json:"enabled"`
}

// CopyInput is the optional body of POST /sys/org/{id}/copy.
type CopyInput struct {
	// Name of the new root; empty means the original name + "-副本".
	Name *string `json:"name"`
}

type orgFields struct {
	parentID int64
	name     string
	code     *string
	category *string
	sort     int
	enabled  bool
}

func (in OrgInput) validate() (orgFields, error) {
	f := orgFields{parentID: int64(in.ParentID), sort: int(in.Sort), enabled: request.BoolOr(in.Enabled, true)}
	var err error
	if f.parentID < 0 {
		return f, request.Invalid("parentId")
	}
	if f.name, err = request.RequiredText("name", in.Name, maxOrgName); err != nil {
		return f, err
	}
	if f.code, err = request.OptionalText("code", in.Code, maxOrgCode); err != nil {
		return f, err
	}
	if f.category, err = request.OptionalText("category", in.Category, maxOrgCategory); err != nil {
		return f, err
	}
	return f, nil
}

// orgs serves /sys/org.
type orgs struct {
	client *ent.Client
	store  cache.Store
}

// changed runs after a committed change of the org tree: cached data
// scopes ("own org and below" is resolved through the tree) are dropped.
func (h *orgs) changed(ctx context.Context) error {
	if h.store == nil {
		return nil
	}
	_, err := datascope.InvalidateAll(ctx, h.store)
	return err
}

func (h *orgs) list(c fiber.Ctx) error {
	all, err := h.client.SysOrg.Query().Where(sysorg.IsDelete(false)).
		Order(sysorg.BySort(), sysorg.ByID()).All(c.Context())
	if err != nil {
		return err
	}
	out := make([]SysOrg, len(all))
	for i, o := range all {
		out[i] = toSysOrg(o)
	}
	return envelope.OK(c, out)
}

func (h *orgs) live(ctx context.Context, id int64) (*ent.SysOrg, error) {
	o, err := h.client.SysOrg.Query().Where(sysorg.ID(id), sysorg.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.OrgNotFound)
	}
	return o, err
}

func (h *orgs) get(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	o, err := h.live(c.Context(), id)
	if err != nil {
		return err
	}
	return envelope.OK(c, toSysOrg(o))
}

// codeTaken reports whether a live org other than except holds code.
func (h *orgs) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return h.client.SysOrg.Query().
		Where(sysorg.Code(code), sysorg.IsDelete(false), sysorg.IDNEQ(except)).Exist(ctx)
}

// checkParent returns 42008 unless parentID is 0 or a live org.
func (h *orgs) checkParent(ctx context.Context, parentID int64) error {
	if parentID == 0 {
		return nil
	}
	ok, err := h.client.SysOrg.Query().Where(sysorg.ID(parentID), sysorg.IsDelete(false)).Exist(ctx)
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

func (h *orgs) add(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in OrgInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	f, err := in.validate()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if err := h.checkParent(ctx, f.parentID); err != nil {
		return err
	}
	var code string
	if f.code != nil {
		code = *f.code
		if taken, err := h.codeTaken(ctx, code, 0); err != nil {
			return err
		} else if taken {
			return errcode.New(errcode.OrgCodeExists)
		}
	} else {
		for range 10 {
			code = randomCode()
			taken, err := h.codeTaken(ctx, code, 0)
			if err != nil {
				return err
			}
			if !taken {
				break
			}
		}
	}
	o, err := h.client.SysOrg.Create().
		SetParentID(f.parentID).SetName(f.name).SetCode(code).SetNillableCategory(f.category).
		SetSort(f.sort).SetEnabled(f.enabled).SetCreateUserID(p.UserID).Save(ctx)
	if ent.IsConstraintError(err) {
		return errcode.New(errcode.OrgCodeExists).Wrap(err)
	}
	if err != nil {
		return err
	}
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, o.ID)
}

func (h *orgs) update(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in OrgInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	f, err := in.validate()
	if err != nil {
		return err
	}
	ctx := c.Context()
	live, err := h.client.SysOrg.Query().Where(sysorg.IsDelete(false)).
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
	u := h.client.SysOrg.Update().Where(sysorg.ID(id), sysorg.IsDelete(false)).
		SetParentID(f.parentID).SetName(f.name).SetSort(f.sort).SetEnabled(f.enabled).SetUpdateUserID(p.UserID)
	if f.code != nil {
		if taken, err := h.codeTaken(ctx, *f.code, id); err != nil {
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
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *orgs) delete(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Context()
	if _, err := h.live(ctx, id); err != nil {
		return err
	}
	children, err := h.client.SysOrg.Query().
		Where(sysorg.ParentID(id), sysorg.IsDelete(false), sysorg.IDNEQ(id)).Exist(ctx)
	if err != nil {
		return err
	}
	if children {
		return errcode.New(errcode.OrgHasChildren)
	}
	users, err := h.client.SysUser.Query().Where(sysuser.OrgID(id), sysuser.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if users {
		return errcode.New(errcode.OrgHasUsers)
	}
	n, err := h.client.SysOrg.Update().Where(sysorg.ID(id), sysorg.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(p.UserID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.OrgNotFound)
	}
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

// copy clones the org and its live subtree as a sibling of the org, in one
// transaction, and returns the new root's id.
func (h *orgs) copy(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in CopyInput
	if len(strings.TrimSpace(string(c.Body()))) > 0 {
		if err := request.JSON(c, &in); err != nil {
			return err
		}
	}
	name := ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	if utf8.RuneCountInString(name) > maxOrgName {
		return request.Invalid("name")
	}
	ctx := c.Context()
	tx, err := h.client.Tx(ctx)
	if err != nil {
		return err
	}
	root, err := copyTree(ctx, tx, id, name, p.UserID)
	if err != nil {
		_ = tx.Rollback()
		if ent.IsConstraintError(err) {
			return errcode.New(errcode.OrgCodeExists).Wrap(err)
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, root)
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
