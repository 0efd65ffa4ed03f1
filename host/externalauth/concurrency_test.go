package externalauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
)

const parallel = 50

func rsaKey() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }

type rawReply struct {
	status   int
	location string
	code     int
	// cookies are the values of the Set-Cookie headers, by name.
	cookies map[string]string
}

// rawSend is safe to call from any goroutine: it reports errors instead of
// failing the test.
func (e *env) rawSend(method, target, token, body string, cookies map[string]string) (rawReply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := e.k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		return rawReply{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := rawReply{status: resp.StatusCode, location: resp.Header.Get("Location"), cookies: map[string]string{}}
	for _, c := range resp.Cookies() {
		r.cookies[c.Name] = c.Value
	}
	if resp.StatusCode == http.StatusFound {
		return r, nil
	}
	var env struct {
		Code int `json:"code"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return r, fmt.Errorf("%s %s: body %q", method, target, raw)
	}
	r.code = env.Code
	return r, nil
}

// race runs f parallel times at once and returns the replies.
func race(t *testing.T, f func(i int) (rawReply, error)) []rawReply {
	t.Helper()
	out := make([]rawReply, parallel)
	errs := make([]error, parallel)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			out[i], errs[i] = f(i)
		}()
	}
	close(gate)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestParallelExchangeOfOneTicket(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	b := e.browser()
	res := b.sso("bob")
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("ended in %s, want a ticket", res)
	}
	cookies := map[string]string{"tn_oauth_ticket": b.Cookie("tn_oauth_ticket")}
	replies := race(t, func(int) (rawReply, error) {
		return e.rawSend("POST", base+"/exchange", "", `{"ticket":"`+ticket+`"}`, cookies)
	})
	ok, refused := 0, 0
	for _, r := range replies {
		switch {
		case r.status == 200 && r.code == 0:
			ok++
		case r.status == 200 && r.code == 40014:
			refused++
		default:
			t.Errorf("exchange reply %+v", r)
		}
	}
	if ok != 1 || refused != parallel-1 {
		t.Errorf("%d successes and %d × 40014, want 1 and %d", ok, refused, parallel-1)
	}
}

func TestParallelCallbacksOfOneState(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	// Slow the token endpoint down so the requests really overlap.
	e.is.SetTokenDelay(50 * time.Millisecond)
	b := e.browser()
	cb := e.is.Login(t, b.authorize("corp"), "bob")
	cookies := map[string]string{"tn_oauth_state": b.Cookie("tn_oauth_state")}
	before := e.is.TokenCalls()
	replies := race(t, func(int) (rawReply, error) {
		return e.rawSend("GET", oidctest.Callback(cb), "", "", cookies)
	})
	tickets, refused := 0, 0
	for _, r := range replies {
		u, err := url.Parse(r.location)
		if r.status != http.StatusFound || err != nil {
			t.Fatalf("callback reply %+v", r)
		}
		switch {
		case u.Query().Get("ticket") != "":
			tickets++
		case u.Query().Get("error") == "40014":
			refused++
		default:
			t.Errorf("callback ended in %s", u)
		}
	}
	if tickets != 1 || refused != parallel-1 {
		t.Errorf("%d tickets and %d × 40014, want 1 and %d", tickets, refused, parallel-1)
	}
	if calls := e.is.TokenCalls() - before; calls != 1 {
		t.Errorf("%d token-endpoint calls, want 1", calls)
	}
}

func TestParallelClaimsOfOnePendingLink(t *testing.T) {
	e := start(t)
	e.k.User("erin", "Erin#Pass1234")
	erin := e.k.Login("erin", "Erin#Pass1234").AccessToken
	b := e.browser()
	pending := b.sso("bob").Query().Get("pendingLink")
	cookies := map[string]string{"tn_oauth_pending": b.Cookie("tn_oauth_pending")}
	replies := race(t, func(int) (rawReply, error) {
		return e.rawSend("POST", base+"/pending-link/claim", erin, `{"pendingLink":"`+pending+`"}`, cookies)
	})
	ok := 0
	for _, r := range replies {
		switch {
		case r.status == 200 && r.code == 0:
			ok++
		case r.status == 200 && r.code == 40014:
		default:
			t.Errorf("claim reply %+v", r)
		}
	}
	if ok != 1 {
		t.Errorf("%d successful claims, want 1", ok)
	}
	if n := e.k.Ent().SysUserExternal.Query().Where(sysuserexternal.IsDelete(false)).CountX(context.Background()); n != 1 {
		t.Errorf("%d bindings, want 1", n)
	}
}

// Ten first logins of one new identity at once (each with its own state):
// one account, one binding, every login signed in as it.
func TestParallelFirstLoginsProvisionOnce(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	const n = 10
	type login struct {
		cb      *url.URL
		cookies map[string]string
	}
	logins := make([]login, n)
	for i := range logins {
		b := e.browser()
		cb := e.is.Login(t, b.authorize("corp"), "bob")
		logins[i] = login{cb, map[string]string{"tn_oauth_state": b.Cookie("tn_oauth_state")}}
	}
	var wg sync.WaitGroup
	replies := make([]rawReply, n)
	errs := make([]error, n)
	for i := range logins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i], errs[i] = e.rawSend("GET", oidctest.Callback(logins[i].cb), "", "", logins[i].cookies)
		}()
	}
	wg.Wait()
	users := map[int64]bool{}
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		u, _ := url.Parse(r.location)
		ticket := u.Query().Get("ticket")
		if ticket == "" {
			t.Errorf("login %d ended in %s, want a ticket", i, u)
			continue
		}
		var out struct {
			UserID int64 `json:"userId"`
		}
		b := e.browser()
		b.SetCookie("tn_oauth_ticket", r.cookies["tn_oauth_ticket"])
		b.exchange(ticket).Expect(t, "exchange", 200, 0).Decode(t, &out)
		users[out.UserID] = true
	}
	ctx := context.Background()
	if len(users) != 1 {
		t.Errorf("logins signed in as %d different users, want 1", len(users))
	}
	if c := e.k.Ent().SysUser.Query().Where(sysuser.AccountHasPrefix("bob")).CountX(ctx); c != 1 {
		t.Errorf("%d provisioned accounts, want 1", c)
	}
	if c := e.k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("sub-bob")).CountX(ctx); c != 1 {
		t.Errorf("%d bindings, want 1", c)
	}
}
