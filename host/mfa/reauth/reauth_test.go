package reauth

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache/memcache"
)

func TestNormalize(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"get:/API/v1/Sys/User/page", "GET:/api/v1/sys/user/page"},
		{"  DELETE:/api/v1/sys/mfa/high-sensitivity/{ID:long} ", "DELETE:/api/v1/sys/mfa/high-sensitivity/{id:long}"},
		{"no-colon", "no-colon"},
		{"", ""},
	} {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWindowsPerSession(t *testing.T) {
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	w := NewWindows(store, time.Minute)
	if err := w.Open(ctx, 7, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Open(ctx, 7, "s1"); err != nil { // a second re-auth restarts it
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		user int64
		sid  string
		want bool
	}{
		{"the session that re-authenticated", 7, "s1", true},
		{"another session of the user", 7, "s2", false},
		{"the same session id for another user", 8, "s1", false},
		{"no session", 7, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.IsOpen(ctx, tt.user, tt.sid)
			if err != nil || got != tt.want {
				t.Fatalf("IsOpen = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if NewWindows(store, 0).TTL() != DefaultWindow {
		t.Fatal("a zero TTL is not the default window")
	}
}

func TestHasMatchesWholeCodes(t *testing.T) {
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	// A cached list: Has reads no database on a hit (the client is nil).
	if err := store.Set(ctx, listKey, []byte("\nGET:/api/v1/a\nGET:/api/v1/a/b\n"), time.Minute); err != nil {
		t.Fatal(err)
	}
	s := NewSensitive(nil, store, nil)
	for _, tt := range []struct {
		code string
		want bool
	}{
		{"GET:/api/v1/a", true},
		{"GET:/api/v1/a/b", true},
		{"GET:/api/v1/", false},
		{"GET:/api/v1/a/", false},
		{"/api/v1/a", false},
		{"", false},
	} {
		got, err := s.Has(ctx, tt.code)
		if err != nil || got != tt.want {
			t.Errorf("Has(%q) = %v, %v; want %v", tt.code, got, err, tt.want)
		}
	}
}
