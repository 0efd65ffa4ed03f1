package mfa_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// The seam between login and the area, both ways (docs/design/architecture.md).
var (
	_ auth.SecondFactor = (*mfa.Gate)(nil)
	_ mfa.Logins        = (*auth.Service)(nil)
)

// TestModuleRoutesKeepTheirWire: the area's module declares every MFA
// route with the module name, access, +R mark and op-log flag each had
// when the routes were host/auth's and host/reauth's (the wire contract:
// Api:DisabledModules, the contract document's tags and operation ids).
func TestModuleRoutesKeepTheirWire(t *testing.T) {
	cfg := config.Defaults()
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	gate, err := mfa.NewGate(mfa.Deps{Config: &cfg, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	m := mfa.Module(mfa.NewFactors(gate, nil), &reauth.Service{})
	if m.Name != "Reauth" || len(m.Menus) != 4 {
		t.Fatalf("module %q with %d menus, want Reauth with the four MFA administration buttons", m.Name, len(m.Menus))
	}
	table := route.NewTable()
	if err := m.Routes(&module.Deps{Config: &cfg, Store: store}, table.Group(m.Name, "/api/v1")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range table.Routes() {
		line := fmt.Sprintf("%s %s %s %s", r.Module, r.Method, r.Path, r.Access)
		if r.Reauth {
			line += " +R"
		}
		if r.OpLog {
			line += " oplog"
		}
		got = append(got, line)
	}
	want := []string{
		"Auth POST /api/v1/auth/login/sms anonymous",
		"Auth POST /api/v1/auth/login/sms/resend anonymous",
		"Auth POST /api/v1/auth/login/totp anonymous",
		"Auth POST /api/v1/auth/mfa/bind/complete anonymous oplog",
		"Auth POST /api/v1/auth/mfa/bind/start anonymous",
		"Auth POST /api/v1/auth/mfa/recovery anonymous oplog",
		"Auth POST /api/v1/auth/passkey/login/begin anonymous",
		"Auth POST /api/v1/auth/passkey/login/finish anonymous",
		"Auth POST /api/v1/auth/passkey/passwordless/begin anonymous",
		"Auth POST /api/v1/auth/passkey/passwordless/finish anonymous",
		"Reauth POST /api/v1/auth/reauth session",
		"Auth POST /api/v1/personal/mfa/bind/start session",
		"Auth GET /api/v1/personal/passkeys session",
		"Auth POST /api/v1/personal/passkeys/register/begin session +R",
		"Auth POST /api/v1/personal/passkeys/register/finish session",
		"Auth DELETE /api/v1/personal/passkeys/{id} session",
		"Reauth POST /api/v1/sys/mfa/clear permission +R",
		"Reauth GET /api/v1/sys/mfa/high-sensitivity permission",
		"Reauth POST /api/v1/sys/mfa/high-sensitivity permission +R",
		"Reauth DELETE /api/v1/sys/mfa/high-sensitivity/{id:long} permission +R",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, menu := range m.Menus {
		found := false
		for _, r := range table.Routes() {
			found = found || r.Access == route.Permission && r.PermissionCode() == menu.Permission
		}
		if !found {
			t.Errorf("menu %d names %q, no permission route of the module", menu.ID, menu.Permission)
		}
	}
}

// TestModuleWithoutServicesRefusesToMount: the static parts (the name,
// the menus) are readable without services; mounting is not.
func TestModuleWithoutServicesRefusesToMount(t *testing.T) {
	m := mfa.Module(nil, nil)
	if m.Name != mfa.ModuleName || m.Routes == nil {
		t.Fatalf("module %+v", m)
	}
	if err := m.Routes(&module.Deps{}, route.NewTable().Group(m.Name, "/api/v1")); err == nil {
		t.Fatal("mounted without services")
	}
}
