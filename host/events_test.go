package host_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// TestKernelEvents: the kernel's services publish typed change events on
// the kernel's own bus (what the relay carries to other replicas): a
// permission change names the users it reaches, clearing a cache publishes
// its all-keys event, a config change names its key. Another kernel's bus
// sees none of them.
func TestKernelEvents(t *testing.T) {
	k := kerneltest.Start(t, nil)
	other := kerneltest.Start(t, nil)
	tok := k.Admin()
	var mu sync.Mutex
	var got []events.Event
	defer k.Events().Subscribe(func(e events.Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	})()
	var foreign []events.Event
	defer other.Events().Subscribe(func(e events.Event) {
		mu.Lock()
		foreign = append(foreign, e)
		mu.Unlock()
	})()

	uid := k.User("evan", "Pass#evan1234", "GET:/api/v1/ping")
	role := k.Ent().SysRole.Query().Where(sysrole.Code("test_evan")).OnlyX(t.Context())
	k.Do("PUT", "/api/v1/sys/role/menu", tok, map[string]any{"roleId": role.ID, "menuIds": []int64{}}).Expect(t, "revoke", 200, 0)
	k.Do("PUT", "/api/v1/sys/config/batch", tok, []map[string]any{{"configKey": "sys.site.title", "configValue": "events " + fmt.Sprint(uid)}}).Expect(t, "title", 200, 0)
	k.Do("POST", "/api/v1/sys/cache/flush-auth", tok, nil).Expect(t, "flush auth", 200, 0)
	k.Do("POST", "/api/v1/sys/cache/flush-dict", tok, nil).Expect(t, "flush dict", 200, 0)
	want := []events.Event{
		events.PermissionsChanged{UserID: uid}, // the test user's grant
		events.PermissionsChanged{UserID: uid}, // the revocation
		events.ConfigChanged{Key: "sys.site.title"},
		events.PermissionsChanged{},
		events.DictChanged{},
	}
	poll.Until(t, 5*time.Second, "the events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= len(want)
	})
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if len(foreign) != 0 {
		t.Fatalf("another kernel's bus saw %v", foreign)
	}
}
