package externalauth_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host/cache/oncecap/oncecaptest"
	"github.com/adminkernel/kernel/host/externalauth"
)

// tryAuthorize starts a login and returns the reply without judging it.
func (b *browser) tryAuthorize(code string) (status, envCode int, location, retryAfter string, setState bool) {
	b.e.t.Helper()
	r := b.send("GET", base+"/"+code+"/authorize", "", "")
	for _, line := range r.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == externalauth.StateCookie && c.Value != "" {
			setState = true
		}
	}
	return r.Status, r.Code, r.Header.Get("Location"), r.Header.Get("Retry-After"), setState
}

// refused checks that an authorize at the cap is 429 / 40008 with a
// Retry-After, no redirect and no state cookie.
func refused(t *testing.T, b *browser, what string) {
	t.Helper()
	status, code, loc, retry, setState := b.tryAuthorize("corp")
	if status != http.StatusTooManyRequests || code != 40008 {
		t.Fatalf("%s: authorize = HTTP %d code %d, want 429 / 40008", what, status, code)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 || n > int(externalauth.StateTTL.Seconds())+60 {
		t.Errorf("%s: Retry-After = %q, want 1..%d seconds", what, retry, int(externalauth.StateTTL.Seconds())+60)
	}
	if loc != "" || setState {
		t.Errorf("%s: a refused authorize redirected to %q / set the state cookie %v", what, loc, setState)
	}
}

// TestAuthorizeStateCap: with Service:ExternalAuth:MaxPendingStates=3 the
// fourth pending authorize is refused with 429 / 40008; a login in progress
// completes at the cap; taking a state (a completed callback, or the burn of
// a failed one) frees its slot.
func TestAuthorizeStateCap(t *testing.T) {
	e := start(t, "Service__ExternalAuth__MaxPendingStates=3")
	e.set("sys.externalauth.corp.provisioning", "provision")
	b := []*browser{e.browser(), e.browser(), e.browser(), e.browser(), e.browser()}
	var locs [3]string
	for i := range 3 {
		locs[i] = b[i].authorize("corp")
	}
	refused(t, b[3], "fourth pending state")

	// The first browser's login finishes at the cap.
	res := b[0].callback(e.is.Login(t, locs[0], "bob"))
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("login at the cap ended in %s, want a ticket", res)
	}
	b[0].exchange(ticket).Expect(t, "exchange at the cap", 200, 0)

	// Its state was taken: one slot is free again, and only one.
	b[3].authorize("corp")
	refused(t, b[4], "cap reached again")

	// A failed callback burns its state, which frees the slot as well.
	u, _ := url.Parse(locs[1])
	res = location(t, b[1].send("GET", base+"/corp/callback?error=access_denied&state="+u.Query().Get("state"), "", ""))
	if errorOf(res) == "" {
		t.Fatalf("failed callback ended in %s, want an error", res)
	}
	b[4].authorize("corp")
	refused(t, b[1], "cap reached after the burn")

	// A replayed (already taken) state frees nothing.
	res = location(t, b[0].send("GET", base+"/corp/callback?code=x&state="+func() string { u, _ := url.Parse(locs[0]); return u.Query().Get("state") }(), "", ""))
	if errorOf(res) != "40014" {
		t.Fatalf("replayed state ended in %s, want error=40014", res)
	}
	refused(t, b[1], "after a replayed state")

	if got := countLines(e.k.Log(), "pending authorize states are at the cap"); got != 1 {
		t.Errorf("the cap warning was logged %d times, want once (throttled)", got)
	}
}

// TestAuthorizeStateCapParallel: 40 parallel authorizes against a cap of 10
// never store more than 10 states; filling up sequentially afterwards
// reaches exactly 10.
func TestAuthorizeStateCapParallel(t *testing.T) {
	e := start(t, "Service__ExternalAuth__MaxPendingStates=10")
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, code, _, _, _ := e.browser().tryAuthorize("corp")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status == http.StatusFound:
				ok++
			case status != http.StatusTooManyRequests || code != 40008:
				t.Errorf("parallel authorize = HTTP %d code %d, want 302 or 429/40008", status, code)
			}
		}()
	}
	wg.Wait()
	if ok < 1 || ok > 10 {
		t.Fatalf("%d of 40 parallel authorizes stored a state, want 1..10", ok)
	}
	for ok < 10 {
		if status, _, _, _, _ := e.browser().tryAuthorize("corp"); status != http.StatusFound {
			t.Fatalf("authorize refused with %d states pending, cap 10", ok)
		}
		ok++
	}
	refused(t, e.browser(), "after filling up to 10")
}

// TestAuthorizeStateCapBoundsMemory: past the cap, anonymous authorizes do
// not grow the heap (the one-time values of refused requests are never
// stored). The heap cost per stored state is measured while filling up,
// and the refused requests must cost less than a quarter of what storing
// them would have. The kernel runs on the in-process cache whatever the
// backend selection (with Redis the states would not be in this heap; the
// cap itself is checked on every backend above).
func TestAuthorizeStateCapBoundsMemory(t *testing.T) {
	const (
		capStates = 1000
		beyond    = 4000
	)
	e := start(t, "Service__ExternalAuth__MaxPendingStates="+strconv.Itoa(capStates), "Service__Cache__Provider=")
	b := e.browser()
	oncecaptest.BoundsMemory(t, oncecaptest.Memory{
		What: "state", Send: func() int { return b.send("GET", base+"/corp/authorize", "", "").Status },
		Stored: http.StatusFound, Refused: http.StatusTooManyRequests,
		Cap: capStates, Beyond: beyond, MinPerValue: 200,
	})
}

func countLines(log, s string) int { return strings.Count(log, s) }
