package externalauth_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// linkOutcome runs one SSO login of idpUser and reports "pending" (a
// pending-link ticket, no session) or "ticket:<account>" (signed in).
func linkOutcome(t *testing.T, e *env, idpUser string) string {
	t.Helper()
	b := e.browser()
	res := b.sso(idpUser)
	if p := res.Query().Get("pendingLink"); p != "" {
		if res.Query().Get("ticket") != "" {
			t.Fatalf("ended in %s: both a pending link and a ticket", res)
		}
		return "pending"
	}
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("ended in %s, want a ticket or a pending link", res)
	}
	var tk kerneltest.Tokens
	b.exchange(ticket).Expect(t, "exchange", 200, 0).Decode(t, &tk)
	return "ticket:" + e.k.Ent().SysUser.GetX(context.Background(), tk.UserID).Account
}

// With linkByAccount on, an IdP user who picks preferred_username "bob"
// used to sign in as the local bob. preferred_username is neither unique
// nor stable (OIDC Core §5.7): without an AccountClaim there is no account
// hint, and the identity ends in a pending link.
func TestLinkByAccountIgnoresPreferredUsername(t *testing.T) {
	e := startBare(t)
	k := e.k
	k.User("bob", "Bob#Pass12345")
	// The IdP lets its users pick their preferred_username.
	e.is.AddUser(oidctest.User{Subject: "sub-mallory", PreferredUsername: "bob", Name: "Mallory"})
	e.set("sys.externalauth.corp.linkByAccount", "true")

	if got := linkOutcome(t, e, "bob"); got != "pending" {
		t.Fatalf("an IdP user named bob by preferred_username ended in %s, want a pending link", got)
	}
	if n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.IsDelete(false)).CountX(context.Background()); n != 0 {
		t.Fatalf("%d bindings were made", n)
	}
}

// AccountClaim=email links only an identity whose email the IdP verified,
// to the local account named like the address (account names only, never
// the local email field).
func TestLinkByAccountWithEmailClaim(t *testing.T) {
	e := startBare(t, "Service__ExternalAuth__Oidc__0__AccountClaim=email")
	k := e.k
	ctx := context.Background()
	yes, no := true, false
	for _, u := range []oidctest.User{
		{Subject: "sub-erin-unverified", PreferredUsername: "erin-unverified", Name: "Erin?", Email: "erin@corp.example", EmailVerified: &no},
		{Subject: "sub-erin-silent", PreferredUsername: "erin-silent", Name: "Erin?", Email: "erin@corp.example"},
		{Subject: "sub-erin", PreferredUsername: "erin", Name: "Erin", Email: "erin@corp.example", EmailVerified: &yes},
		{Subject: "sub-finn", PreferredUsername: "finn", Name: "Finn", Email: "finn@corp.example", EmailVerified: &yes},
		// preferred_username equal to a local account, verified email of
		// nobody here: no link.
		{Subject: "sub-gina", PreferredUsername: "erin@corp.example", Name: "Gina", Email: "gina@corp.example", EmailVerified: &yes},
	} {
		e.is.AddUser(u)
	}
	k.User("erin@corp.example", "Erin#Pass1234")
	// finn's local account carries finn's address in its email field only.
	k.User("finn", "Finn#Pass1234")
	k.Ent().SysUser.Update().Where(sysuser.Account("finn")).SetEmail("finn@corp.example").ExecX(ctx)
	e.set("sys.externalauth.corp.linkByAccount", "true")

	tests := []struct {
		name, idpUser, want string
	}{
		{"email_verified false", "erin-unverified", "pending"},
		{"email_verified absent", "erin-silent", "pending"},
		{"preferred_username is not the account claim", "erin@corp.example", "pending"},
		{"the local email field is not an account name", "finn", "pending"},
		{"email_verified true and an account of that name", "erin", "ticket:erin@corp.example"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := linkOutcome(t, e, tc.idpUser); got != tc.want {
				t.Fatalf("%s ended in %s, want %s", tc.idpUser, got, tc.want)
			}
		})
	}
	erin := k.Ent().SysUser.Query().Where(sysuser.Account("erin@corp.example")).OnlyIDX(ctx)
	subjects := k.Ent().SysUserExternal.Query().Where(sysuserexternal.IsDelete(false)).Select(sysuserexternal.FieldSubject).StringsX(ctx)
	if len(subjects) != 1 || subjects[0] != "sub-erin" {
		t.Fatalf("bindings %v, want only sub-erin", subjects)
	}
	if n := k.Ent().SysUserExternal.Query().Where(sysuserexternal.UserID(erin), sysuserexternal.IsDelete(false)).CountX(ctx); n != 1 {
		t.Fatalf("erin@corp.example has %d bindings", n)
	}
}
