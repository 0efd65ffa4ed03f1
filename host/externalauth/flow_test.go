package externalauth_test

import (
	"context"
	"crypto/rsa"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysloginlog"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

type providerItem struct {
	Code          string  `json:"code"`
	DisplayName   string  `json:"displayName"`
	Icon          *string `json:"icon"`
	Brand         *string `json:"brand"`
	Enabled       *bool   `json:"enabled"`
	LinkByAccount *bool   `json:"linkByAccount"`
	Status        string  `json:"status"`
}

func TestProviderLists(t *testing.T) {
	e := start(t)
	k := e.k
	r := k.Do("GET", base+"/providers", "", nil).Expect(t, "providers", 200, 0)
	var list []providerItem
	r.Decode(t, &list)
	if len(list) != 1 || list[0].Code != "corp" || list[0].DisplayName != "Corp SSO" || list[0].Icon == nil || *list[0].Icon != "mdi:key" || list[0].Enabled != nil {
		t.Fatalf("providers = %s", r.Data)
	}
	if strings.Contains(r.Raw, e.is.ClientSecret) || strings.Contains(r.Raw, e.is.ClientID) {
		t.Errorf("providers leaks client settings: %s", r.Raw)
	}

	k.User("viewer", "Viewer#Pass123", "GET:/api/v1/auth/external/providers/all")
	k.User("nobody", "Nobody#Pass123")
	tests := []struct {
		name   string
		token  string
		status int
		code   int
	}{
		{"anonymous", "", 401, 40006},
		{"no permission", k.Login("nobody", "Nobody#Pass123").AccessToken, 403, 41001},
		{"granted", k.Login("viewer", "Viewer#Pass123").AccessToken, 200, 0},
		{"super-admin", k.Admin(), 200, 0},
	}
	for _, tc := range tests {
		t.Run("all/"+tc.name, func(t *testing.T) {
			r := k.Do("GET", base+"/providers/all", tc.token, nil).Expect(t, "providers/all", tc.status, tc.code)
			if tc.code != 0 {
				return
			}
			var all []providerItem
			r.Decode(t, &all)
			if len(all) != 1 || all[0].Enabled == nil || !*all[0].Enabled || all[0].LinkByAccount == nil || *all[0].LinkByAccount || all[0].Status != "ready" {
				t.Errorf("providers/all = %s", r.Data)
			}
			if strings.Contains(r.Raw, e.is.ClientSecret) {
				t.Errorf("providers/all leaks the client secret")
			}
		})
	}

	// Disabled providers disappear from the login page but stay listed for
	// administrators; linkByAccount is reported.
	e.set("sys.externalauth.corp.enabled", "false")
	e.set("sys.externalauth.corp.linkByAccount", "1")
	k.Do("GET", base+"/providers", "", nil).Expect(t, "providers", 200, 0).Decode(t, &list)
	if len(list) != 0 {
		t.Errorf("providers with corp disabled = %+v, want none", list)
	}
	var all []providerItem
	k.Do("GET", base+"/providers/all", k.Admin(), nil).Expect(t, "providers/all", 200, 0).Decode(t, &all)
	if len(all) != 1 || *all[0].Enabled || !*all[0].LinkByAccount {
		t.Errorf("providers/all with corp disabled = %+v", all)
	}
}

// The providers' icon and brand come from the configuration of the built-in
// OIDC provider; an invalid one is left out (null), logged once, and the
// provider stays listed; none gives null.
func TestProviderListIconAndBrand(t *testing.T) {
	is := oidctest.New(t)
	env := oidcEnv(is, 0, "corp")
	env = append(env, "Service__ExternalAuth__Oidc__0__Brand=corp-sso")
	plain := oidcEnv(is, 1, "plain")
	plain = slices.DeleteFunc(plain, func(s string) bool { return strings.Contains(s, "__Icon=") })
	env = append(env, plain...)
	env = append(env, oidcEnv(is, 2, "odd")...)
	env = append(env, "Service__ExternalAuth__Oidc__2__Icon=https://cdn.example/logo.svg", "Service__ExternalAuth__Oidc__2__Brand=Odd Brand")
	k := kerneltest.Start(t, env)
	k.Leaks.Secrets = append(k.Leaks.Secrets, is.ClientSecret)

	want := map[string][2]string{"corp": {"mdi:key", "corp-sso"}, "plain": {"", ""}, "odd": {"", ""}}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	for range 2 { // the second list logs nothing new
		for _, path := range []string{"/providers", "/providers/all"} {
			r := k.Do("GET", base+path, k.Admin(), nil).Expect(t, path, 200, 0)
			var list []providerItem
			r.Decode(t, &list)
			if len(list) != 3 {
				t.Fatalf("%s = %s; want corp, plain and odd", path, r.Data)
			}
			for _, p := range list {
				w := want[p.Code]
				if str(p.Icon) != w[0] || str(p.Brand) != w[1] {
					t.Errorf("%s: %s has icon %q brand %q; want %q, %q", path, p.Code, str(p.Icon), str(p.Brand), w[0], w[1])
				}
			}
			for _, field := range []string{`"icon":null`, `"brand":null`} {
				if !strings.Contains(r.Raw, field) {
					t.Errorf("%s: no %s in %s (absent values are null, as the contract's icon)", path, field, r.Raw)
				}
			}
		}
	}
	log := k.Log()
	for _, field := range []string{"icon", "brand"} {
		msg := "declares an invalid " + field
		if n := strings.Count(log, msg); n != 1 {
			t.Errorf("log has %d warnings %q; want one (the first list)", n, msg)
		}
	}
	if !strings.Contains(log, "cdn.example/logo.svg") {
		t.Errorf("the warning does not name the dropped icon")
	}
}

var letterDigits = regexp.MustCompile(`^[A-Za-z0-9]+$`)

func TestAuthorize(t *testing.T) {
	e := start(t)
	b := e.browser()
	r := b.send("GET", base+"/corp/authorize", "", "")
	loc := location(t, r)
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != e.is.URL+"/authorize" {
		t.Errorf("authorize redirects to %s, want the provider's authorization endpoint", got)
	}
	q := loc.Query()
	state := q.Get("state")
	if !letterDigits.MatchString(state) || len(state)*4 < 128 {
		t.Errorf("state %q: want letters and digits carrying at least 128 bits", state)
	}
	if q.Get("nonce") == "" || len(q.Get("nonce")) < 22 {
		t.Errorf("nonce = %q", q.Get("nonce"))
	}
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 {
		t.Errorf("PKCE = %q / %q, want an S256 challenge", q.Get("code_challenge_method"), q.Get("code_challenge"))
	}
	if got := q.Get("redirect_uri"); got != "http://example.com/api/v1/auth/external/corp/callback" {
		t.Errorf("redirect_uri = %q (Development without CallbackBaseUrl uses the request host)", got)
	}
	if q.Get("client_id") != e.is.ClientID || q.Get("response_type") != "code" {
		t.Errorf("authorize query = %v", q)
	}
	c := b.LastSet("tn_oauth_state")
	if c == nil || c.Value == "" {
		t.Fatalf("no tn_oauth_state cookie")
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/api/v1/auth/external" || c.MaxAge != 300 || c.Secure {
		t.Errorf("tn_oauth_state = %+v, want HttpOnly, SameSite=Lax, Path=/api/v1/auth/external, Max-Age=300, not Secure over http", c)
	}
	if strings.Contains(loc.RawQuery, c.Value) {
		t.Error("the binder travels to the provider")
	}
	// Two authorizations never share a state.
	loc2 := location(t, b.send("GET", base+"/corp/authorize", "", ""))
	if loc2.Query().Get("state") == state || loc2.Query().Get("nonce") == q.Get("nonce") {
		t.Error("a second authorization reused the state or nonce")
	}

	for _, p := range []string{"nope", "CORP", "corp2"} {
		t.Run("unknown provider "+p, func(t *testing.T) {
			e.k.Do("GET", base+"/"+p+"/authorize", "", nil).Expect(t, "authorize "+p, 200, 40013)
		})
	}
}

// Forwarded headers are believed only from trusted proxies.
func TestAuthorizeForwardedHeaders(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		wantURI  string
		wantSecu bool
	}{
		{"untrusted peer", nil, "http://example.com/api/v1/auth/external/corp/callback", false},
		{"trusted proxy", []string{"Service__Http__TrustedProxies__0=0.0.0.0/0", "Service__Http__TrustedProxies__1=::/0"},
			"https://sso.example.org/api/v1/auth/external/corp/callback", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, tc.env...)
			b := e.browser()
			b.headers["X-Forwarded-Host"] = "sso.example.org"
			b.headers["X-Forwarded-Proto"] = "https"
			loc := location(t, b.send("GET", base+"/corp/authorize", "", ""))
			if got := loc.Query().Get("redirect_uri"); got != tc.wantURI {
				t.Errorf("redirect_uri = %q, want %q", got, tc.wantURI)
			}
			if got := b.LastSet("tn_oauth_state").Secure; got != tc.wantSecu {
				t.Errorf("cookie Secure = %v, want %v", got, tc.wantSecu)
			}
		})
	}
}

