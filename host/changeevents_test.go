package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// failingStore fails every removal.
type failingStore struct{ cache.Store }

var errDown = errors.New("down")

func (failingStore) Delete(context.Context, ...string) error { return errDown }
func (failingStore) DeletePrefix(context.Context, string) (int, error) {
	return 0, errDown
}

// TestChangeEvents: removing permission sets, data scopes and session marks
// through the kernel's store publishes one change event per key (all keys
// for a prefix); other keys and failed removals publish nothing.
func TestChangeEvents(t *testing.T) {
	mem, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := mem.Close(); err != nil {
			t.Error(err)
		}
	}()
	// Keys unique to this test, so events of other tests are told apart.
	const marker = "changeevents-"
	var mu sync.Mutex
	var got []sysconfig.Event
	cancel := sysconfig.Subscribe(func(e sysconfig.Event) {
		if strings.HasPrefix(e.Key, marker) || e.Key == "" {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		}
	})
	defer cancel()
	// take returns what arrived once n events did (delivery is
	// asynchronous), or after a short wait when n is 0.
	take := func(n int) []sysconfig.Event {
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			have := len(got)
			mu.Unlock()
			if (n > 0 && have >= n) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // and anything extra
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
	ctx := context.Background()
	s := withChangeEvents(mem)

	if err := s.Delete(ctx, "perm:"+marker+"1", "scope:"+marker+"2", "sess:"+marker+"sid", "cfg:"+marker+"x", "perm:"); err != nil {
		t.Fatal(err)
	}
	want := []sysconfig.Event{
		{Kind: bus.KindPermission, Key: marker + "1"},
		{Kind: bus.KindScope, Key: marker + "2"},
		{Kind: bus.KindSession, Key: marker + "sid"},
	}
	if ev := take(len(want)); !slices.Equal(ev, want) {
		t.Fatalf("Delete published %v, want %v", ev, want)
	}

	tests := []struct {
		prefix string
		want   []sysconfig.Event
	}{
		{"perm:", []sysconfig.Event{{Kind: bus.KindPermission}}},
		{"perm:12", []sysconfig.Event{{Kind: bus.KindPermission}}},
		{"scope:", []sysconfig.Event{{Kind: bus.KindScope}}},
		{"sess:", []sysconfig.Event{{Kind: bus.KindSession}}},
		{"", []sysconfig.Event{{Kind: bus.KindPermission}, {Kind: bus.KindScope}, {Kind: bus.KindSession}}},
		{"dict:", nil},
	}
	for _, tc := range tests {
		if _, err := s.DeletePrefix(ctx, tc.prefix); err != nil {
			t.Fatal(err)
		}
		// Other tests of the package may publish all-keys events too:
		// compare the kinds seen, without duplicates.
		var kinds []sysconfig.Event
		for _, e := range take(len(tc.want)) {
			if !slices.Contains(kinds, e) {
				kinds = append(kinds, e)
			}
		}
		for _, w := range tc.want {
			if !slices.Contains(kinds, w) {
				t.Errorf("DeletePrefix(%q) published %v, want %v", tc.prefix, kinds, tc.want)
			}
		}
		if tc.want == nil && len(kinds) != 0 {
			t.Errorf("DeletePrefix(%q) published %v, want nothing", tc.prefix, kinds)
		}
	}

	f := withChangeEvents(failingStore{mem})
	if err := f.Delete(ctx, "perm:"+marker+"9"); !errors.Is(err, errDown) {
		t.Fatalf("Delete err = %v", err)
	}
	if _, err := f.DeletePrefix(ctx, "perm:"); !errors.Is(err, errDown) {
		t.Fatalf("DeletePrefix err = %v", err)
	}
	for _, e := range take(0) {
		if e.Key != "" || e.Kind == bus.KindPermission {
			t.Errorf("a failed removal published %v", e)
		}
	}
}
