//go:build !unit

package inventory_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/module"

	"github.com/adminkernel/kernel/examples/inventory"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestModuleOwnsItsChores: everything of the inventory feature is declared
// by its module in this folder and the kernel picks it up — the recycle-bin
// type (listed, restored, purged, its area code required), the runtime
// setting (validated by the config center), the cleanup job handler (run
// by the scheduler, reading the setting) and the operation-log title of
// its write.
func TestModuleOwnsItsChores(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	k := kerneltest.Start(t, nil, inventory.ModuleAt(now))
	admin := k.Admin()
	bin := "/api/v1/sys/recycle/" + inventory.RecycleType

	k.Do("DELETE", "/api/v1/inventory/items/3", admin, nil).Expect(t, "delete Gizmo", 200, 0)
	k.Do("GET", "/api/v1/inventory/items/3", admin, nil).ExpectCode(t, "a deleted item", inventory.ItemNotFound)
	var page struct {
		Total int `json:"total"`
		Items []struct {
			ID            int64   `json:"id"`
			Name          string  `json:"name"`
			DeletedBy     *int64  `json:"deletedBy"`
			DeletedByName *string `json:"deletedByName"`
		} `json:"items"`
	}
	k.Do("GET", bin+"/page?current=1&size=10", admin, nil).Expect(t, "the module's type in the bin", 200, 0).Decode(t, &page)
	if page.Total != 1 || page.Items[0].Name != "Gizmo" {
		t.Fatalf("bin page = %+v", page)
	}

	// The bin's own codes are not enough: the module's delete code is.
	binOnly := "inv_bin"
	k.User(binOnly, "Inv#Pass1234", "GET:/api/v1/sys/recycle/{type}/page", "POST:/api/v1/sys/recycle/{type}/{id}/restore", "DELETE:/api/v1/sys/recycle/{type}/{id}")
	tok := k.Login(binOnly, "Inv#Pass1234").AccessToken
	k.Do("POST", bin+"/3/restore", tok, nil).ExpectCode(t, "restore without the area's code", errcode.AreaPermissionRequired)
	k.Do("POST", bin+"/3/restore", admin, nil).Expect(t, "restore", 200, 0)
	k.Do("GET", "/api/v1/inventory/items/3", admin, nil).Expect(t, "the restored item", 200, 0)
	k.Do("POST", bin+"/3/restore", admin, nil).ExpectCode(t, "restore twice", errcode.RecycleNotFound)

	// The setting is the module's: validated by the config center.
	k.Do("PUT", "/api/v1/sys/config/batch", admin, []map[string]any{{"configKey": inventory.KeyRecycleDays, "configValue": "0"}}).
		ExpectCode(t, "a setting below its range", errcode.ConfigValueInvalid)
	k.Do("PUT", "/api/v1/sys/config/batch", admin, []map[string]any{{"configKey": inventory.KeyRecycleDays, "configValue": "1"}}).
		Expect(t, "the setting", 200, 0)

	// The cleanup handler is offered to the scheduler and purges what is
	// older than the setting; a fresh deletion stays.
	var run func(context.Context, module.JobRun) (string, error)
	for _, h := range k.Jobs().Handlers() {
		if h.Name == inventory.HandlerPurge {
			run = h.Run
		}
	}
	if run == nil {
		t.Fatal("the module's cleanup handler is not offered to the scheduler")
	}
	k.Do("DELETE", "/api/v1/inventory/items/1", admin, nil).Expect(t, "delete Widget", 200, 0)
	if out, err := run(context.Background(), module.JobRun{}); err != nil || out != "purged 0 items" {
		t.Fatalf("the cleanup at once = %q, %v", out, err)
	}
	clock.Add(int64(25 * time.Hour))
	if out, err := run(context.Background(), module.JobRun{}); err != nil || out != "purged 1 items" {
		t.Fatalf("the cleanup a day later = %q, %v", out, err)
	}
	k.Do("DELETE", bin+"/1", admin, nil).ExpectCode(t, "purged by the job", errcode.RecycleNotFound)
	k.Do("DELETE", bin+"/3", admin, nil).ExpectCode(t, "a live item is not in the bin", errcode.RecycleNotFound)

	// A purged user's share: the items they deleted stay in the bin,
	// deleted by nobody.
	k.User("inv_clerk", "Inv#Pass1234", "DELETE:/api/v1/inventory/items/{id}")
	clerk := k.Login("inv_clerk", "Inv#Pass1234")
	k.Do("DELETE", "/api/v1/inventory/items/2", clerk.AccessToken, nil).Expect(t, "the clerk deletes Gadget", 200, 0)
	deletedBy := func() *int64 {
		k.Do("GET", bin+"/page?current=1&size=10", admin, nil).Expect(t, "the bin", 200, 0).Decode(t, &page)
		for _, it := range page.Items {
			if it.ID == 2 {
				return it.DeletedBy
			}
		}
		t.Fatalf("Gadget is not in the bin: %+v", page)
		return nil
	}
	clerkID := k.Ent().SysUser.Query().Where(sysuser.Account("inv_clerk")).OnlyIDX(context.Background())
	if by := deletedBy(); by == nil || *by != clerkID {
		t.Fatalf("the bin names %v as Gadget's deleter, want the clerk %d", by, clerkID)
	}
	k.Do("DELETE", fmt.Sprintf("/api/v1/sys/user/%d", clerkID), admin, nil).Expect(t, "delete the clerk", 200, 0)
	k.Do("DELETE", fmt.Sprintf("/api/v1/sys/recycle/user/%d", clerkID), admin, nil).Expect(t, "purge the clerk", 200, 0)
	if by := deletedBy(); by != nil {
		t.Fatalf("Gadget is still deleted by %d after the clerk's purge (the module's forget did not run)", *by)
	}

	// The writes are in the operation log under the route's title.
	poll.Until(t, 10*time.Second, "the deletions in the operation log", func() bool {
		return k.Ent().SysOpLog.Query().Where(sysoplog.Title("Delete an item"), sysoplog.ResultCode(0)).CountX(context.Background()) == 3
	})
}
