package externalauth_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/pluginsdk"
)

// libProvider is a provider a business application compiles in
// (host.Options.Providers): an OAuth-style vendor whose authorize URL
// carries the state and whose callback code "ok-<subject>" identifies a
// user.
type libProvider struct {
	code     string
	mu       sync.Mutex
	settings pluginsdk.Settings
	refuse   bool
}

func (p *libProvider) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{Code: p.code, DisplayName: "Library SSO", Icon: "mdi:library", ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}

func (p *libProvider) Configure(_ context.Context, s pluginsdk.Settings) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settings = s
	if p.refuse {
		return errors.New("ClientId is required")
	}
	return nil
}

func (p *libProvider) AuthorizeURL(_ context.Context, r pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	return pluginsdk.AuthorizeResponse{URL: "https://lib-sso.example/authorize?state=" + url.QueryEscape(r.State)}, nil
}

func (p *libProvider) Exchange(_ context.Context, r pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	sub, ok := strings.CutPrefix(r.Query["code"], "ok-")
	if !ok {
		return pluginsdk.Fail(pluginsdk.Denied, "bad code"), nil
	}
	return pluginsdk.Succeed(pluginsdk.Identity{Subject: "lib-" + sub, AccountHint: sub}), nil
}

func TestCompiledProviders(t *testing.T) {
	lib := &libProvider{code: "lib_sso"}
	broken := &libProvider{code: "lib_broken", refuse: true}
	k := kerneltest.StartWith(t, kerneltest.Options{
		Environ: []string{"Service__ExternalAuth__Plugins__lib_sso__ClientId=lib-client"},
		Host:    func(o *host.Options) { o.Providers = []pluginsdk.Provider{lib, broken} },
	})
	e := &env{t: t, k: k}

	// Configured with the section a plugin of that code would get.
	lib.mu.Lock()
	got := lib.settings["ClientId"]
	lib.mu.Unlock()
	if got != "lib-client" {
		t.Fatalf("Configure got ClientId %q, want the Plugins:lib_sso section", got)
	}

	// Listed for administrators; the refusing one as misconfigured.
	var all []providerItem
	k.Do("GET", base+"/providers/all", k.Admin(), nil).Expect(t, "providers/all", 200, 0).Decode(t, &all)
	status := map[string]string{}
	for _, p := range all {
		status[p.Code] = p.Status
	}
	if status["lib_sso"] != "ready" || status["lib_broken"] != "misconfigured" {
		t.Fatalf("providers/all statuses = %v, want lib_sso ready and lib_broken misconfigured", status)
	}

	// A whole login through it: authorize, the vendor's redirect back,
	// the ticket, the tokens of the account it links to by name.
	k.User("libuser", "LibUser#Pass123")
	e.set("sys.externalauth.lib_sso.linkByAccount", "true")
	b := e.browser()
	auth, err := url.Parse(b.authorize("lib_sso"))
	if err != nil || auth.Host != "lib-sso.example" {
		t.Fatalf("authorize went to %v (%v), want the compiled provider's URL", auth, err)
	}
	state := auth.Query().Get("state")
	res := location(t, b.send("GET", base+"/lib_sso/callback?code=ok-libuser&state="+url.QueryEscape(state), "", ""))
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("callback ended in %s, want a ticket", res)
	}
	var tk kerneltest.Tokens
	b.exchange(ticket).Expect(t, "exchange", 200, 0).Decode(t, &tk)
	var me struct {
		Account string `json:"account"`
	}
	k.Do("GET", "/api/v1/personal/profile", tk.AccessToken, nil).Expect(t, "profile", 200, 0).Decode(t, &me)
	if me.Account != "libuser" {
		t.Fatalf("SSO through the compiled provider logged in as %q, want libuser", me.Account)
	}
}

func TestCompiledProviderDuplicateCode(t *testing.T) {
	tests := []struct {
		name      string
		providers []pluginsdk.Provider
		environ   []string
		want      []string
	}{
		{"two compiled providers", []pluginsdk.Provider{&libProvider{code: "twin"}, &libProvider{code: "TWIN"}}, nil,
			[]string{"host.Options.Providers[0]", "host.Options.Providers[1]"}},
		{"a compiled provider and an OIDC instance", []pluginsdk.Provider{&libProvider{code: "corp"}},
			[]string{"Service__ExternalAuth__Oidc__0__Code=corp", "Service__ExternalAuth__Oidc__0__Authority=https://idp.example", "Service__ExternalAuth__Oidc__0__ClientId=x"},
			[]string{"Service:ExternalAuth:Oidc:0", "host.Options.Providers[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := kerneltest.Config(t, tt.environ)
			_, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: &strings.Builder{}, Providers: tt.providers})
			if err == nil {
				t.Fatal("host.New accepted a provider code registered twice")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}
