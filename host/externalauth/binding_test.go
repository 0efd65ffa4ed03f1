package externalauth_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/pluginsdk"
)

// ticket runs a login that must end in a ticket and returns it.
func (b *browser) ticket(user string) string {
	b.e.t.Helper()
	res := b.sso(user)
	tk := res.Query().Get("ticket")
	if tk == "" {
		b.e.t.Fatalf("SSO as %s ended in %s, want a ticket", user, res)
	}
	return tk
}

// A login ticket is bound to the browser that ran the callback: without
// its cookie, or with another one, the exchange answers 40014 and the
// ticket is spent.
func TestTicketBoundToBrowser(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")

	t.Run("without the cookie", func(t *testing.T) {
		b := e.browser()
		tk := b.ticket("bob")
		if b.Cookie("tn_oauth_ticket") == "" {
			t.Fatal("no ticket cookie")
		}
		e.exchange(tk).Expect(t, "exchange from a cookieless client", 200, 40014)
		// The attempt spent the ticket: its own browser cannot use it now.
		b.exchange(tk).Expect(t, "exchange after a refused attempt", 200, 40014)
	})
	t.Run("with another browser's cookie", func(t *testing.T) {
		victim, attacker := e.browser(), e.browser()
		stolen := victim.ticket("bob")
		own := attacker.ticket("carol")
		attacker.exchange(stolen).Expect(t, "exchange of a leaked ticket", 200, 40014)
		victim.exchange(stolen).Expect(t, "victim after the leak was tried", 200, 40014)
		// A failed exchange keeps the browser's cookie for its own ticket.
		attacker.exchange(own).Expect(t, "own ticket after a failed exchange", 200, 0)
	})
	t.Run("forged cookie", func(t *testing.T) {
		b := e.browser()
		tk := b.ticket("bob")
		b.SetCookie("tn_oauth_ticket", strings.Repeat("A", 43))
		b.exchange(tk).Expect(t, "exchange with a forged cookie", 200, 40014)
	})
	t.Run("two tickets of one browser, exchanged in reverse order", func(t *testing.T) {
		// Two tabs: both callbacks ran before either result page exchanged.
		// The ticket cookie holds the browser's one binder, so neither
		// callback's cookie costs the other tab its ticket.
		b := e.browser()
		first := b.ticket("bob")
		second := b.ticket("carol")
		b.exchange(second).Expect(t, "exchange of the second ticket", 200, 0)
		b.exchange(first).Expect(t, "exchange of the first ticket after the second", 200, 0)
		b.exchange(first).Expect(t, "replay of the first ticket", 200, 40014)
	})
	t.Run("no cookie for a pending link or a refusal", func(t *testing.T) {
		b := e.browser()
		e.set("sys.externalauth.corp.provisioning", "")
		defer e.set("sys.externalauth.corp.provisioning", "provision")
		if res := b.sso("dave"); res.Query().Get("pendingLink") == "" {
			t.Fatalf("ended in %s", res)
		}
		if b.LastSet("tn_oauth_ticket") != nil {
			t.Error("a pending link set the ticket cookie")
		}
	})
}

// Behind a gateway prefix over https the ticket cookie carries the prefix
// and Secure, like the other two.
func TestTicketCookieBehindGateway(t *testing.T) {
	e := start(t, "Service__ExternalAuth__CallbackBaseUrl=https://gw.example/admin")
	e.set("sys.externalauth.corp.provisioning", "provision")
	b := e.browser()
	cb := e.is.Login(t, b.authorize("corp"), "bob")
	cb.Path = strings.TrimPrefix(cb.Path, "/admin")
	res := b.callback(cb)
	tk := res.Query().Get("ticket")
	c := b.LastSet("tn_oauth_ticket")
	if tk == "" || c == nil {
		t.Fatalf("ended in %s with cookie %+v", res, c)
	}
	if c.Path != "/admin/api/v1/auth/external" || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge != 120 {
		t.Errorf("tn_oauth_ticket = %+v, want Path=/admin/api/v1/auth/external, Secure, HttpOnly, Lax, Max-Age=120", c)
	}
	b.exchange(tk).Expect(t, "exchange", 200, 0)
}

