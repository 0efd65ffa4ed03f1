//go:build !unit

package nearcache

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/cachetest"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/cache/rediscache/redistest"
)

func testAddr() string {
	if a := os.Getenv("ADMINKERNEL_TEST_REDIS"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// deployment is one key prefix (and channel) on a Redis server: the
// replicas of one kernel deployment.
type deployment struct {
	t      *testing.T
	addr   string
	prefix string
}

func newDeployment(t *testing.T, addr string) *deployment {
	return &deployment{t: t, addr: addr, prefix: "aktest:near:" + strings.ToLower(rand.Text()[:10]) + ":"}
}

// replica opens another replica's cache: its own Redis client and
// subscription, the deployment's prefix and channel.
func (d *deployment) replica(edit func(*Options)) *Cache {
	t := d.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := rediscache.New(ctx, config.Redis{Address: d.addr, KeyPrefix: d.prefix})
	if err != nil {
		t.Fatalf("near-cache tests need Redis at %s (ADMINKERNEL_TEST_REDIS sets another): %v", d.addr, err)
	}
	opts := Options{Channel: d.prefix + ChannelSuffix, Prefixes: []string{"sess:", "perm:"}, AckTimeout: 2 * time.Second}
	if edit != nil {
		edit(&opts)
	}
	c, err := New(ctx, rc, rc.Client(), opts)
	if err != nil {
		_ = rc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = rc.DeletePrefix(ctx, "")
		_ = c.Close()
	})
	return c
}

// The near cache is a cache.Store like any other (every key near).
func TestConformance(t *testing.T) {
	d := newDeployment(t, testAddr())
	cachetest.Run(t, func(t *testing.T) cache.Store {
		return (&deployment{t: t, addr: d.addr, prefix: d.prefix + strings.ToLower(rand.Text()[:8]) + ":"}).replica(func(o *Options) {
			o.Prefixes = []string{""}
		})
	})
}

// A hit is served locally: the entry deleted behind the cache's back (in
// Redis directly) is still answered, until the copy's TTL.
func TestHitsAreLocal(t *testing.T) {
	d := newDeployment(t, testAddr())
	a := d.replica(func(o *Options) { o.TTL = 300 * time.Millisecond })
	ctx := context.Background()
	mustNil(t, a.Set(ctx, "perm:1", []byte("codes"), time.Minute))
	mustNil(t, a.client.Del(ctx, d.prefix+"perm:1").Err())
	before := a.Stats().Hits
	if v, ok := get(t, a, "perm:1"); !ok || v != "codes" {
		t.Fatalf("Get = %q, %v; want the local copy", v, ok)
	}
	if a.Stats().Hits != before+1 {
		t.Fatal("the read was not a local hit")
	}
	time.Sleep(400 * time.Millisecond)
	if _, ok := get(t, a, "perm:1"); ok {
		t.Fatal("the local copy outlived its TTL")
	}
	// Keys outside the prefixes are never copied.
	mustNil(t, a.Set(ctx, "other:1", []byte("x"), time.Minute))
	mustNil(t, a.client.Del(ctx, d.prefix+"other:1").Err())
	if _, ok := get(t, a, "other:1"); ok {
		t.Fatal("a key outside the near prefixes was served from a local copy")
	}
}

// The contract: once Delete or DeletePrefix has returned on one replica, no
// other replica answers from its copy, every time.
func TestInvalidationReachesEveryReplicaBeforeReturning(t *testing.T) {
	d := newDeployment(t, testAddr())
	a, b, c := d.replica(nil), d.replica(nil), d.replica(nil)
	ctx := context.Background()
	for i := range 200 {
		key := fmt.Sprintf("sess:%d", i%7)
		mustNil(t, a.Set(ctx, key, []byte("active"), time.Minute))
		for _, r := range []*Cache{b, c} {
			if v, ok := get(t, r, key); !ok || v != "active" {
				t.Fatalf("round %d: Get = %q, %v before the delete", i, v, ok)
			}
			if _, ok := r.local(key); !ok {
				t.Fatalf("round %d: no local copy after a read", i)
			}
		}
		if i%2 == 0 {
			mustNil(t, b.Delete(ctx, key))
		} else {
			_, err := c.DeletePrefix(ctx, "sess:")
			mustNil(t, err)
		}
		for name, r := range map[string]*Cache{"a": a, "b": b, "c": c} {
			if _, ok := r.local(key); ok {
				t.Fatalf("round %d: replica %s still holds a copy after the delete returned", i, name)
			}
			if v, ok := get(t, r, key); ok {
				t.Fatalf("round %d: replica %s answered %q after the delete returned", i, name, v)
			}
		}
	}
	for name, r := range map[string]*Cache{"a": a, "b": b, "c": c} {
		if s := r.Stats(); s.AckTimeouts != 0 {
			t.Errorf("replica %s: %d invalidations were not confirmed in time", name, s.AckTimeouts)
		}
	}
}

// A copy read before an invalidation is not kept after it.
func TestReadRacingAnInvalidationIsNotKept(t *testing.T) {
	d := newDeployment(t, testAddr())
	a := d.replica(nil)
	gen := a.gen.Load()
	a.dropKeys([]string{"perm:9"}) // an invalidation lands while the read is in flight
	a.keep("perm:9", []byte("stale"), time.Minute, gen)
	if _, ok := a.local("perm:9"); ok {
		t.Fatal("a value read before an invalidation was kept")
	}
	a.keep("perm:9", []byte("fresh"), time.Minute, a.gen.Load())
	if v, ok := a.local("perm:9"); !ok || string(v) != "fresh" {
		t.Fatalf("a value read after the invalidation was not kept: %q, %v", v, ok)
	}

	// Under load: readers fill while a writer changes and deletes; after
	// each delete returns no replica may hold the old value.
	b := d.replica(nil)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _, _ = b.Get(ctx, "perm:race")
			}
		})
	}
	for i := range 40 {
		mustNil(t, a.Set(ctx, "perm:race", fmt.Appendf(nil, "v%d", i), time.Minute))
		mustNil(t, a.Delete(ctx, "perm:race"))
		if v, ok := b.local("perm:race"); ok {
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: replica b kept %q after the delete returned", i, v)
		}
	}
	close(stop)
	wg.Wait()
}

