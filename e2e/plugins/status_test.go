package plugins_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// adminProvider is one entry of providers/all.
type adminProvider struct {
	Code         string `json:"code"`
	Enabled      bool   `json:"enabled"`
	Status       string `json:"status"`
	StatusReason string `json:"statusReason"`
}

func allProviders(t *testing.T, k *kerneltest.Kernel, admin string) map[string]adminProvider {
	t.Helper()
	var all []adminProvider
	newBrowser(t, k).send("GET", base+"/providers/all", admin, "").Expect(t, "providers/all", 200, 0).Decode(t, &all)
	out := map[string]adminProvider{}
	for _, p := range all {
		out[p.Code] = p
	}
	return out
}

func anonymousProviders(t *testing.T, k *kerneltest.Kernel) []string {
	t.Helper()
	var list []struct {
		Code string `json:"code"`
	}
	newBrowser(t, k).send("GET", base+"/providers", "", "").Expect(t, "providers", 200, 0).Decode(t, &list)
	codes := make([]string, 0, len(list))
	for _, p := range list {
		codes = append(codes, p.Code)
	}
	return codes
}

// A start with the four vendor plugins (and the SDK's test plugin as acme
// and chatty) in the plugin folder but no vendor settings, as a fresh
// `make run`: no ERROR in the log, no plugin offered to anonymous callers,
// providers/all says why, and every authorize and bind answers 40013 (not
// a 500, not 40015). Around them: acme with settings it refuses
// (misconfigured, WARN with its message), ghost configured without a
// binary (missing, WARN), and a built-in OIDC provider that is configured
// and works.
func TestDefaultStartWithoutVendorSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugins and starts a kernel")
	}
	dir := buildPlugins(t)
	is := oidctest.New(t)
	const ea = "Service__ExternalAuth__"
	k := kerneltest.Start(t, []string{
		ea + "PluginDir=" + dir,
		// acme: a ClientId but no ClientSecret, which the plugin refuses.
		ea + "Plugins__acme__ClientId=" + acmeClientID,
		// ghost: settings but no binary.
		ea + "Plugins__ghost__ClientId=ghost-client",
		ea + "Oidc__0__Code=corp",
		ea + "Oidc__0__Authority=" + is.URL,
		ea + "Oidc__0__ClientId=" + is.ClientID,
		ea + "Oidc__0__ClientSecret=" + is.ClientSecret,
	})
	k.Leaks.Secrets = append(k.Leaks.Secrets, is.ClientSecret)
	admin := k.Admin()
	log := k.Log()

	unconfigured := map[string]string{
		"enterprise_chat": "no settings: Service:ExternalAuth:EnterpriseChat (or Service:ExternalAuth:Plugins:enterprise_chat) is empty",
		"team_chat":       "no settings: Service:ExternalAuth:TeamChat (or Service:ExternalAuth:Plugins:team_chat) is empty",
		"code_host":       "no settings: Service:ExternalAuth:CodeHost (or Service:ExternalAuth:Plugins:code_host) is empty",
		"social_chat":     "no settings: Service:ExternalAuth:SocialChat (or Service:ExternalAuth:Plugins:social_chat) is empty",
		"chatty":          "no settings: Service:ExternalAuth:Plugins:chatty is empty",
	}
	notOffered := []string{"enterprise_chat", "team_chat", "code_host", "social_chat", "chatty", "acme", "ghost"}

	t.Run("log", func(t *testing.T) {
		if strings.Contains(log, "[ERROR]") {
			t.Errorf("the log has an ERROR:\n%s", log)
		}
		for code := range unconfigured {
			if n := len(logLines(log, "[INFO]", "AdminKernel.PluginHost: provider plugin not configured; not started: provider="+code+" ")); n != 1 {
				t.Errorf("%s: %d INFO lines saying it is not configured, want 1\n%s", code, n, log)
			}
		}
		for _, code := range notOffered {
			for _, lie := range []string{"provider plugin ready: provider=" + code + " ", "external login provider registered: provider=" + code + " "} {
				if strings.Contains(log, lie) {
					t.Errorf("%s is not ready but the log says %q", code, lie)
				}
			}
			if pidOf(dir, code) != 0 && code != "acme" {
				t.Errorf("%s runs a process", code)
			}
		}
		if len(logLines(log, "[WARN]", `provider plugin refused its settings; it is not offered: provider=acme error="fake: ClientSecret is required"`)) != 1 {
			t.Errorf("no WARN with acme's own message:\n%s", log)
		}
		if len(logLines(log, "[WARN]", "provider plugin is configured but missing: provider=ghost ")) != 1 {
			t.Errorf("no WARN about ghost's missing binary:\n%s", log)
		}
		if !strings.Contains(log, "external login provider registered: provider=corp ") {
			t.Errorf("the OIDC provider is not registered:\n%s", log)
		}
	})

	t.Run("anonymous list", func(t *testing.T) {
		if got := anonymousProviders(t, k); len(got) != 1 || got[0] != "corp" {
			t.Errorf("providers = %q, want only corp", got)
		}
	})

	t.Run("providers/all", func(t *testing.T) {
		all := allProviders(t, k, admin)
		for code, reason := range unconfigured {
			if p := all[code]; p.Status != "unconfigured" || p.StatusReason != reason || !p.Enabled {
				t.Errorf("%s = %+v, want unconfigured (still switched on) with reason %q", code, p, reason)
			}
		}
		if p := all["acme"]; p.Status != "misconfigured" || p.StatusReason != "settings refused: fake: ClientSecret is required" {
			t.Errorf("acme = %+v, want misconfigured with the plugin's message", p)
		}
		if p := all["ghost"]; p.Status != "missing" || !strings.Contains(p.StatusReason, "has no plugin binary adminkernel-provider-ghost") {
			t.Errorf("ghost = %+v, want missing", p)
		}
		if p := all["corp"]; p.Status != "ready" || p.StatusReason != "" {
			t.Errorf("corp = %+v, want ready without a reason", p)
		}
		if len(all) != 8 {
			t.Errorf("providers/all lists %d providers, want 8: %+v", len(all), all)
		}
	})

	t.Run("authorize and bind answer 40013", func(t *testing.T) {
		for _, code := range notOffered {
			b := newBrowser(t, k)
			b.send("GET", base+"/"+code+"/authorize", "", "").ExpectCode(t, "authorize "+code, errcode.OAuthProviderDisabled)
			b.send("POST", base+"/"+code+"/bind", admin, "").ExpectCode(t, "bind "+code, errcode.OAuthProviderDisabled)
			if b.Cookie("tn_oauth_state") != "" {
				t.Errorf("%s: a state cookie was set for a provider that is not offered", code)
			}
		}
	})

	t.Run("oidc still works", func(t *testing.T) {
		k.User("pinger", "Pinger#Pass123", "GET:/api/v1/ping")
		role := k.Ent().SysRole.Query().Where(sysrole.Code("test_pinger")).OnlyIDX(t.Context())
		for key, v := range map[string]string{"provisioning": "provision", "defaultRoleIds": strconv.FormatInt(role, 10)} {
			if err := k.Settings().Set(t.Context(), "sys.externalauth.corp."+key, v); err != nil {
				t.Fatal(err)
			}
		}
		b := newBrowser(t, k)
		loc := b.authorize("corp")
		cb := is.Login(t, loc, "")
		res := b.callback(&url.URL{Path: cb.Path, RawQuery: cb.RawQuery})
		ticket := res.Query().Get("ticket")
		if ticket == "" {
			t.Fatalf("corp login ended in %s, want a ticket", res)
		}
		b.pingAndSession(b.exchange(ticket))
	})
}

// logLines returns the lines of log that contain every one of subs.
func logLines(log string, subs ...string) []string {
	var out []string
next:
	for _, line := range strings.Split(log, "\n") {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}