// Service:ExternalAuth:BindTicketToBrowser=false: no ticket cookie, and the
// ticket alone is accepted (frontends on another site).
func TestTicketBindingSwitchedOff(t *testing.T) {
	e := start(t, "Service__ExternalAuth__BindTicketToBrowser=false")
	e.set("sys.externalauth.corp.provisioning", "provision")
	b := e.browser()
	tk := b.ticket("bob")
	if b.LastSet("tn_oauth_ticket") != nil {
		t.Error("the ticket cookie is set with BindTicketToBrowser off")
	}
	e.exchange(tk).Expect(t, "exchange without a cookie", 200, 0)
	e.exchange(tk).Expect(t, "reused ticket", 200, 40014)
	if !strings.Contains(e.k.Log(), "BindTicketToBrowser=false") {
		t.Error("starting with unbound tickets was not logged")
	}
}

// The issuer is stored with every binding; a login through a binding whose
// issuer differs from the provider's is refused (40015) and the binding is
// left as it was; a binding without an issuer gets the current one.
func TestIssuerStoredWithBinding(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	e.set("sys.externalauth.corp.provisioning", "provision")
	binding := func(subject string) *struct {
		userID int64
		issuer *string
	} {
		t.Helper()
		r := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject(subject), sysuserexternal.IsDelete(false)).OnlyX(ctx)
		return &struct {
			userID int64
			issuer *string
		}{r.UserID, r.Issuer}
	}

	// Provisioning stores it.
	tk := e.browser().ssoTokens("bob")
	if b := binding("sub-bob"); b.issuer == nil || *b.issuer != e.is.URL {
		t.Fatalf("provisioned binding issuer = %v, want %s", b.issuer, e.is.URL)
	}

	// A changed issuer is refused, never remapped.
	k.Ent().SysUserExternal.Update().Where(sysuserexternal.Subject("sub-bob")).SetIssuer("https://old-idp.example").ExecX(ctx)
	users := k.Ent().SysUser.Query().CountX(ctx)
	logged := len(k.Log())
	res := e.browser().sso("bob")
	if errorOf(res) != "40015" || res.Query().Get("ticket") != "" || res.Query().Get("pendingLink") != "" {
		t.Errorf("login under another issuer ended in %s, want only error=40015", res)
	}
	if b := binding("sub-bob"); b.userID != tk.UserID || b.issuer == nil || *b.issuer != "https://old-idp.example" {
		t.Errorf("the binding changed: %+v", b)
	}
	if n := k.Ent().SysUser.Query().CountX(ctx); n != users {
		t.Errorf("%d users after the refusal, want %d (nothing provisioned)", n, users)
	}
	if l := k.Log()[logged:]; !strings.Contains(l, "issuer changed") || !strings.Contains(l, "bound_issuer=https://old-idp.example") {
		t.Errorf("refusal not logged with its reason: %q", l)
	}

	// A binding stored without an issuer takes the current one.
	k.Ent().SysUserExternal.Update().Where(sysuserexternal.Subject("sub-bob")).ClearIssuer().ExecX(ctx)
	if again := e.browser().ssoTokens("bob"); again.UserID != tk.UserID {
		t.Errorf("legacy binding signed in as %d, want %d", again.UserID, tk.UserID)
	}
	if b := binding("sub-bob"); b.issuer == nil || *b.issuer != e.is.URL {
		t.Errorf("legacy binding issuer = %v, want %s recorded", b.issuer, e.is.URL)
	}

	// Link by account, a claimed pending link and bind mode store it too.
	e.set("sys.externalauth.corp.provisioning", "")
	k.User("carol", "Carol#Pass1234")
	e.set("sys.externalauth.corp.linkByAccount", "true")
	e.browser().ssoTokens("carol")
	e.set("sys.externalauth.corp.linkByAccount", "false")
	k.User("dave", "Dave#Pass1234")
	b := e.browser()
	b.claim(k.Login("dave", "Dave#Pass1234").AccessToken, b.sso("dave").Query().Get("pendingLink")).Expect(t, "claim", 200, 0)
	e.is.AddUser(oidctest.User{Subject: "sub-hank", PreferredUsername: "hank", Name: "Hank"})
	k.User("erin", "Erin#Pass1234")
	eb := e.browser()
	if res := eb.callback(e.is.Login(t, eb.bindAuthorize("corp", k.Login("erin", "Erin#Pass1234").AccessToken, ""), "hank")); res.Query().Get("bind") != "corp" {
		t.Fatalf("bind ended in %s", res)
	}
	for _, sub := range []string{"sub-carol", "sub-dave", "sub-hank"} {
		if b := binding(sub); b.issuer == nil || *b.issuer != e.is.URL {
			t.Errorf("binding of %s issuer = %v, want %s", sub, b.issuer, e.is.URL)
		}
	}
}

