package rediscache

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
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

func TestWrongAddressError(t *testing.T) {
	const password = "hunter2-secret"
	const addr = "127.0.0.1:1" // nothing listens on port 1
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := New(ctx, config.Redis{Address: addr, Password: config.Secret(password)})
	if err == nil {
		_ = c.Close()
		t.Fatal("New with a wrong address: err = nil")
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q does not name the address %s", err, addr)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error %q reveals the password", err)
	}
}

func TestNewRejectsEmptyAddress(t *testing.T) {
	if _, err := New(context.Background(), config.Redis{}); err == nil {
		t.Fatal("New with no address: err = nil")
	}
}

func TestTLSConfig(t *testing.T) {
	tc, err := tlsConfig("redis.example:6380", config.RedisTLS{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if tc.MinVersion != tls.VersionTLS12 || tc.ServerName != "redis.example" || tc.InsecureSkipVerify || tc.RootCAs != nil {
		t.Errorf("default tls config = min %x, server %q, insecure %v, roots %v", tc.MinVersion, tc.ServerName, tc.InsecureSkipVerify, tc.RootCAs)
	}
	tc, err = tlsConfig("10.0.0.1:6380", config.RedisTLS{Enabled: true, ServerName: "cache.internal", InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if tc.ServerName != "cache.internal" || !tc.InsecureSkipVerify {
		t.Errorf("explicit tls config = server %q, insecure %v", tc.ServerName, tc.InsecureSkipVerify)
	}
	dir := t.TempDir()
	if _, err := tlsConfig("h:1", config.RedisTLS{CAFile: filepath.Join(dir, "missing.pem")}); err == nil {
		t.Error("missing ca file: err = nil")
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tlsConfig("h:1", config.RedisTLS{CAFile: bad}); err == nil {
		t.Error("ca file without pem: err = nil")
	}
}

func TestEscapeGlob(t *testing.T) {
	if got, want := escapeGlob(`a*b?c[d]e\f`), `a\*b\?c\[d\]e\\f`; got != want {
		t.Fatalf("escapeGlob = %q, want %q", got, want)
	}
}
