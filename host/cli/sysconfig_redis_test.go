//go:build !unit

package cli_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// TestConfigSetReachesARunningKernel: a kernel on PostgreSQL (and MariaDB) and Redis
// (near cache on, the default) has read and cached a setting; `config set`
// — another process's view: its own database connection and Redis client —
// changes it, and the kernel's very next read and its next login see the
// new value; the kernel's subscribers hear the change event.
func TestConfigSetReachesARunningKernel(t *testing.T) {
	for _, dbType := range []string{config.DBPostgreSQL, config.DBMySQL} {
		t.Run(dbType, func(t *testing.T) { configSetReachesARunningKernel(t, dbType) })
	}
}

func configSetReachesARunningKernel(t *testing.T, dbType string) {
	dir := t.TempDir()
	db := dbtest.Config(t, dbType)
	env := map[string]string{
		"Service__Cache__Provider":            "Redis",
		"Service__Cache__Redis__Address":      kerneltest.RedisAddr(),
		"Service__Cache__Redis__KeyPrefix":    kerneltest.RedisPrefix(t),
		"Service__Database__DbType":           dbType,
		"Service__Database__ConnectionString": db.Service.Database.ConnectionString.Reveal(),
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
		t.Setenv(k, v)
	}
	k := kerneltest.Start(t, environ)
	ctx := context.Background()
	if k.Config().Service.Cache.NearCacheSeconds == 0 {
		t.Fatal("the near cache is off: this test is about reaching its copies")
	}
	for range 2 { // cached in Redis and in the kernel's near copy
		if n, err := k.Settings().Int(ctx, accessKey); err != nil || n != 120 {
			t.Fatalf("%s = %d, %v", accessKey, n, err)
		}
	}
	var mu sync.Mutex
	heard := false
	cancel := k.Events().Subscribe(func(e events.Event) {
		if c, ok := e.(events.ConfigChanged); ok && c.Key == accessKey {
			mu.Lock()
			heard = true
			mu.Unlock()
		}
	})
	defer cancel()

	if _, _, err := run(t, ctx, host.Options{}, "config", "set", accessKey, "99999999999", "--content-root", dir); err == nil || !strings.Contains(err.Error(), "43012") {
		t.Fatalf("an out-of-range set = %v", err)
	}
	out, _, err := run(t, ctx, host.Options{}, "config", "set", accessKey, "30", "--content-root", dir)
	if err != nil || !strings.Contains(out, "running replicas read it on their next request") {
		t.Fatalf("config set = %q, %v", out, err)
	}
	if n, err := k.Settings().Int(ctx, accessKey); err != nil || n != 30 {
		t.Fatalf("the running kernel reads %d, %v right after the set; want 30", n, err)
	}
	var login struct {
		ExpiresAt time.Time `json:"expiresAt"`
	}
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword}).
		Expect(t, "login", 200, 0).Decode(t, &login)
	if d := time.Until(login.ExpiresAt); d > 31*time.Minute || d < 25*time.Minute {
		t.Fatalf("the access token expires in %v, want 30 minutes", d)
	}
	poll.Until(t, 5*time.Second, "the ConfigChanged event of the command", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return heard
	})
	out, _, err = run(t, ctx, host.Options{}, "config", "get", accessKey, "--content-root", dir)
	if err != nil || !strings.Contains(out, accessKey+` = "30"`) {
		t.Fatalf("config get = %q, %v", out, err)
	}
}
