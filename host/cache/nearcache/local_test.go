package nearcache

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/cachetest"
	"github.com/adminkernel/kernel/host/cache/memcache"
)

// Local only (no Redis client): in front of the in-process store of a single
// replica. It is a cache.Store like any other, its copies answer at once
// and every change through it drops them synchronously.
func TestLocalOnly(t *testing.T) {
	local := func(t *testing.T, prefixes ...string) *Cache {
		t.Helper()
		mem, err := memcache.New(memcache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(context.Background(), mem, nil, Options{Prefixes: prefixes})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	t.Run("conformance", func(t *testing.T) {
		cachetest.Run(t, func(t *testing.T) cache.Store { return local(t, "") })
	})
	t.Run("copies and invalidation", func(t *testing.T) {
		c := local(t, "sess:", "perm:")
		ctx := context.Background()
		if !c.Stats().Trusted {
			t.Fatal("a local-only cache does not trust its copies")
		}
		mustNil(t, c.Set(ctx, "perm:1", []byte("a"), time.Minute))
		if v, ok := c.local("perm:1"); !ok || string(v) != "a" {
			t.Fatalf("no copy after Set: %q, %v", v, ok)
		}
		mustNil(t, c.Delete(ctx, "perm:1"))
		if _, ok := c.local("perm:1"); ok {
			t.Fatal("a copy survived Delete")
		}
		if _, ok := get(t, c, "perm:1"); ok {
			t.Fatal("Get answered after Delete")
		}
		mustNil(t, c.Set(ctx, "sess:a", []byte("1"), time.Minute))
		mustNil(t, c.Set(ctx, "sess:b", []byte("1"), time.Minute))
		if _, err := c.DeletePrefix(ctx, "sess:"); err != nil {
			t.Fatal(err)
		}
		if n := c.Stats().Entries; n != 0 {
			t.Fatalf("%d copies after DeletePrefix", n)
		}
	})
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c cache.Store, key string) (string, bool) {
	t.Helper()
	v, ok, err := c.Get(context.Background(), key)
	mustNil(t, err)
	return string(v), ok
}
