package org

import (
	"context"
	"strings"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

// Field bounds (ent/schema/org.go).
const (
	maxPositionName = 64
	maxPositionCode = 64
)

// SysPosition is a position as the API returns it.
type SysPosition struct {
	ID           int64   `json:"id"`
	Name         string  `json:"name"`
	Code         string  `json:"code"`
	Sort         int     `json:"sort"`
	Enabled      bool    `json:"enabled"`
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
}

func toSysPosition(p *ent.SysPosition) SysPosition {
	return SysPosition{
		ID: p.ID, Name: p.Name, Code: p.Code, Sort: p.Sort, Enabled: p.Enabled, IsDelete: p.IsDelete,
		CreateTime: request.EntityTime(p.CreateTime), CreateUserID: p.CreateUserID,
		UpdateTime: request.EntityTimePtr(p.UpdateTime), UpdateUserID: p.UpdateUserID,
	}
}

// PositionInput is the body of POST /sys/position/add and PUT
// /sys/position/{id}. An omitted enabled means true.
type PositionInput struct {
	Name    string        `json:"name"`
	Code    string        `json:"code"`
	Sort    request.Int64 `json:"sort"`
	Enabled *bool         `json:"enabled"`
}

type positionFields struct {
	name, code string
	sort       int
	enabled    bool
}

func (in PositionInput) validate() (positionFields, error) {
	f := positionFields{sort: int(in.Sort), enabled: request.BoolOr(in.Enabled, true)}
	var err error
	if f.name, err = request.RequiredText("name", in.Name, maxPositionName); err != nil {
		return f, err
	}
	if f.code, err = request.RequiredText("code", in.Code, maxPositionCode); err != nil {
		return f, err
	}
	return f, nil
}

// positions serves /sys/position.
type positions struct {
	client      *ent.Client
	maxPageSize int
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

func (h *positions) page(c fiber.Ctx) error {
	pg, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	ctx := c.Context()
	q := h.client.SysPosition.Query().Where(sysposition.IsDelete(false))
	if name := strings.TrimSpace(request.Query(c, "Name")); name != "" {
		q = q.Where(sysposition.NameContainsFold(name))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return err
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
		return err
	}
	items := make([]SysPosition, len(rows))
	for i, r := range rows {
		items[i] = toSysPosition(r)
	}
	return envelope.OK(c, request.NewPagedList(pg, total, items))
}

func (h *positions) live(ctx context.Context, id int64) (*ent.SysPosition, error) {
	p, err := h.client.SysPosition.Query().Where(sysposition.ID(id), sysposition.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.PositionNotFound)
	}
	return p, err
}

func (h *positions) get(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	p, err := h.live(c.Context(), id)
	if err != nil {
		return err
	}
	return envelope.OK(c, toSysPosition(p))
}

// codeTaken reports whether a live position other than except holds code.
func (h *positions) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return h.client.SysPosition.Query().
		Where(sysposition.Code(code), sysposition.IsDelete(false), sysposition.IDNEQ(except)).Exist(ctx)
}

func (h *positions) add(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in PositionInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	f, err := in.validate()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if taken, err := h.codeTaken(ctx, f.code, 0); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.PositionCodeExists)
	}
	pos, err := h.client.SysPosition.Create().
		SetName(f.name).SetCode(f.code).SetSort(f.sort).SetEnabled(f.enabled).
		SetCreateUserID(p.UserID).Save(ctx)
	if err != nil {
		return err
	}
	return envelope.OK(c, pos.ID)
}

func (h *positions) update(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in PositionInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	f, err := in.validate()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if _, err := h.live(ctx, id); err != nil {
		return err
	}
	if taken, err := h.codeTaken(ctx, f.code, id); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.PositionCodeExists)
	}
	n, err := h.client.SysPosition.Update().Where(sysposition.ID(id), sysposition.IsDelete(false)).
		SetName(f.name).SetCode(f.code).SetSort(f.sort).SetEnabled(f.enabled).
		SetUpdateUserID(p.UserID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.PositionNotFound)
	}
	return envelope.OK(c, true)
}

func (h *positions) delete(c fiber.Ctx) error {
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
	held, err := h.client.SysUser.Query().Where(sysuser.PositionID(id), sysuser.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if held {
		return errcode.New(errcode.PositionHasUsers)
	}
	n, err := h.client.SysPosition.Update().Where(sysposition.ID(id), sysposition.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(p.UserID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.PositionNotFound)
	}
	return envelope.OK(c, true)
}
