package inventory_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/examples/inventory"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestResources works through the example's two resources as an admin and
// as a clerk whose data scope is their own site.
func TestResources(t *testing.T) {
	k := kerneltest.Start(t, nil, inventory.Module())
	admin := k.Admin()

	// The module's dictionary is seeded and the product's category must
	// be one of its values.
	var cats []map[string]any
	k.Do("GET", "/api/v1/sys/dict/items/"+inventory.DictCategory, admin, nil).ExpectCode(t, "dictionary", 0).Decode(t, &cats)
	if len(cats) != 3 {
		t.Fatalf("categories = %v", cats)
	}
	k.Do("POST", "/api/v1/inventory/product", admin, map[string]any{"sku": "P-1", "name": "Bolt", "category": "nope"}).
		ExpectCode(t, "unknown category", errcode.RequestInvalid)
	k.Do("POST", "/api/v1/inventory/product", admin, map[string]any{"sku": "P-1", "name": "Bolt", "category": "spare", "price": 0.5}).
		ExpectCode(t, "product", 0)
	k.Do("POST", "/api/v1/inventory/product", admin, map[string]any{"sku": "P-1", "name": "Bolt again", "category": "spare"}).
		ExpectCode(t, "same SKU", errcode.ResourceKeyExists)

	for _, org := range []int64{4, 5} {
		k.Do("POST", "/api/v1/inventory/stock-level", admin, map[string]any{"sku": "P-1", "orgId": org, "quantity": 10 * org}).
			ExpectCode(t, "stock", 0)
	}
	codes := []string{"GET:/api/v1/inventory/stock-level/page", "PUT:/api/v1/inventory/stock-level/{id}", "POST:/api/v1/inventory/stock-level"}
	clerk := k.User("clerk", "Clerk#Passw0rd1", codes...)
	ctx := context.Background()
	k.Ent().SysUser.UpdateOneID(clerk).SetOrgID(4).ExecX(ctx)
	for _, ur := range k.Ent().SysUserRole.Query().AllX(ctx) {
		if ur.UserID == clerk {
			k.Do("PUT", "/api/v1/sys/role/datascope", admin, map[string]any{"roleId": ur.RoleID, "scopeType": 2}).ExpectCode(t, "scope", 0)
		}
	}
	tok := k.Login("clerk", "Clerk#Passw0rd1").AccessToken
	var page struct {
		Total int              `json:"total"`
		Items []map[string]any `json:"items"`
	}
	k.Do("GET", "/api/v1/inventory/stock-level/page", tok, nil).ExpectCode(t, "clerk page", 0).Decode(t, &page)
	if page.Total != 1 || page.Items[0]["orgId"] != 4.0 || page.Items[0]["quantity"] != 40.0 {
		t.Fatalf("the clerk sees %+v, want only site 4's 40", page)
	}
	k.Do("POST", "/api/v1/inventory/stock-level", tok, map[string]any{"sku": "P-1", "orgId": 5, "quantity": 1}).
		ExpectCode(t, "clerk writes another site", errcode.OrgOutOfScope)
	k.Do("GET", "/api/v1/inventory/product/page", tok, nil).ExpectCode(t, "products without the code", errcode.NoPermission)
}
