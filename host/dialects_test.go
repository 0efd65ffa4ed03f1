package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestBootOnEveryDialect starts the kernel twice on each real database
// server: the first start creates the tables and seeds once, the second
// changes nothing.
func TestBootOnEveryDialect(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			cfg := dbtest.Config(t, dialect)
			k, log := start(t, cfg)
			if got := len(bannerPassword.FindAllString(log, -1)); got != 1 {
				t.Fatalf("banner printed %d times on %s:\n%s", got, dialect, log)
			}
			ctx := context.Background()
			admin := k.Ent().SysUser.Query().Where(sysuser.ID(1)).OnlyX(ctx)
			if admin.Account != "superAdmin" || !admin.IsSuperAdmin {
				t.Fatalf("super-admin = %+v", admin)
			}
			if status, body := get(t, k, "/health/ready"); status != 200 {
				t.Fatalf("ready = %d %s", status, body)
			}
			menus := k.Ent().SysMenu.Query().CountX(ctx)
			k.Close()

			k2, log2 := start(t, cfg)
			if bannerPassword.MatchString(log2) || strings.Contains(log2, "super-admin created") {
				t.Fatalf("second start on %s seeded again:\n%s", dialect, log2)
			}
			again := k2.Ent().SysUser.Query().Where(sysuser.ID(1)).OnlyX(ctx)
			if again.PasswordHash != admin.PasswordHash {
				t.Fatal("second start changed the super-admin password")
			}
			if n := k2.Ent().SysMenu.Query().CountX(ctx); n != menus {
				t.Fatalf("menus = %d after the second start, want %d", n, menus)
			}
		})
	}
}

// TestConcurrentFirstStart starts two kernels on one empty database at the
// same moment, as two replicas would: exactly one seeds and prints the
// banner, neither fails.
func TestConcurrentFirstStart(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			cfg := dbtest.Config(t, dialect)
			// Tables first, as an operator's migrate would: concurrent
			// auto-migration is not something replicas should race on.
			if err := dbtest.OpenConfig(t, cfg).Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			logs := make([]string, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := &syncbuf.Buffer{}
					k, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: buf})
					errs[i], logs[i] = err, buf.String()
					if err == nil {
						k.Close()
					}
				}()
			}
			wg.Wait()
			banners := 0
			for i := range 2 {
				if errs[i] != nil {
					t.Fatalf("replica %d failed: %v\n%s", i, errs[i], logs[i])
				}
				banners += len(bannerPassword.FindAllString(logs[i], -1))
			}
			if banners != 1 {
				t.Fatalf("%d banners across two replicas, want 1", banners)
			}
			k, _ := start(t, cfg)
			if n := k.Ent().SysUser.Query().CountX(context.Background()); n != 1 {
				t.Fatalf("users = %d, want 1", n)
			}
		})
	}
}