func TestBounded(t *testing.T) {
	d := newDeployment(t, testAddr())
	a := d.replica(func(o *Options) { o.MaxEntries = 64 })
	ctx := context.Background()
	for i := range 1000 {
		mustNil(t, a.Set(ctx, fmt.Sprintf("perm:%d", i), []byte("x"), time.Minute))
	}
	if n := a.Stats().Entries; n > 64 || n == 0 {
		t.Fatalf("holds %d copies; want 1..64", n)
	}
}

// A replica that does not acknowledge delays a delete by AckTimeout at
// most, and the delete still succeeds.
func TestSilentReplicaBoundsTheWait(t *testing.T) {
	d := newDeployment(t, testAddr())
	a := d.replica(func(o *Options) { o.AckTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	mute := redis.NewClient(&redis.Options{Addr: d.addr})
	t.Cleanup(func() { _ = mute.Close() })
	ps := mute.Subscribe(ctx, d.prefix+ChannelSuffix)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	mustNil(t, a.Delete(ctx, "sess:x"))
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("the delete returned after %v without the silent replica's acknowledgement", took)
	}
	if a.Stats().AckTimeouts != 1 {
		t.Fatalf("ack timeouts = %d, want 1", a.Stats().AckTimeouts)
	}
}

// Redis stops answering (paused: connections stay open) or goes away: the
// replica stops trusting its copies within StaleAfter, never answers from
// them meanwhile, and starts over with no copies once Redis is back.
func TestCopiesAreNotTrustedWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	for _, outage := range []string{"pause", "kill"} {
		t.Run(outage, func(t *testing.T) {
			d := newDeployment(t, srv.Addr)
			a := d.replica(func(o *Options) { o.StaleAfter = 300 * time.Millisecond })
			ctx := context.Background()
			mustNil(t, a.Set(ctx, "sess:s1", []byte("active"), time.Minute))
			if _, ok := a.local("sess:s1"); !ok {
				t.Fatal("no local copy after Set")
			}
			if outage == "pause" {
				srv.Pause()
			} else {
				srv.Stop()
			}
			deadline := time.Now().Add(5 * time.Second)
			for a.Stats().Trusted {
				if time.Now().After(deadline) {
					t.Fatal("copies still trusted 5 s into the outage")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, ok := a.local("sess:s1"); ok {
				t.Fatal("a copy answers during the outage")
			}
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			v, ok, err := a.Get(rctx, "sess:s1")
			cancel()
			if err == nil || ok {
				t.Fatalf("Get during the outage = %q, %v, %v; want an error (fail closed)", v, ok, err)
			}
			if outage == "pause" {
				srv.Resume()
			} else {
				srv.Restart()
			}
			deadline = time.Now().Add(10 * time.Second)
			for !a.Stats().Trusted {
				if time.Now().After(deadline) {
					t.Fatal("copies not trusted again 10 s after Redis came back")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if outage == "kill" {
				// The restarted Redis is empty: so must the copies be.
				if _, ok := get(t, a, "sess:s1"); ok {
					t.Fatal("a copy from before the restart answered")
				}
			}
		})
	}
}
