package inventory

import (
	"embed"
	"io/fs"

	"github.com/adminkernel/kernel/host/module"
)

// The module's console pages, built from console/src by console/'s Vite
// library build (npm run build there; the output is committed) against
// the console kit.
//
//go:embed console/dist
var consoleDist embed.FS

// ComponentDashboard is the menu component of the stock dashboard (menu
// 1020), a page the module ships (module.Console).
const ComponentDashboard = "inventory/dashboard/index"

// consolePages is what the module ships to the web console: the stock
// dashboard, its texts and the translations of the module's menu titles.
func consolePages() *module.Console {
	assets, err := fs.Sub(consoleDist, "console/dist")
	if err != nil {
		panic(err) // the embedded folder is there: compile-time pattern
	}
	return &module.Console{
		Assets: assets,
		Pages:  map[string]string{ComponentDashboard: "dashboard.js"},
		Texts: map[string]map[string]string{
			"en-US": {
				"inventory.dashboard.title":   "Stock dashboard",
				"inventory.dashboard.refresh": "Refresh",
				"inventory.dashboard.summary": "{items} items, {total} in stock",
				"inventory.dashboard.empty":   "No items.",
				"inventory.dashboard.name":    "Item",
				"inventory.dashboard.stock":   "Stock",
				"inventory.dashboard.status":  "Status",
				"inventory.dashboard.ok":      "In stock",
				"inventory.dashboard.low":     "Low",
				"inventory.dashboard.out":     "Out of stock",
				"inventory.dashboard.delete":  "Delete",
				"inventory.dashboard.deleted": "{name} moved to the recycle bin.",
				// The texts of the module's error codes (msgKeys).
				"error.inventory.itemNotFound":       "The item does not exist.",
				"error.inventory.outOfStock":         "The item is out of stock.",
				"error.inventory.adjustmentNotFound": "No such pending adjustment: it was approved already.",
				"error.inventory.stockLevelNotFound": "The stock level does not exist.",
			},
			"zh-CN": {
				"inventory.dashboard.title":          "库存看板",
				"inventory.dashboard.refresh":        "刷新",
				"inventory.dashboard.summary":        "共 {items} 种物品，库存 {total}",
				"inventory.dashboard.empty":          "暂无物品。",
				"inventory.dashboard.name":           "物品",
				"inventory.dashboard.stock":          "库存",
				"inventory.dashboard.status":         "状态",
				"inventory.dashboard.ok":             "有货",
				"inventory.dashboard.low":            "库存不足",
				"inventory.dashboard.out":            "缺货",
				"inventory.dashboard.delete":         "删除",
				"inventory.dashboard.deleted":        "{name} 已移入回收站。",
				"error.inventory.itemNotFound":       "物品不存在",
				"error.inventory.outOfStock":         "物品缺货",
				"error.inventory.adjustmentNotFound": "没有待审批的该调整：可能已被批准",
				"error.inventory.stockLevelNotFound": "库存记录不存在",
			},
		},
		MenuTitles: map[string]map[string]string{
			"en-US": {"/inventory": "Inventory", "/inventory/items": "Stock query", "/inventory/dashboard": "Stock dashboard"},
			"zh-CN": {"/inventory": "库存", "/inventory/items": "库存查询", "/inventory/dashboard": "库存看板"},
		},
	}
}
