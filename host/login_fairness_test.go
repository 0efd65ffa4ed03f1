package host_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/password"
)

// expect429 checks an immediate refusal: HTTP 429 / 40008 with a
// Retry-After of whole seconds.
func expect429(t *testing.T, what string, r kerneltest.Reply) {
	t.Helper()
	r.Expect(t, what, http.StatusTooManyRequests, int(errcode.TooManyRequests))
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("%s: Retry-After %q, want whole seconds ≥ 1", what, r.Header.Get("Retry-After"))
	}
}

// TestLoginShareOverHTTP (Security III, item 6): a client address whose
// password checks already hold its share of the hashing pool (2 running or
// waiting) gets HTTP 429 / 40008 with Retry-After at once, not a place in
// the queue, while another address logs in; an IPv6 client is counted per
// /64; an account with 2 checks in the pool refuses a third from anywhere.
// The refused attempts count no failure.
func TestLoginShareOverHTTP(t *testing.T) {
	k := kerneltest.Start(t, append([]string{"Service__Security__Password__HashConcurrency=3"}, trustAll...))
	k.User("victim", "Victim#Pass12")
	pool := k.Hasher().Pool()
	release := make(chan struct{})
	var held sync.WaitGroup
	hold := func(client, account string) {
		held.Go(func() {
			if err := pool.Do(password.WithCaller(context.Background(), client, account), func() { <-release }); err != nil {
				t.Errorf("holding job of %s/%s refused: %v", client, account, err)
			}
		})
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
		held.Wait()
	}()
	// The flooding address holds its share: two of the three slots.
	hold("203.0.113.7", "")
	hold("203.0.113.7", "")
	poll.Until(t, 10*time.Second, "flooder's share taken", func() bool { return pool.Stats().Running == 2 })

	start := time.Now()
	expect429(t, "third check of the flooding address", from(k, "203.0.113.7", "POST", "/api/v1/auth/login", "", loginBody("victim", "Victim#Pass12", "", "")))
	expect429(t, "another account from the flooding address", from(k, "203.0.113.7", "POST", "/api/v1/auth/login", "", loginBody("nobody", "Nobody#Pass1", "", "")))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the refusals took %v, want at once", d)
	}
	// Another address is served by the free slot.
	from(k, "198.51.100.9", "POST", "/api/v1/auth/login", "", loginBody("victim", "Victim#Pass12", "", "")).
		Expect(t, "login from another address", 200, 0)

	// IPv6: the /64 is the client.
	hold("2001:db8:1:2::/64", "")
	hold("2001:db8:1:2::/64", "")
	poll.Until(t, 10*time.Second, "the /64's share taken", func() bool { s := pool.Stats(); return s.Running+s.Waiting == 4 })
	expect429(t, "another address of the same /64", from(k, "2001:db8:1:2::99", "POST", "/api/v1/auth/login", "", loginBody("victim", "Victim#Pass12", "", "")))

	// The account: two checks of victim (from other addresses) in the pool.
	hold("192.0.2.50", "victim")
	hold("192.0.2.51", "victim")
	poll.Until(t, 10*time.Second, "the account's share taken", func() bool { s := pool.Stats(); return s.Running+s.Waiting == 6 })
	expect429(t, "the account from a fresh address", from(k, "192.0.2.99", "POST", "/api/v1/auth/login", "", loginBody("Victim", "Wrong#Pass99", "", "")))
	if s := pool.Stats(); s.Throttled != 4 || s.Rejected != 0 {
		t.Fatalf("pool %+v, want 4 throttled", s)
	}

	close(release)
	held.Wait()
	// No failure was counted: more refusals than the lockout threshold
	// would lock nothing anyway, and the right password logs in from each
	// refused address.
	for _, ip := range []string{"203.0.113.7", "2001:db8:1:2::99", "192.0.2.99"} {
		from(k, ip, "POST", "/api/v1/auth/login", "", loginBody("victim", "Victim#Pass12", "", "")).
			Expect(t, "login from "+ip+" afterwards", 200, 0)
	}
}

// TestPasswordBucketSeparate (Security III, item 6): password attempts
// (the password login, TOTP bind start, recovery) are counted in their own
// bucket, sys.security.rateLimit.passwordPermitPerWindow (default and
// seeded 60), not in the SSO bucket authPermitPerWindow (1200): the 61st
// password attempt of an address in a window is refused with 429 while its
// SSO-bucket requests still pass, and an address whose SSO bucket is spent
// may still try its password.
func TestPasswordBucketSeparate(t *testing.T) {
	k := kerneltest.Start(t, trustAll)
	ctx := context.Background()
	for key, want := range map[string]string{
		"sys.security.rateLimit.passwordPermitPerWindow": "60",
		"sys.security.rateLimit.authPermitPerWindow":     "1200",
	} {
		row, err := k.Ent().SysConfig.Query().Where(sysconfig.ConfigKey(key)).Only(ctx)
		if err != nil || row.ConfigValue == nil || *row.ConfigValue != want {
			t.Fatalf("seeded %s = %v (%v), want %s", key, row, err, want)
		}
	}
	if err := k.Settings().Set(ctx, "sys.security.rateLimit.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	login := func(ip string) kerneltest.Reply {
		return from(k, ip, "POST", "/api/v1/auth/login", "", loginBody("nobody", "Nobody#Pass1", "", ""))
	}
	// Counting windows are aligned to the minute: an attempt that crosses a
	// boundary is repeated from a fresh address.
	for attempt := 0; ; attempt++ {
		ip := fmt.Sprintf("203.0.113.%d", 100+attempt)
		w0 := time.Now().Unix() / 60
		passed := 0
		for range 60 {
			if login(ip).Status != http.StatusTooManyRequests {
				passed++
			}
		}
		last := login(ip)
		captcha := from(k, ip, "GET", "/api/v1/auth/captcha", "", "")
		bind := from(k, ip, "POST", "/api/v1/auth/mfa/bind/start", "", `{"account":"nobody","currentPassword":"Nobody#Pass1"}`)
		slash := from(k, ip, "POST", "/API/v1/auth/login/", "", loginBody("nobody", "Nobody#Pass1", "", ""))
		if time.Now().Unix()/60 != w0 && attempt < 3 {
			continue
		}
		if passed != 60 {
			t.Fatalf("%d of 60 password attempts passed, want all", passed)
		}
		expect429(t, "61st password attempt", last)
		captcha.Expect(t, "captcha (SSO bucket) after the password bucket is spent", 200, 0)
		expect429(t, "TOTP bind start (password bucket)", bind)
		expect429(t, "login spelled differently (password bucket)", slash)
		break
	}

	// The other way: the SSO bucket spent, the password bucket untouched.
	if err := k.Settings().Set(ctx, "sys.security.rateLimit.authPermitPerWindow", "3"); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		ip := fmt.Sprintf("198.51.100.%d", 100+attempt)
		w0 := time.Now().Unix() / 60
		var r [4]kerneltest.Reply
		for i := range r {
			r[i] = from(k, ip, "GET", "/api/v1/auth/captcha", "", "")
		}
		// Another account: "nobody" passed its account captcha threshold above.
		l := from(k, ip, "POST", "/api/v1/auth/login", "", loginBody("someone", "Someone#Pass1", "", ""))
		if time.Now().Unix()/60 != w0 && attempt < 3 {
			continue
		}
		r[2].Expect(t, "3rd SSO-bucket request", 200, 0)
		expect429(t, "4th SSO-bucket request", r[3])
		l.Expect(t, "password attempt with the SSO bucket spent", 200, int(errcode.PasswordWrong))
		break
	}
}
