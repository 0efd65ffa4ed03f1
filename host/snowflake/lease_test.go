//go:build !unit

package snowflake_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/snowflake"
)

// redisStore is a rediscache with a unique prefix whose keys are removed
// when the test ends.
func redisStore(t *testing.T) *rediscache.Cache {
	t.Helper()
	addr := os.Getenv("ADMINKERNEL_TEST_REDIS")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rediscache.New(ctx, config.Redis{Address: addr, KeyPrefix: "aktest:" + strings.ToLower(rand.Text()[:12]) + ":"})
	if err != nil {
		t.Fatalf("lease tests need a Redis at %s (ADMINKERNEL_TEST_REDIS): %v", addr, err)
	}
	t.Cleanup(func() {
		_, _ = c.DeletePrefix(context.Background(), "")
		_ = c.Close()
	})
	return c
}

func acquire(t *testing.T, s snowflake.LeaseStore, opts snowflake.LeaseOptions) *snowflake.Lease {
	t.Helper()
	if opts.Generator == nil {
		opts.Generator = generator(t)
	}
	l, err := snowflake.AcquireLease(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

func generator(t *testing.T) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.New(0)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func holder(t *testing.T, c *rediscache.Cache, worker int) string {
	t.Helper()
	v, err := c.Client().Get(context.Background(), c.Prefix()+snowflake.LeaseKeyPrefix+strconv.Itoa(worker)).Result()
	if err != nil {
		return ""
	}
	return v
}

func TestLeaseRedis(t *testing.T) {
	c := redisStore(t)
	ctx := context.Background()
	a := acquire(t, c, snowflake.LeaseOptions{})
	b := acquire(t, c, snowflake.LeaseOptions{})
	if a.Worker() != 0 || b.Worker() != 1 {
		t.Fatalf("workers = %d, %d; want 0, 1", a.Worker(), b.Worker())
	}
	if holder(t, c, 0) != a.Owner() || holder(t, c, 1) != b.Owner() {
		t.Fatal("lease keys do not name their owners")
	}
	ttl := c.Client().PTTL(ctx, c.Prefix()+snowflake.LeaseKeyPrefix+"0").Val()
	if ttl <= 0 || ttl > snowflake.DefaultLeaseTTL {
		t.Fatalf("lease ttl = %s, want (0, %s]", ttl, snowflake.DefaultLeaseTTL)
	}
	// Release frees the id at once; the next replica takes the lowest.
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if holder(t, c, 0) != "" {
		t.Fatal("released lease still held")
	}
	if n := acquire(t, c, snowflake.LeaseOptions{}); n.Worker() != 0 {
		t.Fatalf("after a release: worker %d, want 0", n.Worker())
	}
	// A fixed id reserves itself; leasing replicas skip it.
	f := acquire(t, c, snowflake.LeaseOptions{Fixed: true, Worker: 5})
	if f.Worker() != 5 {
		t.Fatalf("fixed worker = %d", f.Worker())
	}
	if _, err := snowflake.AcquireLease(ctx, c, snowflake.LeaseOptions{Fixed: true, Worker: 5, Generator: generator(t)}); !errors.Is(err, snowflake.ErrWorkerTaken) {
		t.Fatalf("second fixed lease of 5: err = %v, want ErrWorkerTaken", err)
	}
	// Release never deletes another owner's lease.
	if err := c.ReleaseLease(ctx, snowflake.LeaseKeyPrefix+"5", "someone-else"); err != nil {
		t.Fatal(err)
	}
	if holder(t, c, 5) != f.Owner() {
		t.Fatal("another owner's release removed the lease")
	}
}

func TestLeaseAllTaken(t *testing.T) {
	c := redisStore(t)
	var leases []*snowflake.Lease
	for range snowflake.MaxWorker + 1 {
		leases = append(leases, acquire(t, c, snowflake.LeaseOptions{}))
	}
	seen := map[int]bool{}
	for _, l := range leases {
		if seen[l.Worker()] {
			t.Fatalf("worker %d leased twice", l.Worker())
		}
		seen[l.Worker()] = true
	}
	if _, err := snowflake.AcquireLease(context.Background(), c, snowflake.LeaseOptions{Generator: generator(t)}); !errors.Is(err, snowflake.ErrNoFreeWorker) {
		t.Fatalf("65th lease: err = %v, want ErrNoFreeWorker", err)
	}
}

// Concurrent starts never share an id.
func TestLeaseConcurrent(t *testing.T) {
	c := redisStore(t)
	const n = 20
	workers := make([]int, n)
	gens := make([]*snowflake.Generator, n)
	for i := range gens {
		gens[i] = generator(t)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := snowflake.AcquireLease(context.Background(), c, snowflake.LeaseOptions{Generator: gens[i]})
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { _ = l.Release(context.Background()) })
			workers[i] = l.Worker()
			if gens[i].Worker() != l.Worker() {
				t.Errorf("lease %d: generator on worker %d, lease on %d", i, gens[i].Worker(), l.Worker())
			}
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, w := range workers {
		if seen[w] {
			t.Fatalf("worker %d leased twice: %v", w, workers)
		}
		seen[w] = true
	}
}

// The renewal keeps the lease alive past its TTL; a lease lost (expired
// or flushed) is taken again, and when another owner got the id meanwhile
// the holder moves to a free one and says so.
func TestLeaseRenewAndRecover(t *testing.T) {
	c := redisStore(t)
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	moved := make(chan int, 4)
	g := generator(t)
	l := acquire(t, c, snowflake.LeaseOptions{TTL: ttl, Generator: g, OnChange: func(w int) { moved <- w }})
	time.Sleep(3 * ttl)
	if holder(t, c, l.Worker()) != l.Owner() {
		t.Fatal("lease not renewed past its TTL")
	}
	// Flushed: taken again, same id.
	c.Client().Del(ctx, c.Prefix()+snowflake.LeaseKeyPrefix+"0")
	time.Sleep(2 * ttl)
	if holder(t, c, 0) != l.Owner() || l.Worker() != 0 {
		t.Fatalf("after a flush: worker %d held by %q", l.Worker(), holder(t, c, 0))
	}
	// Stolen: moves to the lowest free id.
	c.Client().Set(ctx, c.Prefix()+snowflake.LeaseKeyPrefix+"0", "intruder", time.Minute)
	select {
	case w := <-moved:
		if w != 1 || l.Worker() != 1 || holder(t, c, 1) != l.Owner() {
			t.Fatalf("moved to %d (worker %d, holder %q), want 1", w, l.Worker(), holder(t, c, 1))
		}
		if _, gw, _ := snowflake.Parts(g.Next()); gw != 1 {
			t.Fatalf("after the move the generator issues worker %d, want 1", gw)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lease did not move after its id was taken")
	}
	if holder(t, c, 0) != "intruder" {
		t.Fatal("the holder touched the other owner's lease")
	}
}

func TestLeaseOptionsValidated(t *testing.T) {
	c := redisStore(t)
	if _, err := snowflake.AcquireLease(context.Background(), c, snowflake.LeaseOptions{Fixed: true, Worker: 64, Generator: generator(t)}); !errors.Is(err, snowflake.ErrWorkerRange) {
		t.Fatalf("fixed 64: err = %v", err)
	}
	if _, err := snowflake.AcquireLease(context.Background(), c, snowflake.LeaseOptions{}); err == nil {
		t.Fatal("a lease without a generator: err = nil")
	}
	if _, err := c.TryLease(context.Background(), "k", "o", 0); err == nil {
		t.Fatal("TryLease with ttl 0: err = nil")
	}
}
