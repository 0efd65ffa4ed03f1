package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The business-resource scenarios (-only resources): the example
// inventory application's stock levels (host/resource, an org-scoped
// resource) at stockRows rows across the generated organisations.
const (
	stockRows   = 1_000_000
	stockBase   = 70_000_000
	stockButton = 1111 // "库存-查询" of examples/inventory (Menu.ID 1110 + 1)
	stockMenuID = 500_000
	stockPage   = "/api/v1/inventory/stock-level/page"
)

// buildInventory builds the example application (the kernel plus the
// inventory module) the resource scenarios run.
func buildInventory(ctx context.Context, o *options) error {
	o.bin = filepath.Join(o.out, "bin", "inventory")
	logf("building %s", o.bin)
	//nolint:gosec // fixed arguments
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", o.bin, "./examples/inventory/cmd/inventory")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the inventory example: %w", err)
	}
	return nil
}

// fillStock adds the stock rows once (the kernel created the table at its
// start) and grants the scoped role the stock page.
func fillStock(ctx context.Context, o options, t *target) error {
	n, err := t.count(ctx, "inv_stock_level")
	if err != nil {
		return err
	}
	if n >= stockRows {
		logf("inv_stock_level already holds %d rows", n)
		return t.analyze(ctx, "inv_stock_level")
	}
	if n > 0 {
		return fmt.Errorf("inv_stock_level holds %d rows, fewer than %d: delete them first", n, stockRows)
	}
	start := time.Now()
	now := time.Now().UTC().Truncate(time.Second)
	orgs := o.orgs
	if err := t.insert(ctx, "inv_stock_level", []string{"id", "create_time", "is_delete", "delete_key", "sku", "org_id", "quantity", "reorder_level"},
		stockRows, func(i int, a []any) {
			a[0], a[1], a[2], a[3] = stockBase+int64(i), now.Add(-time.Duration(stockRows-i)*time.Second), false, 0
			a[4], a[5], a[6], a[7] = fmt.Sprintf("P%05d", i/orgs), orgBase+int64(i%orgs), int64(i*7919%10000), int64(10)
		}); err != nil {
		return err
	}
	//nolint:gosec // placeholders only: ph renders $n or ?
	if _, err := t.db.ExecContext(ctx, "DELETE FROM sys_role_menu WHERE id = "+t.ph(1), stockMenuID); err != nil {
		return err
	}
	//nolint:gosec // placeholders only: ph renders $n or ?
	if _, err := t.db.ExecContext(ctx, "INSERT INTO sys_role_menu (id, create_time, role_id, menu_id) VALUES ("+t.ph(1)+","+t.ph(2)+","+t.ph(3)+","+t.ph(4)+")",
		stockMenuID, now, roleBase+int64(o.roles), stockButton); err != nil {
		return err
	}
	logf("%d stock rows in %s", stockRows, time.Since(start).Round(time.Millisecond))
	return t.analyze(ctx, "inv_stock_level")
}

// resourceScenarios measures the stock-level resource's page at a million
// rows: unfiltered, deep, filtered by site, by quantity range, sorted by
// quantity, and for the scoped user (org and below, ~10 % of the sites).
func resourceScenarios(ctx context.Context, c *client, o options, t *target, logPath, admin, scoped string, rep *report) error {
	scenarios := []scenario{
		{"stock page 1 (super-admin, 1M rows)", stockPage + "?Current=1&Size=20", admin, true},
		{"stock page 100 (super-admin)", stockPage + "?Current=100&Size=20", admin, true},
		{"stock filtered by site (1 000 rows)", stockPage + fmt.Sprintf("?Current=1&Size=20&orgId=%d", orgBase+17), admin, true},
		{"stock filtered by SKU (1 000 rows)", stockPage + "?Current=1&Size=20&sku=P00042", admin, true},
		{"stock quantity range (1 %)", stockPage + "?Current=1&Size=20&quantityFrom=100&quantityTo=199", admin, true},
		{"stock sorted by quantity", stockPage + "?Current=1&Size=20&SortField=quantity&SortOrder=desc", admin, true},
		{"stock page 1 (scope: org and below, ~10 %)", stockPage + "?Current=1&Size=20", scoped, true},
		{"stock page 50 (scope: org and below)", stockPage + "?Current=50&Size=20", scoped, true},
	}
	return runScenarios(ctx, c, o, t, logPath, scenarios, rep)
}
