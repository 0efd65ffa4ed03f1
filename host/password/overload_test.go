package password_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/password"
)

// TestHashingOverloadOverHTTP: with one hashing slot and a queue of one,
// both taken, every PBKDF2 call site answers HTTP 503 / 40008 with
// Retry-After and does no hashing; refused logins count no failure (the
// account is not locked afterwards); the monitor snapshot counts the
// refusals; once the slot frees, the same requests succeed.
func TestHashingOverloadOverHTTP(t *testing.T) {
	k := kerneltest.Start(t, []string{
		"Service__Security__Password__HashConcurrency=1",
		"Service__Security__Password__HashQueue=1",
		"Service__Security__Password__HashMaxWaitMillis=600000",
	})
	admin := k.Admin()
	uid := k.User("storm", "Storm#Pass12")
	user := k.Login("storm", "Storm#Pass12").AccessToken
	pool := k.Hasher().Pool()
	if s := pool.Stats(); s.Concurrency != 1 || s.QueueCapacity != 1 || s.MaxWaitMillis != 600000 {
		t.Fatalf("pool %+v, want the configured limits", s)
	}
	base := pool.Stats()

	// Take the slot and the queue place with jobs held until release.
	release := make(chan struct{})
	var held sync.WaitGroup
	for range 2 {
		held.Go(func() {
			if err := pool.Do(context.Background(), func() { <-release }); err != nil {
				t.Errorf("holding job refused: %v", err)
			}
		})
	}
	poll.Until(t, 10*time.Second, "slot and queue taken", func() bool {
		s := pool.Stats()
		return s.Running == 1 && s.Waiting == 1
	})

	type call struct {
		name, method, path, token string
		body                      any
	}
	login := func(pw string) call {
		return call{"login", "POST", "/api/v1/auth/login", "", map[string]string{"account": "storm", "password": pw}}
	}
	calls := []call{
		{"change password", "PUT", "/api/v1/personal/password", user, map[string]string{"oldPassword": "Storm#Pass12", "newPassword": "Storm#Pass34"}},
		{"admin reset", "PUT", fmt.Sprintf("/api/v1/sys/user/%d/password", uid), admin, map[string]string{"newPassword": "Reset#Pass56"}},
		{"admin create", "POST", "/api/v1/sys/user", admin, map[string]any{"account": "storm2", "name": "storm2", "password": "Storm2#Pass1", "orgId": 1}},
		{"unknown account", "POST", "/api/v1/auth/login", "", map[string]string{"account": "nobody", "password": "Nobody#Pass1"}},
	}
	// More wrong-password logins than the lockout threshold (5), in parallel.
	for range 8 {
		calls = append(calls, login("Wrong#Pass99"))
	}
	replies := make([]kerneltest.Reply, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { replies[i] = k.Do(c.method, c.path, c.token, c.body) })
	}
	wg.Wait()
	for i, r := range replies {
		r.Expect(t, calls[i].name+" while saturated", http.StatusServiceUnavailable, int(errcode.TooManyRequests))
		if r.MsgKey != "error.auth.tooManyRequests" {
			t.Errorf("%s: msgKey %q", calls[i].name, r.MsgKey)
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Errorf("%s: Retry-After %q, want whole seconds ≥ 1", calls[i].name, r.Header.Get("Retry-After"))
		}
	}
	s := pool.Stats()
	if got := s.Rejected - base.Rejected; got != uint64(len(calls)) || s.Completed != base.Completed {
		t.Fatalf("stats %+v: %d rejected, want %d, and no hash computed", s, got, len(calls))
	}

	// The monitor snapshot reports the pool.
	var info struct {
		PasswordHashing password.Stats `json:"passwordHashing"`
	}
	k.Do("GET", "/api/v1/sys/monitor/server", admin, nil).Expect(t, "snapshot", 200, 0).Decode(t, &info)
	if h := info.PasswordHashing; h.Rejected != s.Rejected || h.Running != 1 || h.Waiting != 1 || h.Concurrency != 1 {
		t.Fatalf("snapshot passwordHashing %+v, want %+v", h, s)
	}

	close(release)
	held.Wait()
	// No failure was counted: the right password logs in, the refused
	// change and reset did not happen.
	k.Login("storm", "Storm#Pass12")
	k.Do("PUT", "/api/v1/personal/password", user, map[string]string{"oldPassword": "Storm#Pass12", "newPassword": "Storm#Pass34"}).
		Expect(t, "change password after the storm", 200, 0)
	k.Login("storm", "Storm#Pass34")
	if n := k.Ent().SysLoginLog.Query().CountX(context.Background()); n == 0 {
		t.Error("no login-log rows")
	}
	if logs := k.Log(); strings.Count(logs, "password hashing saturated") != 1 {
		t.Errorf("want one throttled saturation warning in the log:\n%s", logs)
	}
}