// deny → pending link → password login → claim → binding listed → the next
// SSO login signs in directly, for the super-admin and a regular user.
func TestPendingLinkThenDirectLogin(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("dave", "Dave#Pass1234", "GET:/api/v1/ping")
	tests := []struct {
		name, idpUser, account, password string
		superAdmin                       bool
	}{
		{"super-admin", "", "superAdmin", kerneltest.AdminPassword, true},
		{"regular user", "dave", "dave", "Dave#Pass1234", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser()
			res := b.sso(tc.idpUser)
			q := res.Query()
			if res.Path != "/oauth/callback" || q.Get("pendingLink") == "" || q.Get("provider") != "corp" || q.Get("ticket") != "" {
				t.Fatalf("unbound identity ended in %s, want a pending link", res)
			}
			wantName := "Alice"
			if tc.idpUser == "dave" {
				wantName = "Dave"
			}
			if q.Get("displayName") != wantName {
				t.Errorf("displayName = %q, want %q", q.Get("displayName"), wantName)
			}
			pc := b.LastSet("tn_oauth_pending")
			if pc == nil || pc.MaxAge != 900 || !pc.HttpOnly || pc.SameSite != http.SameSiteLaxMode || pc.Path != "/api/v1/auth/external" {
				t.Fatalf("tn_oauth_pending = %+v", pc)
			}
			if b.Cookie("tn_oauth_state") == "" {
				t.Error("the callback cleared the browser's binder, which its other tabs may still need")
			}
			token := k.Login(tc.account, tc.password).AccessToken
			b.claim(token, q.Get("pendingLink")).Expect(t, "claim", 200, 0)

			r := k.Do("GET", base+"/bindings", token, nil).Expect(t, "bindings", 200, 0)
			var bindings []struct {
				Provider    string  `json:"provider"`
				DisplayName *string `json:"displayName"`
				BoundAt     string  `json:"boundAt"`
			}
			r.Decode(t, &bindings)
			if len(bindings) != 1 || bindings[0].Provider != "corp" || bindings[0].DisplayName == nil || *bindings[0].DisplayName != wantName || bindings[0].BoundAt == "" {
				t.Errorf("bindings = %s", r.Data)
			}
			if strings.Contains(r.Raw, "sub-") {
				t.Errorf("bindings expose the subject: %s", r.Raw)
			}

			tk := e.browser().ssoTokens(tc.idpUser)
			if tk.IsSuperAdmin != tc.superAdmin || tk.MustChangePassword {
				t.Errorf("tokens = %+v", tk)
			}
			var ping struct {
				Account string `json:"account"`
			}
			k.Do("GET", "/api/v1/ping", tk.AccessToken, nil).Expect(t, "ping with SSO token", 200, 0).Decode(t, &ping)
			if ping.Account != tc.account {
				t.Errorf("ping account = %q, want %q", ping.Account, tc.account)
			}
		})
	}
}

