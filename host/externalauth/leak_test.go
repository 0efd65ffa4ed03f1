package externalauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// TestPendingLinkNotInOperationLog: POST pending-link/claim is op-logged;
// the pending-link token it carries (in the body, or in the query when the
// body has none) is a bearer value and must be masked in the stored input,
// and appear nowhere in the kernel log. Both claims are refused the second
// time (one-time), the first succeeds, so each shape is logged.
func TestPendingLinkNotInOperationLog(t *testing.T) {
	e := start(t)
	e.k.User("dave", "Dave#Pass1234", "GET:/api/v1/ping")
	dave := e.k.Login("dave", "Dave#Pass1234").AccessToken

	// Body shape.
	b := e.browser()
	bodyToken := b.sso("dave").Query().Get("pendingLink")
	if bodyToken == "" {
		t.Fatal("no pending link for an unbound identity")
	}
	b.claim(dave, bodyToken).Expect(t, "claim in the body", 200, 0)

	// Query shape: the claim of another identity, token in the query.
	e.k.User("carol", "Carol#Pass1234", "GET:/api/v1/ping")
	carol := e.k.Login("carol", "Carol#Pass1234").AccessToken
	b2 := e.browser()
	queryToken := b2.sso("carol").Query().Get("pendingLink")
	if queryToken == "" {
		t.Fatal("no pending link for the second identity")
	}
	b2.send("POST", base+"/pending-link/claim?pendingLink="+queryToken, carol, "").Expect(t, "claim in the query", 200, 0)

	ctx := context.Background()
	var rows []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		rows = rows[:0]
		for _, r := range e.k.Ent().SysOpLog.Query().Where(sysoplog.PathContains("pending-link/claim")).AllX(ctx) {
			if r.ParamJSON != nil {
				rows = append(rows, *r.ParamJSON)
			}
		}
		if len(rows) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(rows) != 2 {
		t.Fatalf("%d operation-log rows with input for the claims, want 2: %q", len(rows), rows)
	}
	stored := strings.Join(rows, "\n")
	for what, tok := range map[string]string{"body": bodyToken, "query": queryToken} {
		if strings.Contains(stored, tok) {
			t.Errorf("the operation log stores the pending-link token of the %s claim: %s", what, stored)
		}
		if strings.Contains(e.k.Log(), tok) {
			t.Errorf("the kernel log contains the pending-link token of the %s claim", what)
		}
	}
	for _, row := range rows {
		if row != `{"pendingLink":"***"}` {
			t.Errorf("stored claim input = %s, want {\"pendingLink\":\"***\"}", row)
		}
	}
}

// TestBindingVerifierNotInOperationLog: the challenged claim and
// bind/complete are op-logged; the bind ticket, the pending link and the
// binding verifier are masked in the stored input and absent from the
// kernel log.
func TestBindingVerifierNotInOperationLog(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("dave", "Dave#Pass1234")
	dave := k.Login("dave", "Dave#Pass1234").AccessToken
	verifier, challenge := pkce(t)
	pending := e.challengedSSO("dave", challenge).Query().Get("pendingLink")
	k.Do("POST", base+"/pending-link/claim", dave, map[string]string{"pendingLink": pending, "bindingVerifier": verifier}).Expect(t, "claim", 200, 0)

	k.User("erin", "Erin#Pass1234")
	erin := k.Login("erin", "Erin#Pass1234").AccessToken
	verifier2, challenge2 := pkce(t)
	b := e.browser()
	startURL := b.bindStartURL("corp", erin, `{"bindingChallenge":"`+challenge2+`"}`)
	res := b.callback(e.is.Login(t, location(t, b.open(startURL)).String(), "bob"))
	ticket := res.Query().Get("bindTicket")
	k.Do("POST", base+"/bind/complete", erin, map[string]string{"bindTicket": ticket, "bindingVerifier": verifier2}).Expect(t, "bind/complete", 200, 0)

	ctx := context.Background()
	inputs := func(path string) []string {
		var out []string
		for _, r := range k.Ent().SysOpLog.Query().Where(sysoplog.PathContains(path)).AllX(ctx) {
			if r.ParamJSON != nil {
				out = append(out, *r.ParamJSON)
			}
		}
		return out
	}
	poll.Until(t, 10*time.Second, "operation-log rows of the claim and bind/complete", func() bool {
		return len(inputs("pending-link/claim")) == 1 && len(inputs("bind/complete")) == 1
	})
	for path, want := range map[string]string{
		"pending-link/claim": `{"bindingVerifier":"***","pendingLink":"***"}`,
		"bind/complete":      `{"bindTicket":"***","bindingVerifier":"***"}`,
	} {
		if got := inputs(path)[0]; got != want {
			t.Errorf("stored input of %s = %s, want %s", path, got, want)
		}
	}
	for what, v := range map[string]string{"pending link": pending, "bind ticket": ticket, "verifier": verifier, "second verifier": verifier2} {
		if strings.Contains(k.Log(), v) {
			t.Errorf("the kernel log contains the %s", what)
		}
	}
}