// Each resolution is logged at Info with the rule that fired, the provider
// and the user id; the subject never appears in clear.
func TestResolutionLogged(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	k.User("carol", "Carol#Pass1234")
	resolved := func(rule string) []string {
		t.Helper()
		var out []string
		for _, l := range strings.Split(k.Log(), "\n") {
			if strings.Contains(l, "external login resolved") && (strings.Contains(l, "rule="+rule+" ") || strings.HasSuffix(l, "rule="+rule)) {
				out = append(out, l)
			}
		}
		return out
	}
	e.browser().sso("bob") // pending
	e.set("sys.externalauth.corp.linkByAccount", "true")
	carol := e.browser().ssoTokens("carol") // linkByAccount
	e.set("sys.externalauth.corp.provisioning", "provision")
	bob := e.browser().ssoTokens("bob") // provision
	e.browser().ssoTokens("bob")        // binding

	userRE := regexp.MustCompile(`user_id=(\d+)`)
	for rule, want := range map[string]int64{"pending": 0, "linkByAccount": carol.UserID, "provision": bob.UserID, "binding": bob.UserID} {
		lines := resolved(rule)
		if len(lines) != 1 {
			t.Errorf("rule %s logged %d times: %q", rule, len(lines), lines)
			continue
		}
		l := lines[0]
		if !strings.Contains(l, "[INFO]") || !strings.Contains(l, "provider=corp") {
			t.Errorf("rule %s: %q, want Info with the provider", rule, l)
		}
		m := userRE.FindStringSubmatch(l)
		switch {
		case want == 0 && (m != nil || !strings.Contains(l, "subject_ref=")):
			t.Errorf("pending resolution %q, want a subject reference and no user", l)
		case want != 0 && (m == nil || m[1] != strconv.FormatInt(want, 10)):
			t.Errorf("rule %s: %q, want user_id=%d", rule, l, want)
		}
	}
	for _, l := range strings.Split(k.Log(), "\n") {
		if strings.Contains(l, "ExternalAuth") && strings.Contains(l, "sub-") {
			t.Errorf("a subject is logged in clear: %q", l)
		}
	}
	// A refused resolution names the rule and the refusal.
	k.Ent().SysUser.Update().Where(sysuser.Account("carol")).SetEnabled(false).ExecX(ctx)
	e.browser().sso("carol")
	if lines := resolved("binding"); len(lines) != 2 || !strings.Contains(lines[1], "refused=40005") {
		t.Errorf("disabled account resolution = %q, want refused=40005", lines)
	}
}

// issuerVendor is a plugin-like provider that reports an issuer, which a
// test can change, even in the middle of an exchange.
type issuerVendor struct {
	vendor
	imu       sync.Mutex
	issuer    string
	duringXch string
}

func (v *issuerVendor) Issuer() string { v.imu.Lock(); defer v.imu.Unlock(); return v.issuer }

func (v *issuerVendor) setIssuer(s string) { v.imu.Lock(); v.issuer = s; v.imu.Unlock() }

func (v *issuerVendor) Exchange(ctx context.Context, r pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	v.imu.Lock()
	if v.duringXch != "" {
		v.issuer, v.duringXch = v.duringXch, ""
	}
	v.imu.Unlock()
	return v.vendor.Exchange(ctx, r)
}

var _ externalauth.IssuerReporter = (*issuerVendor)(nil)