func TestExchange(t *testing.T) {
	e := start(t)
	b := e.browser()
	e.k.User("dave", "Dave#Pass1234")
	res := b.sso("dave")
	b.claim(e.k.Login("dave", "Dave#Pass1234").AccessToken, res.Query().Get("pendingLink")).Expect(t, "claim", 200, 0)
	res = b.sso("dave")
	ticket := res.Query().Get("ticket")
	if len(ticket) != 43 {
		t.Fatalf("ticket %q: want 43 characters", ticket)
	}
	c := b.LastSet("tn_oauth_ticket")
	if c == nil || c.Value == "" {
		t.Fatal("the callback set no tn_oauth_ticket cookie")
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/api/v1/auth/external" || c.MaxAge != 120 || c.Secure {
		t.Errorf("tn_oauth_ticket = %+v, want HttpOnly, SameSite=Lax, Path=/api/v1/auth/external, Max-Age=120, not Secure over http", c)
	}
	if c.Value == ticket || strings.Contains(res.RawQuery, c.Value) {
		t.Error("the ticket binder travels in the URL")
	}
	r := b.exchange(ticket).Expect(t, "exchange", 200, 0)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", cc)
	}
	// The cookie (the browser's one binder, which another tab's ticket may
	// still need) outlives the exchange; the spent ticket is what cannot be
	// used again.
	if b.Cookie("tn_oauth_ticket") == "" {
		t.Error("a successful exchange cleared the ticket cookie another tab may still need")
	}
	var out map[string]any
	r.Decode(t, &out)
	for _, f := range []string{"accessToken", "expiresAt", "refreshToken", "refreshExpiresAt", "userId", "account", "name", "mustChangePassword", "sessionMode", "csrfRequired", "isSuperAdmin"} {
		if _, ok := out[f]; !ok {
			t.Errorf("exchange answer lacks %s: %s", f, r.Data)
		}
	}
	tests := []struct{ name, body string }{
		{"reused", `{"ticket":"` + ticket + `"}`},
		{"unknown", `{"ticket":"` + strings.Repeat("A", 43) + `"}`},
		{"blank", `{"ticket":""}`},
		{"malformed body", `{"ticket":`},
		{"wrong shape", `{"ticket":"../../x"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b.SetCookie("tn_oauth_ticket", c.Value)
			b.send("POST", base+"/exchange", "", tc.body).Expect(t, "exchange", 200, 40014)
		})
	}
}

func TestClaimRules(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("erin", "Erin#Pass1234")
	k.User("finn", "Finn#Pass1234")
	erin := k.Login("erin", "Erin#Pass1234").AccessToken
	finn := k.Login("finn", "Finn#Pass1234").AccessToken

	// Pending links for bob, obtained in three browsers before any binding,
	// and one for carol.
	pend := func(user string) (*browser, string) {
		b := e.browser()
		p := b.sso(user).Query().Get("pendingLink")
		if p == "" {
			t.Fatalf("no pending link for %s", user)
		}
		return b, p
	}
	b1, p1 := pend("bob")
	b2, p2 := pend("bob")
	b3, p3 := pend("bob")
	b4, p4 := pend("carol")
	b5, p5 := pend("carol")
	b6, p6 := pend("carol")

	t.Run("without the cookie", func(t *testing.T) {
		saved := b5.Cookie("tn_oauth_pending")
		b5.SetCookie("tn_oauth_pending", "")
		b5.claim(erin, p5).Expect(t, "claim without cookie", 200, 40014)
		b5.SetCookie("tn_oauth_pending", saved)
		// The attempt consumed the link.
		b5.claim(erin, p5).Expect(t, "claim after a failed attempt", 200, 40014)
	})
	t.Run("with another browser's cookie", func(t *testing.T) {
		b6.SetCookie("tn_oauth_pending", b4.Cookie("tn_oauth_pending"))
		b6.claim(erin, p6).Expect(t, "claim with a foreign cookie", 200, 40014)
	})
	t.Run("blank or unknown", func(t *testing.T) {
		b4.claim(erin, "").Expect(t, "blank", 200, 40014)
		b4.claim(erin, strings.Repeat("x", 43)).Expect(t, "unknown", 200, 40014)
	})
	t.Run("anonymous", func(t *testing.T) {
		b1.claim("", p1).Expect(t, "anonymous claim", 401, 40006)
	})
	t.Run("bind, then idempotent for the same user", func(t *testing.T) {
		b1.claim(erin, p1).Expect(t, "claim", 200, 0)
		b1.claim(erin, p1).Expect(t, "reused pending link", 200, 40014)
		b2.claim(erin, p2).Expect(t, "second link of the same identity, same user", 200, 0)
	})
	t.Run("identity bound to another user", func(t *testing.T) {
		b3.claim(finn, p3).Expect(t, "claim by another user", 200, 40017)
	})
	t.Run("user already bound to another identity of the provider", func(t *testing.T) {
		b4.claim(erin, p4).Expect(t, "second identity", 200, 40017)
	})
	t.Run("provider switched off meanwhile", func(t *testing.T) {
		b, p := pend("dave")
		e.set("sys.externalauth.corp.enabled", "false")
		b.claim(finn, p).Expect(t, "claim with the provider off", 200, 40013)
		e.set("sys.externalauth.corp.enabled", "true")
	})
	n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.IsDelete(false)).CountX(context.Background())
	if n != 1 {
		t.Errorf("%d live bindings, want 1", n)
	}
}

func TestLinkByAccount(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	k.User("bob", "Bob#Pass12345")
	k.User("carol", "Carol#Pass1234")
	k.Ent().SysUser.Update().Where(sysuser.Account("carol")).SetEnabled(false).ExecX(ctx)
	k.User("dave", "Dave#Pass1234")
	// dave already has another corp identity.
	daveID := k.Ent().SysUser.Query().Where(sysuser.Account("dave")).OnlyIDX(ctx)
	k.Ent().SysUserExternal.Create().SetUserID(daveID).SetProvider("corp").SetSubject("sub-other").ExecX(ctx)
	// Accounts match case-insensitively, as at password login.
	k.User("erin", "Erin#Pass12345")
	e.is.AddUser(oidctest.User{Subject: "sub-erin", PreferredUsername: "ERIN", Name: "Erin"})
	e.is.AddUser(oidctest.User{Subject: "sub-admin-upper", PreferredUsername: "SUPERADMIN", Name: "Impostor"})

	tests := []struct {
		name    string
		link    string
		idpUser string
		want    string // "ticket:<account>" or "pending"
	}{
		{"off", "false", "bob", "pending"},
		{"unset", "", "bob", "pending"},
		{"on: same-name account", "true", "bob", "ticket:bob"},
		{"on: bound now, linking no longer needed", "false", "bob", "ticket:bob"},
		{"on: never the super-admin", "1", "superAdmin", "pending"},
		{"on: never the super-admin, in any letter case", "1", "SUPERADMIN", "pending"},
		{"on: an account in another letter case", "1", "ERIN", "ticket:erin"},
		{"on: never a disabled account", "1", "carol", "pending"},
		{"on: never an account already bound for the provider", "1", "dave", "pending"},
		{"on: no same-name account", "1", "", "pending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.set("sys.externalauth.corp.linkByAccount", tc.link)
			b := e.browser()
			res := b.sso(tc.idpUser)
			if tc.want == "pending" {
				if res.Query().Get("pendingLink") == "" {
					t.Fatalf("ended in %s, want a pending link", res)
				}
				return
			}
			ticket := res.Query().Get("ticket")
			if ticket == "" {
				t.Fatalf("ended in %s, want a ticket", res)
			}
			var tk kerneltest.Tokens
			b.exchange(ticket).Expect(t, "exchange", 200, 0).Decode(t, &tk)
			account := k.Ent().SysUser.GetX(ctx, tk.UserID).Account
			if "ticket:"+account != tc.want {
				t.Errorf("signed in as %s, want %s", account, tc.want)
			}
		})
	}
	if n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("sub-admin")).CountX(ctx); n != 0 {
		t.Errorf("the super-admin got linked")
	}
}

func TestAutoProvision(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	e.set("sys.externalauth.corp.provisioning", "PROVISION")
	e.set("sys.externalauth.corp.defaultRoleIds", "2, 3,999")
	e.set("sys.externalauth.corp.defaultOrgId", "3")

	tk := e.browser().ssoTokens("bob")
	if tk.MustChangePassword || tk.IsSuperAdmin {
		t.Errorf("provisioned tokens = %+v, want no forced password change", tk)
	}
	u := k.Ent().SysUser.GetX(ctx, tk.UserID)
	if u.Account != "bob" || u.Name != "Bob" || u.OrgID == nil || *u.OrgID != 3 || u.MustChangePassword || u.PasswordHash == "" {
		t.Errorf("provisioned user = %+v", u)
	}
	var roles []int64
	for _, r := range k.Ent().SysUserRole.Query().Where(sysuserrole.UserID(u.ID)).AllX(ctx) {
		roles = append(roles, r.RoleID)
	}
	slices.Sort(roles)
	if !slices.Equal(roles, []int64{2, 3}) {
		t.Errorf("roles = %v, want [2 3]", roles)
	}
	// The placeholder password is random: nothing guessable logs in.
	for _, pw := range []string{"", "bob", "Bob", "123456"} {
		if r := k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "bob", "password": pw}); r.Code == 0 {
			t.Errorf("password %q logs in to the provisioned account", pw)
		}
	}
	// Next login: the binding.
	if again := e.browser().ssoTokens("bob"); again.UserID != u.ID {
		t.Errorf("second login signed in as %d, want %d", again.UserID, u.ID)
	}
	// An account hint that is taken gets a generated account name.
	imp := e.browser().ssoTokens("superAdmin")
	iu := k.Ent().SysUser.GetX(ctx, imp.UserID)
	if imp.IsSuperAdmin || iu.IsSuperAdmin || !strings.HasPrefix(iu.Account, "corp_") {
		t.Errorf("identity hinting superAdmin provisioned %+v (super-admin %v)", iu.Account, imp.IsSuperAdmin)
	}
	// Linking is tried before provisioning.
	k.User("carol", "Carol#Pass1234")
	e.set("sys.externalauth.corp.linkByAccount", "true")
	ct := e.browser().ssoTokens("carol")
	if k.Ent().SysUser.GetX(ctx, ct.UserID).Account != "carol" {
		t.Error("with linking and provisioning on, the existing account was not linked")
	}
	if n := k.Ent().SysUser.Query().Where(sysuser.AccountHasPrefix("carol")).CountX(ctx); n != 1 {
		t.Errorf("%d carol accounts, want 1", n)
	}
}

func TestDisabledProvider(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("bob", "Bob#Pass12345")
	e.set("sys.externalauth.corp.linkByAccount", "true")
	b := e.browser()
	// A login in flight when the provider is switched off.
	inflight := e.is.Login(t, b.authorize("corp"), "bob")
	e.set("sys.externalauth.corp.enabled", "false")
	k.Do("GET", base+"/corp/authorize", "", nil).Expect(t, "authorize while off", 200, 40013)
	if got := errorOf(b.callback(inflight)); got != "40013" {
		t.Errorf("callback while off: error = %q, want 40013", got)
	}
	for _, v := range []string{"TRUE", "1", "true"} {
		e.set("sys.externalauth.corp.enabled", v)
		if tk := e.browser().ssoTokens("bob"); tk.AccessToken == "" {
			t.Errorf("enabled=%q does not switch the provider on", v)
		}
	}
	for _, v := range []string{"0", "off", "no"} {
		e.set("sys.externalauth.corp.enabled", v)
		k.Do("GET", base+"/corp/authorize", "", nil).Expect(t, "authorize with enabled="+v, 200, 40013)
	}
	// Through the config service's own cache: a value set by the config API
	// path (Set invalidates) is seen by the next request.
	e.set("sys.externalauth.corp.enabled", "")
	location(t, e.browser().send("GET", base+"/corp/authorize", "", ""))
}

func TestCallbackRefusals(t *testing.T) {
	e := start(t)
	tests := []struct {
		name string
		run  func(t *testing.T) *url.URL
		want string
	}{
		{"no cookie", func(t *testing.T) *url.URL {
			b := e.browser()
			cb := e.is.Login(t, b.authorize("corp"), "bob")
			b.SetCookie("tn_oauth_state", "")
			return b.callback(cb)
		}, "40014"},
		{"another browser's cookie", func(t *testing.T) *url.URL {
			b, other := e.browser(), e.browser()
			cb := e.is.Login(t, b.authorize("corp"), "bob")
			other.authorize("corp")
			b.SetCookie("tn_oauth_state", other.Cookie("tn_oauth_state"))
			return b.callback(cb)
		}, "40014"},
		{"reused state", func(t *testing.T) *url.URL {
			b := e.browser()
			cb := e.is.Login(t, b.authorize("corp"), "bob")
			binder := b.Cookie("tn_oauth_state")
			b.callback(cb)
			b.SetCookie("tn_oauth_state", binder)
			return b.callback(cb)
		}, "40014"},
		{"unknown state", func(t *testing.T) *url.URL {
			b := e.browser()
			cb := e.is.Login(t, b.authorize("corp"), "bob")
			q := cb.Query()
			q.Set("state", strings.Repeat("A", 64))
			cb.RawQuery = q.Encode()
			return b.callback(cb)
		}, "40014"},
		{"malformed state", func(t *testing.T) *url.URL {
			b := e.browser()
			return location(t, b.send("GET", base+"/corp/callback?code=x&state=../../etc", "", ""))
		}, "40014"},
		{"provider error", func(t *testing.T) *url.URL {
			b := e.browser()
			loc, _ := url.Parse(b.authorize("corp"))
			return location(t, b.send("GET", base+"/corp/callback?error=access_denied&state="+loc.Query().Get("state"), "", ""))
		}, "40015"},
		{"no code", func(t *testing.T) *url.URL {
			b := e.browser()
			loc, _ := url.Parse(b.authorize("corp"))
			return location(t, b.send("GET", base+"/corp/callback?state="+loc.Query().Get("state"), "", ""))
		}, "40015"},
		{"unknown provider", func(t *testing.T) *url.URL {
			return location(t, e.browser().send("GET", base+"/nope/callback?code=x&state=y", "", ""))
		}, "40013"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := e.is.TokenCalls()
			res := tc.run(t)
			if got := errorOf(res); got != tc.want || res.Path != "/oauth/callback" {
				t.Errorf("ended in %s, want /oauth/callback?error=%s", res, tc.want)
			}
			if tc.want == "40014" && tc.name != "reused state" && e.is.TokenCalls() != calls {
				t.Errorf("the token endpoint was called for a refused callback")
			}
		})
	}
}

// A state issued for one provider is refused at another provider's
// callback (mix-up defence).
func TestStateBoundToProvider(t *testing.T) {
	is := oidctest.New(t)
	is.AddUser(oidctest.User{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"})
	k := kerneltest.Start(t, append(oidcEnv(is, 0, "corp"), oidcEnv(is, 1, "corp2")...))
	e2 := &env{t: t, k: k, is: is}
	b := e2.browser()
	cb := is.Login(t, b.authorize("corp"), "bob")
	binder := b.Cookie("tn_oauth_state")
	cb.Path = strings.Replace(cb.Path, "/corp/", "/corp2/", 1)
	calls := is.TokenCalls()
	res := b.callback(cb)
	if got := errorOf(res); got != "40014" || res.Query().Get("ticket") != "" || res.Query().Get("pendingLink") != "" {
		t.Errorf("state of corp at corp2's callback ended in %s, want only error=40014", res)
	}
	if is.TokenCalls() != calls {
		t.Error("the code was redeemed at another provider's callback")
	}
	// The state is spent: the right callback fails too.
	cb.Path = strings.Replace(cb.Path, "/corp2/", "/corp/", 1)
	b.SetCookie("tn_oauth_state", binder)
	if got := errorOf(b.callback(cb)); got != "40014" {
		t.Errorf("the state survived a refused callback at another provider: error = %q", got)
	}
}

// The negative ID-token list (OIDF RP conformance, security requirements
// §1.2–§1.3): every case ends in ?error=40015 with no ticket and no pending
// link, binds nothing, and never calls the userinfo endpoint with the access
// token of a refused ID token.
func TestBadIDTokens(t *testing.T) {
	e := start(t)
	other, err := rsaKey()
	if err != nil {
		t.Fatal(err)
	}
	// The key set is cached before the cases run, so an unknown kid really
	// is unknown to the relying party first.
	if res := e.browser().sso("bob"); res.Query().Get("pendingLink") == "" {
		t.Fatalf("warm-up login ended in %s", res)
	}
	noProfile := func(c map[string]any) { delete(c, "name"); delete(c, "email") }
	tests := []struct {
		name     string
		mutate   func(map[string]any)
		userinfo func(map[string]any)
		signer   *rsa.PrivateKey
		kid      string
		reason   string // in the logged refusal
	}{
		{name: "bad signature", signer: other, reason: "signature"},
		{name: "unknown key id (not published even after a refetch)", signer: other, kid: "k-unknown", reason: "signature"},
		{name: "wrong issuer", mutate: func(c map[string]any) { c["iss"] = "https://evil.example" }, reason: "issued by a different provider"},
		{name: "wrong audience", mutate: func(c map[string]any) { c["aud"] = "another-client" }, reason: "audience"},
		{name: "missing audience", mutate: func(c map[string]any) { delete(c, "aud") }, reason: "audience"},
		{name: "missing sub", mutate: func(c map[string]any) { delete(c, "sub") }, reason: "sub is missing"},
		{name: "missing iat", mutate: func(c map[string]any) { delete(c, "iat") }, reason: "iat is missing"},
		{name: "wrong nonce", mutate: func(c map[string]any) { c["nonce"] = "forged" }, reason: "nonce does not match"},
		{name: "expired", mutate: func(c map[string]any) { c["exp"] = int64(1) }, reason: "expired"},
		{name: "azp of another client", mutate: func(c map[string]any) { c["azp"] = "someone" }, reason: "azp"},
		{name: "userinfo sub differs", mutate: noProfile, userinfo: func(c map[string]any) { c["sub"] = "sub-carol" },
			reason: "userinfo rejected: sub does not match"},
		{name: "userinfo without sub", mutate: noProfile, userinfo: func(c map[string]any) { delete(c, "sub") },
			reason: "userinfo rejected: sub does not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.is.Mutate(tc.mutate)
			e.is.MutateUserInfo(tc.userinfo)
			e.is.SignWithKeyID(tc.signer, tc.kid)
			t.Cleanup(func() { e.is.Mutate(nil); e.is.MutateUserInfo(nil); e.is.SignWithKeyID(nil, "") })
			userinfo := e.is.UserInfoCalls()
			logged := len(e.k.Log())
			res := e.browser().sso("bob")
			if l := e.k.Log()[logged:]; !strings.Contains(l, "external login refused") || !strings.Contains(l, tc.reason) {
				t.Errorf("refusal logged as %q, want the reason %q", l, tc.reason)
			}
			q := res.Query()
			if got := errorOf(res); got != "40015" || q.Get("ticket") != "" || q.Get("pendingLink") != "" || res.Path != "/oauth/callback" {
				t.Errorf("ended in %s, want only /oauth/callback?error=40015", res)
			}
			if tc.userinfo == nil && e.is.UserInfoCalls() != userinfo {
				t.Error("the userinfo endpoint was called for a refused ID token")
			}
		})
	}
	if n := e.k.Ent().SysUserExternal.Query().CountX(context.Background()); n != 0 {
		t.Errorf("%d bindings after refused tokens", n)
	}
}

// The provider rotates its signing key: a token signed with the new key
// under a kid the kernel has not seen verifies, because go-oidc's remote
// key set fetches the key set again on an unknown kid (OIDC Core §10.1.1).
func TestSigningKeyRotation(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	first := e.browser().ssoTokens("bob")
	fetches := e.is.KeysCalls()
	if fetches == 0 {
		t.Fatal("the key set was never fetched")
	}
	// Cached: a second login does not fetch again.
	e.browser().ssoTokens("bob")
	if e.is.KeysCalls() != fetches {
		t.Errorf("the key set was fetched again without a rotation (%d → %d)", fetches, e.is.KeysCalls())
	}
	kid := e.is.Rotate(t)
	e.is.RetireOldKeys()
	again := e.browser().ssoTokens("bob")
	if again.UserID != first.UserID {
		t.Errorf("after the rotation signed in as %d, want %d", again.UserID, first.UserID)
	}
	if e.is.KeysCalls() != fetches+1 {
		t.Errorf("key set fetched %d times after the rotation to %s, want exactly once more", e.is.KeysCalls()-fetches, kid)
	}
	// The retired key no longer verifies anything.
	e.is.SignWithKeyID(e.is.Key, e.is.KeyID)
	t.Cleanup(func() { e.is.SignWithKeyID(nil, "") })
	if res := e.browser().sso("bob"); errorOf(res) != "40015" || res.Query().Get("ticket") != "" {
		t.Errorf("token signed with the retired key ended in %s, want error=40015", res)
	}
}

// An ID token without name and email is completed from the userinfo
// endpoint once its sub matches.
func TestUserInfoCompletesProfile(t *testing.T) {
	e := start(t)
	e.set("sys.externalauth.corp.provisioning", "provision")
	e.is.AddUser(oidctest.User{Subject: "sub-gina", PreferredUsername: "gina", Name: "Gina", Email: "gina@example.test"})
	e.is.Mutate(func(c map[string]any) { delete(c, "name"); delete(c, "email"); delete(c, "preferred_username") })
	calls := e.is.UserInfoCalls()
	tk := e.browser().ssoTokens("gina")
	if e.is.UserInfoCalls() != calls+1 {
		t.Errorf("userinfo called %d times, want 1", e.is.UserInfoCalls()-calls)
	}
	u := e.k.Ent().SysUser.GetX(context.Background(), tk.UserID)
	if u.Account != "gina" || u.Name != "Gina" || u.Email == nil || *u.Email != "gina@example.test" {
		t.Errorf("provisioned %s / %s / %v, want the userinfo profile", u.Account, u.Name, u.Email)
	}
	// With the profile in the ID token, userinfo is not needed.
	e.is.Mutate(nil)
	calls = e.is.UserInfoCalls()
	e.browser().ssoTokens("gina")
	if e.is.UserInfoCalls() != calls {
		t.Error("userinfo was called although the ID token carried name and email")
	}
}

func TestBindAndUnbind(t *testing.T) {
	e := start(t)
	k := e.k
	k.User("erin", "Erin#Pass1234")
	k.User("finn", "Finn#Pass1234")
	erin := k.Login("erin", "Erin#Pass1234").AccessToken
	finn := k.Login("finn", "Finn#Pass1234").AccessToken

	bindURL := func(b *browser, token string) string {
		t.Helper()
		return b.bindAuthorize("corp", token, "")
	}

	b := e.browser()
	res := b.callback(e.is.Login(t, bindURL(b, erin), "bob"))
	if res.Query().Get("bind") != "corp" || res.Path != "/oauth/callback" {
		t.Fatalf("bind ended in %s, want ?bind=corp", res)
	}
	var list []map[string]any
	k.Do("GET", base+"/bindings", erin, nil).Expect(t, "bindings", 200, 0).Decode(t, &list)
	if len(list) != 1 || list[0]["provider"] != "corp" {
		t.Errorf("bindings = %v", list)
	}
	k.Do("POST", base+"/corp/bind", erin, nil).Expect(t, "bind again", 200, 40017)
	if tk := e.browser().ssoTokens("bob"); tk.UserID == 0 || k.Ent().SysUser.GetX(context.Background(), tk.UserID).Account != "erin" {
		t.Errorf("SSO after binding did not sign in as erin")
	}

	t.Run("identity bound to another user", func(t *testing.T) {
		b := e.browser()
		res := b.callback(e.is.Login(t, bindURL(b, finn), "bob"))
		if errorOf(res) != "40017" {
			t.Errorf("ended in %s, want error 40017", res)
		}
	})
	t.Run("bind URL opened in another browser", func(t *testing.T) {
		victim := e.browser()
		start := e.browser().bindStartURL("corp", finn, "")
		res := location(t, victim.open(start))
		if errorOf(res) != "40014" || res.Path != "/oauth/callback" {
			t.Errorf("start URL in another browser ended in %s, want /oauth/callback?error=40014", res)
		}
	})
	t.Run("provider URL opened in another browser", func(t *testing.T) {
		victim := e.browser()
		u := bindURL(e.browser(), finn)
		res := victim.callback(e.is.Login(t, u, "carol"))
		if errorOf(res) != "40014" {
			t.Errorf("ended in %s, want error 40014", res)
		}
	})
	t.Run("provider off", func(t *testing.T) {
		e.set("sys.externalauth.corp.enabled", "false")
		defer e.set("sys.externalauth.corp.enabled", "true")
		k.Do("POST", base+"/corp/bind", finn, nil).Expect(t, "bind while off", 200, 40013)
		k.Do("POST", base+"/nope/bind", finn, nil).Expect(t, "bind unknown", 200, 40013)
	})
	t.Run("anonymous", func(t *testing.T) {
		k.Do("POST", base+"/corp/bind", "", nil).Expect(t, "bind anonymous", 401, 40006)
		k.Do("DELETE", base+"/corp/binding", "", nil).Expect(t, "unbind anonymous", 401, 40006)
		k.Do("GET", base+"/bindings", "", nil).Expect(t, "bindings anonymous", 401, 40006)
	})

	k.Do("DELETE", base+"/corp/binding", erin, nil).Expect(t, "unbind", 200, 0)
	k.Do("GET", base+"/bindings", erin, nil).Expect(t, "bindings", 200, 0).Decode(t, &list)
	if len(list) != 0 {
		t.Errorf("bindings after unbind = %v", list)
	}
	k.Do("DELETE", base+"/corp/binding", erin, nil).Expect(t, "unbind twice", 200, 0)
	row := k.Ent().SysUserExternal.Query().Where(sysuserexternal.Subject("sub-bob")).OnlyX(context.Background())
	if !row.IsDelete || row.DeleteKey != row.ID {
		t.Errorf("unbound row = %+v, want soft-deleted with delete_key = id", row)
	}
	if res := e.browser().sso("bob"); res.Query().Get("pendingLink") == "" {
		t.Errorf("SSO after unbinding ended in %s, want a pending link", res)
	}
	// The identity is free again: finn can bind it.
	b = e.browser()
	if res := b.callback(e.is.Login(t, bindURL(b, finn), "bob")); res.Query().Get("bind") != "corp" {
		t.Errorf("rebinding after unbind ended in %s", res)
	}
}

// Behind a gateway sub-path: the redirect URI and both cookies carry the
// prefix; a result path with a query gets & parameters.
func TestGatewayPrefix(t *testing.T) {
	e := start(t,
		"Service__ExternalAuth__CallbackBaseUrl=https://gw.example/admin",
		"Service__ExternalAuth__FrontendResultPath=https://app.example/#/oauth/callback?from=sso",
	)
	b := e.browser()
	loc, _ := url.Parse(b.authorize("corp"))
	if got := loc.Query().Get("redirect_uri"); got != "https://gw.example/admin/api/v1/auth/external/corp/callback" {
		t.Errorf("redirect_uri = %q", got)
	}
	c := b.LastSet("tn_oauth_state")
	if c.Path != "/admin/api/v1/auth/external" || !c.Secure || !c.HttpOnly {
		t.Errorf("tn_oauth_state = %+v, want Path=/admin/api/v1/auth/external, Secure", c)
	}
	cb := e.is.Login(t, loc.String(), "bob")
	// The gateway strips /admin before the kernel sees the request.
	cb.Path = strings.TrimPrefix(cb.Path, "/admin")
	r := b.send("GET", cb.Path+"?"+cb.RawQuery, "", "")
	got := r.Header.Get("Location")
	if !strings.HasPrefix(got, "https://app.example/#/oauth/callback?from=sso&pendingLink=") || !strings.Contains(got, "&provider=corp") {
		t.Errorf("Location = %q", got)
	}
	if p := b.LastSet("tn_oauth_pending"); p == nil || p.Path != "/admin/api/v1/auth/external" || !p.Secure {
		t.Errorf("tn_oauth_pending = %+v", p)
	}
}

// A bound account that is disabled is refused with 40005; one that is
// deleted loses its binding and the identity is unbound again. Logins are
// written to the login log under the provider code.
func TestBoundAccountStates(t *testing.T) {
	e := start(t)
	k := e.k
	ctx := context.Background()
	k.User("erin", "Erin#Pass1234")
	b := e.browser()
	b.claim(k.Login("erin", "Erin#Pass1234").AccessToken, b.sso("bob").Query().Get("pendingLink")).Expect(t, "claim", 200, 0)
	e.browser().ssoTokens("bob")
	logs := k.Ent().SysLoginLog.Query().Where(sysloginlog.LoginMethod("corp")).AllX(ctx)
	if len(logs) != 1 || !logs[0].Success || logs[0].Account != "erin" || logs[0].UserAgent == nil || *logs[0].UserAgent != providerUA {
		t.Errorf("login log = %+v, want one successful corp login of erin", logs)
	}

	k.Ent().SysUser.Update().Where(sysuser.Account("erin")).SetEnabled(false).ExecX(ctx)
	if res := e.browser().sso("bob"); errorOf(res) != "40005" {
		t.Errorf("disabled account: ended in %s, want error 40005", res)
	}
	if n := k.Ent().SysLoginLog.Query().Where(sysloginlog.LoginMethod("corp"), sysloginlog.ResultCode(40005)).CountX(ctx); n != 1 {
		t.Errorf("%d refused corp logins logged, want 1", n)
	}

	u := k.Ent().SysUser.Query().Where(sysuser.Account("erin")).OnlyX(ctx)
	k.Ent().SysUser.UpdateOne(u).SetIsDelete(true).SetDeleteKey(u.ID).ExecX(ctx)
	if res := e.browser().sso("bob"); res.Query().Get("pendingLink") == "" {
		t.Errorf("deleted account: ended in %s, want a pending link", res)
	}
	if n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.IsDelete(false)).CountX(ctx); n != 0 {
		t.Errorf("%d live bindings after the user was deleted, want 0", n)
	}
}
