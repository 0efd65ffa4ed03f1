package inventory

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// The approval flow: a clerk asks for a stock level to change; the
// approvers (the roles granted the approve button, else the super-admin)
// get a notice whose button approves it; the approval is consumed once
// and the clerk is told.
const (
	// AdjustmentNotFound: no pending adjustment of that id (approved
	// already, or never asked for).
	AdjustmentNotFound errcode.Code = 60003
	// StockLevelNotFound: the stock level asked about is not live.
	StockLevelNotFound errcode.Code = 60004

	menuAskAdjust     = 1118
	menuApproveAdjust = 1119
)

var (
	codeAskAdjust     = route.PermissionCode("POST", host.APIPrefix+"/inventory/stock-level/{id}/adjustments")
	codeApproveAdjust = route.PermissionCode("POST", host.APIPrefix+"/inventory/adjustments/{id}/approve")
)

var approvalMenus = []seed.Menu{
	{ID: menuAskAdjust, ParentID: 1110, Type: seed.MenuButton, Title: "库存-申请调整", Permission: codeAskAdjust, Sort: 8},
	{ID: menuApproveAdjust, ParentID: 1110, Type: seed.MenuButton, Title: "库存-审批调整", Permission: codeApproveAdjust, Sort: 9},
}

// adjustment is a pending change of one stock level (a real module keeps
// these in a table of its own; a map keeps the example short).
type adjustment struct {
	id, stockID, by int64
	quantity        int64
	reason          string
}

type approvals struct {
	d       *module.Deps
	mu      sync.Mutex
	pending map[int64]adjustment
}

// AdjustInput is the body of POST /inventory/stock-level/{id}/adjustments.
type AdjustInput struct {
	Quantity request.Int64 `json:"quantity"`
	Reason   string        `json:"reason"`
}

func (a *approvals) mount(g *route.Group) {
	g.Post("/stock-level/{id}/adjustments", route.Permission, a.ask).Doc("Ask for a stock level adjustment", AdjustInput{}, int64(0))
	g.Post("/adjustments/{id}/approve", route.Permission, a.approve).Doc("Approve a stock level adjustment", nil, true)
}

func (a *approvals) ask(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in AdjustInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	in.Reason = strings.TrimSpace(in.Reason)
	if in.Quantity < 0 || in.Quantity > 1e9 {
		return request.Invalid("quantity")
	}
	if in.Reason == "" || len([]rune(in.Reason)) > 200 {
		return request.Invalid("reason")
	}
	ctx := c.Context()
	sku, ok, err := a.stockSKU(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(StockLevelNotFound)
	}
	adj := adjustment{id: a.d.NewID(), stockID: id, by: p.UserID, quantity: int64(in.Quantity), reason: in.Reason}
	a.mu.Lock()
	a.pending[adj.id] = adj
	a.mu.Unlock()
	if a.d.Notices != nil {
		n := module.Notice{
			Title:   fmt.Sprintf("库存调整待审批 / Stock adjustment to approve: %s → %d", sku, adj.quantity),
			Content: in.Reason,
			Actions: []module.NoticeAction{{Label: "批准 / Approve", Method: "POST", URL: fmt.Sprintf("/api/v1/inventory/adjustments/%d/approve", adj.id),
				Confirm: "批准该调整? / Approve this adjustment?"}},
		}
		roles, err := a.d.Client.SysRoleMenu.Query().Where(sysrolemenu.MenuID(menuApproveAdjust)).Select(sysrolemenu.FieldRoleID).Strings(ctx)
		if err != nil {
			return err
		}
		for _, r := range roles {
			var rid int64
			_, _ = fmt.Sscan(r, &rid)
			n.Roles = append(n.Roles, rid)
		}
		if len(n.Roles) == 0 {
			n.Users = []int64{seed.AdminID}
		}
		if _, err := a.d.Notices.Notify(ctx, n); err != nil {
			return err
		}
	}
	return envelope.OK(c, adj.id)
}

// approve consumes the pending adjustment (once, whatever the number of
// parallel approvals), applies it and tells the clerk.
func (a *approvals) approve(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	a.mu.Lock()
	adj, ok := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if !ok {
		return errcode.New(AdjustmentNotFound)
	}
	ctx := c.Context()
	q, args := sql.Dialect(a.d.Dialect).Update("inv_stock_level").Set("quantity", adj.quantity).
		Where(sql.And(sql.EQ("id", adj.stockID), sql.EQ("is_delete", false))).Query()
	res, err := a.d.Client.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errcode.New(StockLevelNotFound)
	}
	if a.d.Totals != nil {
		a.d.Totals.Bump(ctx, "inv_stock_level")
	}
	if a.d.Notices != nil {
		if _, err := a.d.Notices.Notify(ctx, module.Notice{Users: []int64{adj.by},
			Title: fmt.Sprintf("库存调整已批准 / Stock adjustment approved: %d", adj.quantity), Content: adj.reason}); err != nil {
			return err
		}
	}
	return envelope.OK(c, true)
}

// stockSKU reads the SKU of a live stock level.
func (a *approvals) stockSKU(ctx context.Context, id int64) (string, bool, error) {
	q, args := sql.Dialect(a.d.Dialect).Select("sku").From(sql.Table("inv_stock_level")).
		Where(sql.And(sql.EQ("id", id), sql.EQ("is_delete", false))).Query()
	rows, err := a.d.Client.QueryContext(ctx, q, args...)
	if err != nil {
		return "", false, err
	}
	defer func() { _ = rows.Close() }()
	if !rows.Next() {
		return "", false, rows.Err()
	}
	var sku string
	err = rows.Scan(&sku)
	return sku, err == nil, err
}
