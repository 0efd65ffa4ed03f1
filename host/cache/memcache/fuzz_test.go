package memcache

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache"
)

// takeClock is a settable clock for the fuzz target.
type takeClock struct{ ns atomic.Int64 }

func (c *takeClock) now() time.Time { return time.Unix(0, c.ns.Load()) }

// FuzzTake runs a sequence of one-time-store operations (two bytes each: an
// operation and its argument) against the cache and a model: PutOnce,
// Take, parallel Takes of one key, clock advances, janitor sweeps and
// entry writes under the same key. Every PutOnce and Take must answer as the
// model says, so a value put once is taken at most once (by exactly one of
// parallel takers), never after its expiry, and always with the value put.
func FuzzTake(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 0})                       // put, take, take again
	f.Add([]byte{0, 4, 0, 4, 2, 15, 2, 15, 0, 4, 1, 0})   // put, put again (exists), expire, put, take
	f.Add([]byte{0, 1, 3, 7, 3, 7, 0, 1, 3, 1})           // parallel takes
	f.Add([]byte{0, 2, 2, 4, 4, 0, 1, 2, 5, 2, 1, 2})     // expiry, sweep, entry under the same key
	f.Add([]byte{0, 255, 2, 3, 1, 255, 0, 3, 5, 3, 3, 3}) // ttl edge
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 512 {
			ops = ops[:512]
		}
		clk := &takeClock{}
		clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
		c, err := New(Options{Now: clk.now, EntryLimit: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}()
		ctx := context.Background()
		keys := []string{"once:a", "once:b", "once:c", "once:d"}
		type held struct {
			val []byte
			exp time.Time
		}
		model := map[string]held{}
		puts := map[string]int{}
		takes := map[string]int{}
		live := func(k string) (held, bool) {
			h, ok := model[k]
			return h, ok && clk.now().Before(h.exp)
		}
		serial := byte(0)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%6, ops[i+1]
			k := keys[int(arg)%len(keys)]
			switch op {
			case 0: // PutOnce
				serial++
				val := []byte{arg, serial}
				ttl := time.Duration(1+int(arg>>2)%8) * time.Second
				err := c.PutOnce(ctx, k, val, ttl)
				_, held1 := live(k)
				switch {
				case held1 && !errors.Is(err, cache.ErrExists):
					t.Fatalf("op %d: PutOnce(%s) on a held key = %v, want ErrExists", i/2, k, err)
				case !held1 && err != nil:
					t.Fatalf("op %d: PutOnce(%s) on a free key = %v", i/2, k, err)
				case !held1:
					model[k] = held{val: val, exp: clk.now().Add(ttl)}
					puts[k]++
				}
			case 1: // Take
				got, ok, err := c.Take(ctx, k)
				if err != nil {
					t.Fatalf("op %d: Take(%s): %v", i/2, k, err)
				}
				want, wantOK := live(k)
				delete(model, k)
				if ok != wantOK || ok && !bytes.Equal(got, want.val) {
					t.Fatalf("op %d: Take(%s) = %v, %v; want %v, %v", i/2, k, got, ok, want.val, wantOK)
				}
				if ok {
					takes[k]++
				}
			case 2: // the clock moves
				clk.ns.Add(int64(time.Duration(arg%16) * 250 * time.Millisecond))
			case 3: // parallel takes of one key: exactly one winner when held
				n := 2 + int(arg>>2)%6
				var wg sync.WaitGroup
				var wins atomic.Int32
				var winner atomic.Value
				for range n {
					wg.Go(func() {
						v, ok, err := c.Take(ctx, k)
						if err != nil {
							t.Errorf("parallel Take(%s): %v", k, err)
						}
						if ok {
							wins.Add(1)
							winner.Store(v)
						}
					})
				}
				wg.Wait()
				want, wantOK := live(k)
				delete(model, k)
				if wantOK && (wins.Load() != 1 || !bytes.Equal(winner.Load().([]byte), want.val)) || !wantOK && wins.Load() != 0 {
					t.Fatalf("op %d: %d parallel takes of %s: %d won, want %v", i/2, n, k, wins.Load(), wantOK)
				}
				takes[k] += int(wins.Load())
			case 4: // the janitor runs
				c.sweep()
			case 5: // an entry under the same name is another kind of data
				if err := c.Set(ctx, k, []byte{arg}, time.Duration(arg%4)*time.Second); err != nil {
					t.Fatalf("op %d: Set(%s): %v", i/2, k, err)
				}
				if err := c.Delete(ctx, k); err != nil {
					t.Fatalf("op %d: Delete(%s): %v", i/2, k, err)
				}
			}
			for _, k := range keys {
				if takes[k] > puts[k] {
					t.Fatalf("op %d: %s taken %d times after %d puts", i/2, k, takes[k], puts[k])
				}
			}
		}
	})
}