func TestIssuerReporterAtTheService(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	v := &issuerVendor{issuer: "https://one.example"}
	v.result = pluginsdk.Succeed(pluginsdk.Identity{Subject: "u-7", AccountHint: "u7", DisplayName: "Seven"})
	reg := idp.NewRegistry()
	if err := reg.Register("acme", v, idp.PluginSource("test")); err != nil {
		t.Fatal(err)
	}
	svc := externalauth.NewService(externalauth.Options{
		Providers: reg, Switches: externalauth.NewSwitches(k.Settings()), Store: k.Cache(), Client: k.Ent(),
		Tokens: k.Auth(), Hasher: password.New(100000), CallbackBaseURL: "https://api.example",
	})
	if err := k.Settings().Set(ctx, "sys.externalauth.acme.provisioning", "provision"); err != nil {
		t.Fatal(err)
	}
	login := func() (externalauth.CallbackResult, error) {
		t.Helper()
		res, err := svc.Authorize(ctx, externalauth.AuthorizeInput{Provider: "acme", Mode: externalauth.ModeLogin})
		if err != nil {
			t.Fatal(err)
		}
		v.mu.Lock()
		state := v.authorize.State
		v.mu.Unlock()
		return svc.Callback(ctx, externalauth.CallbackInput{
			Provider: "acme", Query: map[string]string{"code": "c", "state": state}, Binder: res.Binder, Client: auth.Client{IP: "203.0.113.7"},
		})
	}
	out, err := login()
	if err != nil || out.Ticket == "" || out.TicketBinder == "" {
		t.Fatalf("first login = %+v, %v", out, err)
	}
	row := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("u-7")).OnlyX(ctx)
	if row.Issuer == nil || *row.Issuer != "https://one.example" {
		t.Fatalf("stored issuer = %v", row.Issuer)
	}
	// The ticket needs its binder unless unbound tickets are allowed.
	if _, err := svc.Exchange(ctx, out.Ticket, externalauth.Proof{}); code(err) != errcode.OAuthStateInvalid {
		t.Errorf("Exchange without binder = %v, want 40014", err)
	}
	out, _ = login()
	if raw, err := svc.Exchange(ctx, out.Ticket, externalauth.Proof{Binder: out.TicketBinder}); err != nil || len(raw) == 0 {
		t.Errorf("Exchange with binder = %s, %v", raw, err)
	}

	v.setIssuer("https://two.example")
	if _, err := login(); code(err) != errcode.OAuthExchangeFailed {
		t.Errorf("login after the issuer changed = %v, want 40015", err)
	}
	v.setIssuer("https://one.example")
	v.imu.Lock()
	v.duringXch = "https://two.example"
	v.imu.Unlock()
	if _, err := login(); code(err) != errcode.OAuthExchangeFailed {
		t.Errorf("issuer changed during the exchange = %v, want 40015", err)
	}
	row = k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("u-7")).OnlyX(ctx)
	if row.Issuer == nil || *row.Issuer != "https://one.example" || row.IsDelete {
		t.Errorf("binding after refusals = %+v", row)
	}

	// A pending link made under one issuer cannot be claimed after the
	// provider moved to another.
	if err := k.Settings().Set(ctx, "sys.externalauth.acme.provisioning", ""); err != nil {
		t.Fatal(err)
	}
	v.setIssuer("https://two.example")
	v.result = pluginsdk.Succeed(pluginsdk.Identity{Subject: "u-8"})
	out, err = login()
	if err != nil || out.Pending == nil {
		t.Fatalf("login of an unbound identity = %+v, %v", out, err)
	}
	v.setIssuer("https://three.example")
	uid := k.User("ivan", "Ivan#Pass1234")
	if err := svc.Claim(ctx, uid, out.Pending.Token, externalauth.Proof{Binder: out.Pending.Binder}); code(err) != errcode.OAuthExchangeFailed {
		t.Errorf("claim after the issuer changed = %v, want 40015", err)
	}
	if n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("u-8")).CountX(ctx); n != 0 {
		t.Errorf("%d bindings of u-8 after a refused claim", n)
	}
}
