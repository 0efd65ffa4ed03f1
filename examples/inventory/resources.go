package inventory

import (
	"github.com/adminkernel/kernel/examples/inventory/schema"
	"github.com/adminkernel/kernel/host/resource"
	"github.com/adminkernel/kernel/host/seed"
)

// DictCategory is the module's dictionary of product categories.
const DictCategory = "inventory_category"

// Dicts are the dictionaries the module seeds (administered afterwards in
// the dictionary page like the kernel's).
var Dicts = []seed.Dict{{ID: 1000, Code: DictCategory, Name: "物品类别", Items: []seed.DictItem{
	{ID: 1001, Label: "原材料", Value: "raw"},
	{ID: 1002, Label: "成品", Value: "finished"},
	{ID: 1003, Label: "备件", Value: "spare"},
}}}

func t(zh, en string) resource.Text { return resource.Text{ZH: zh, EN: en} }

// Products is the product catalogue: one schema type and this description
// give its API, permission codes, menus, recycle bin, import and export
// and the console's standard pages.
func Products() resource.Resource {
	return resource.Resource{
		Name: "inventory-product", Path: "/inventory/product", Schema: schema.Product{},
		Label: t("产品", "Products"),
		Menu:  resource.Menu{ID: 1100, ParentID: 1000, Icon: "lucide:package", Sort: 2},
		Fields: []resource.Field{
			{Name: "sku", Label: t("编码", "SKU"), Required: true, Unique: true, List: true, Form: true, Filter: resource.Contains, Sortable: true},
			{Name: "name", Label: t("名称", "Name"), Required: true, List: true, Form: true, Filter: resource.Contains, Sortable: true},
			{Name: "category", Label: t("类别", "Category"), Type: resource.Dict, Dict: DictCategory, Required: true, List: true, Form: true, Filter: resource.Eq},
			{Name: "price", Label: t("单价", "Unit price"), Scale: 2, Min: resource.N(0), Max: resource.N(1e9), List: true, Form: true, Sortable: true},
			{Name: "enabled", Label: t("在售", "On sale"), List: true, Form: true, Filter: resource.Eq},
			{Name: "description", Label: t("说明", "Description"), Max: resource.N(2000), Form: true},
			{Name: "createTime", Label: t("创建时间", "Created"), List: true, Sortable: true, Filter: resource.Range},
		},
	}
}

// StockLevels are the quantities each organisation holds: data scope
// applies to orgId (a warehouse clerk sees and edits their own site's).
func StockLevels() resource.Resource {
	return resource.Resource{
		Name: "inventory-stock", Path: "/inventory/stock-level", Schema: schema.StockLevel{},
		Label: t("库存", "Stock levels"), Org: "orgId", Key: []string{"sku", "orgId"},
		Menu: resource.Menu{ID: 1110, ParentID: 1000, Icon: "lucide:warehouse", Sort: 3},
		Fields: []resource.Field{
			{Name: "sku", Label: t("产品编码", "SKU"), Required: true, List: true, Form: true, Filter: resource.Eq, Sortable: true},
			{Name: "orgId", Label: t("仓库机构", "Site"), Type: resource.Org, Required: true, List: true, Form: true, Filter: resource.Eq},
			{Name: "quantity", Label: t("数量", "Quantity"), Min: resource.N(0), Max: resource.N(1e9), List: true, Form: true, Filter: resource.Range, Sortable: true},
			{Name: "reorderLevel", Label: t("补货线", "Reorder level"), Min: resource.N(0), Max: resource.N(1e9), List: true, Form: true},
			{Name: "countedOn", Label: t("盘点日期", "Counted on"), Type: resource.Date, List: true, Form: true, Filter: resource.Range, Sortable: true},
			{Name: "note", Label: t("备注", "Note"), Form: true},
		},
	}
}
