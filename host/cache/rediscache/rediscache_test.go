//go:build !unit

package rediscache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/cachetest"
)

// testAddrEnv overrides the Redis address the tests use.
const testAddrEnv = "ADMINKERNEL_TEST_REDIS"

func testAddr() string {
	if a := os.Getenv(testAddrEnv); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// newTestCache connects with a unique random key prefix and removes that
// prefix's keys when the test ends. An unreachable Redis fails the test.
func newTestCache(t *testing.T) *Cache {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addr := testAddr()
	c, err := New(ctx, config.Redis{Address: addr, KeyPrefix: "aktest:" + randHex(t) + ":"})
	if err != nil {
		t.Fatalf("redis tests need a Redis 6.2+ at %s (set %s to another host:port): %v", addr, testAddrEnv, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeletePrefix(ctx, ""); err != nil {
			t.Errorf("clean up test keys: %v", err)
		}
		_ = c.Close()
	})
	return c
}

func randHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Store { return newTestCache(t) })
}

func TestKeysArePrefixed(t *testing.T) {
	ctx := context.Background()
	c := newTestCache(t)
	if err := c.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.PutOnce(ctx, "o", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Incr(ctx, "n", 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k", "o", "n"} {
		if n, err := c.Client().Exists(ctx, c.prefix+k).Result(); err != nil || n != 1 {
			t.Errorf("raw key %q: exists = %d, %v; want 1", c.prefix+k, n, err)
		}
		if n, _ := c.Client().Exists(ctx, k).Result(); n != 0 {
			t.Errorf("unprefixed key %q written", k)
		}
	}
	// Another prefix does not see or delete these keys.
	other := newTestCache(t)
	if n, err := other.DeletePrefix(ctx, ""); err != nil || n != 0 {
		t.Fatalf("DeletePrefix under another prefix = %d, %v; want 0", n, err)
	}
	if _, ok, _ := c.Get(ctx, "k"); !ok {
		t.Fatal("entry lost to another prefix's DeletePrefix")
	}
}
