package inventory_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// TestApprovalFlow: a clerk asks for a stock adjustment; the approver gets
// a notice whose button approves it; parallel approvals apply it once; the
// clerk is told.
func TestApprovalFlow(t *testing.T) {
	k := kerneltest.Start(t, nil, inventory.Module())
	admin := k.Admin()
	var stockID int64
	k.Do("POST", "/api/v1/inventory/stock-level", admin, map[string]any{"sku": "P-9", "orgId": 4, "quantity": 3}).
		ExpectCode(t, "stock", 0).Decode(t, &stockID)
	clerk := k.User("asker", "Asker#Passw0rd1", "POST:/api/v1/inventory/stock-level/{id}/adjustments")
	tok := k.Login("asker", "Asker#Passw0rd1").AccessToken

	path := fmt.Sprintf("/api/v1/inventory/stock-level/%d/adjustments", stockID)
	k.Do("POST", path, tok, map[string]any{"quantity": 10}).ExpectCode(t, "no reason", errcode.RequestInvalid)
	k.Do("POST", "/api/v1/inventory/stock-level/42/adjustments", tok, map[string]any{"quantity": 10, "reason": "x"}).
		ExpectCode(t, "unknown stock level", inventory.StockLevelNotFound)
	var adj int64
	k.Do("POST", path, tok, map[string]any{"quantity": 10, "reason": "recount"}).ExpectCode(t, "ask", 0).Decode(t, &adj)
	approve := fmt.Sprintf("/api/v1/inventory/adjustments/%d/approve", adj)
	k.Do("POST", approve, tok, nil).ExpectCode(t, "the clerk cannot approve", errcode.NoPermission)

	// The super-admin (no role holds the approve button) has the notice,
	// its button calling the approve route.
	var mine struct {
		Items []struct {
			Title   string `json:"title"`
			Actions []struct {
				Method string `json:"method"`
				URL    string `json:"url"`
			} `json:"actions"`
		} `json:"items"`
	}
	k.Do("GET", "/api/v1/sys/notice/mine", admin, nil).ExpectCode(t, "notices", 0).Decode(t, &mine)
	if len(mine.Items) == 0 || !strings.Contains(mine.Items[0].Title, "P-9") || len(mine.Items[0].Actions) != 1 ||
		mine.Items[0].Actions[0].URL != approve || mine.Items[0].Actions[0].Method != "POST" {
		t.Fatalf("the approver's notices: %+v", mine.Items)
	}

	// Eight approvals at once: one applies it.
	codes := make(chan int, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- k.Do("POST", approve, admin, nil).Code
		}()
	}
	wg.Wait()
	close(codes)
	won := 0
	for c := range codes {
		switch c {
		case 0:
			won++
		case int(inventory.AdjustmentNotFound):
		default:
			t.Errorf("an approval answered %d", c)
		}
	}
	if won != 1 {
		t.Fatalf("%d approvals applied the adjustment, want 1", won)
	}
	var level map[string]any
	k.Do("GET", fmt.Sprintf("/api/v1/inventory/stock-level/%d", stockID), admin, nil).ExpectCode(t, "level", 0).Decode(t, &level)
	if level["quantity"] != 10.0 {
		t.Fatalf("quantity after approval = %v", level["quantity"])
	}
	var told struct {
		Items []struct {
			Title string `json:"title"`
		} `json:"items"`
	}
	k.Do("GET", "/api/v1/sys/notice/mine", tok, nil).ExpectCode(t, "clerk notices", 0).Decode(t, &told)
	if len(told.Items) != 1 || !strings.Contains(told.Items[0].Title, "approved") {
		t.Fatalf("the clerk (%d) was told: %+v", clerk, told.Items)
	}
}
