package cacheadmin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// Each action repairs the cache after an out-of-band database edit that the
// services did not see.
func TestCacheClearing(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	ctx := context.Background()
	c := k.Ent()

	t.Run("flush-auth", func(t *testing.T) {
		uid := k.User("frank", "Frank#Pass1")
		frank := k.Login("frank", "Frank#Pass1")
		k.Do("GET", "/api/v1/ping", frank.AccessToken, nil).Expect(t, "ping before the grant", 403, 41001)
		// Out of band: grant the ping button without telling the services.
		role := c.SysRole.Create().SetName("oob").SetCode("oob").SaveX(ctx)
		c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(301).ExecX(ctx)
		c.SysUserRole.Create().SetUserID(uid).SetRoleID(role.ID).ExecX(ctx)
		k.Do("GET", "/api/v1/ping", frank.AccessToken, nil).Expect(t, "ping with a stale cache", 403, 41001)
		var n int
		k.Do("POST", "/api/v1/sys/cache/flush-auth", admin, nil).Expect(t, "flush-auth", 200, 0).Decode(t, &n)
		if n < 1 {
			t.Fatalf("flush-auth cleared %d users", n)
		}
		k.Do("GET", "/api/v1/ping", frank.AccessToken, nil).Expect(t, "ping after flush-auth", 200, 0)
	})

	t.Run("flush-dict", func(t *testing.T) {
		read := func() string {
			return k.Do("GET", "/api/v1/sys/dict/items/gender", admin, nil).Expect(t, "dict items", 200, 0).Raw
		}
		if !strings.Contains(read(), "男") {
			t.Fatal("seeded gender items missing")
		}
		c.SysDictItem.Update().Where(sysdictitem.DictTypeCode("gender"), sysdictitem.Value("1")).SetLabel("Male").ExecX(ctx)
		if strings.Contains(read(), "Male") {
			t.Fatal("the dictionary was not cached (test cannot show the flush)")
		}
		k.Do("POST", "/api/v1/sys/cache/flush-dict", admin, nil).Expect(t, "flush-dict", 200, 0)
		if !strings.Contains(read(), "Male") {
			t.Fatal("flush-dict did not drop the cached items")
		}
	})

	t.Run("flush-config", func(t *testing.T) {
		site := func() string { return k.Do("GET", "/api/v1/sys/config/site", "", nil).Expect(t, "site", 200, 0).Raw }
		if !strings.Contains(site(), `"captchaEnabled":false`) {
			t.Fatalf("site = %s", site())
		}
		c.SysConfig.Update().Where(sysconfig.ConfigKey("sys.security.captcha.enabled")).SetConfigValue("true").ExecX(ctx)
		if strings.Contains(site(), `"captchaEnabled":true`) {
			t.Fatal("site info was not cached (test cannot show the flush)")
		}
		var n int
		k.Do("POST", "/api/v1/sys/cache/flush-config", admin, nil).Expect(t, "flush-config", 200, 0).Decode(t, &n)
		if n < 1 || !strings.Contains(site(), `"captchaEnabled":true`) {
			t.Fatalf("after flush-config (%d entries): %s", n, site())
		}
		c.SysConfig.Update().Where(sysconfig.ConfigKey("sys.security.captcha.enabled")).SetConfigValue("false").ExecX(ctx)
		k.Do("POST", "/api/v1/sys/cache/flush-config", admin, nil).Expect(t, "flush-config again", 200, 0)
	})

	t.Run("rebuild-portal", func(t *testing.T) {
		var g1, g2 int64
		k.Do("POST", "/api/v1/sys/cache/rebuild-portal", admin, nil).Expect(t, "rebuild", 200, 0).Decode(t, &g1)
		k.Do("POST", "/api/v1/sys/cache/rebuild-portal", admin, nil).Expect(t, "rebuild again", 200, 0).Decode(t, &g2)
		if g2 != g1+1 {
			t.Fatalf("generations %d then %d", g1, g2)
		}
	})

	t.Run("permission-gated", func(t *testing.T) {
		k.User("gina", "Gina#Pass12")
		gina := k.Login("gina", "Gina#Pass12")
		for _, a := range []string{"flush-auth", "flush-dict", "flush-config", "rebuild-portal"} {
			k.Do("POST", "/api/v1/sys/cache/"+a, gina.AccessToken, nil).Expect(t, a+" without permission", 403, 41001)
		}
	})
}
