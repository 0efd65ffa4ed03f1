package kerneltest_test

import (
	"net/http/httptest"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/kerneltest"
)

func TestHarness(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	k.Do("GET", "/api/v1/ping", admin, nil).Expect(t, "admin ping", 200, 0)
	k.User("eve", "Eve#Pass123", "GET:/api/v1/ping")
	eve := k.Login("eve", "Eve#Pass123")
	k.Do("GET", "/api/v1/ping", eve.AccessToken, nil).Expect(t, "granted ping", 200, 0)
	k.User("mal", "Mal#Pass123")
	mal := k.Login("mal", "Mal#Pass123")
	k.Do("GET", "/api/v1/ping", mal.AccessToken, nil).Expect(t, "ungranted ping", 403, 41001)
}

// The kernel runs on the backend ADMINKERNEL_TEST_DB / ADMINKERNEL_TEST_CACHE
// select, and an explicit setting wins over the selection.
func TestBackendSelection(t *testing.T) {
	db, cache := kerneltest.Backend(t)
	k := kerneltest.Start(t, nil)
	if got := k.Config().Service.Database.DbType; got != db {
		t.Fatalf("DbType = %s, want %s", got, db)
	}
	redis := k.Config().Service.Cache.Provider == config.CacheRedis
	if redis != (cache == kerneltest.CacheRedis) {
		t.Fatalf("cache provider = %q, want %s", k.Config().Service.Cache.Provider, cache)
	}
	if redis && (k.Relay() == nil || k.WorkerLease() == nil) {
		t.Fatal("with Redis the kernel runs no event relay or worker lease")
	}
	resp, err := k.App().Test(httptest.NewRequest("GET", "/health/ready", nil))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ready = %v, %v", resp, err)
	}
	resp.Body.Close()

	own := kerneltest.Start(t, []string{"Service__Database__DbType=Sqlite", "Service__Cache__Provider="})
	if own.Config().Service.Database.DbType != config.DBSqlite || own.Config().Service.Cache.Provider != config.CacheMemory {
		t.Fatalf("explicit settings lost: %s / %q", own.Config().Service.Database.DbType, own.Config().Service.Cache.Provider)
	}
}
