package idp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/pluginsdk"
)

// fake is a provider that only describes itself.
type fake struct{ code string }

func (f fake) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{Code: f.code, DisplayName: f.code, ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}
func (fake) Configure(context.Context, pluginsdk.Settings) error { return nil }
func (fake) AuthorizeURL(context.Context, pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	return pluginsdk.AuthorizeResponse{}, errors.New("not implemented")
}
func (fake) Exchange(context.Context, pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	return pluginsdk.Fail(pluginsdk.Misconfigured, "not implemented"), nil
}

func TestRegister(t *testing.T) {
	first := idp.BuiltinSource("Service:ExternalAuth:Oidc:0")
	tests := []struct {
		name     string
		code     string
		provider pluginsdk.Provider
		src      idp.Source
		wantErr  []string // substrings of the error; nil = success
		dup      bool
	}{
		{name: "second code", code: "team_chat", provider: fake{"team_chat"}, src: idp.PluginSource("plugins/kernel-provider-team_chat")},
		{name: "same code from a plugin", code: "corp", provider: fake{"corp"}, src: idp.PluginSource("plugins/kernel-provider-corp"),
			wantErr: []string{`"corp"`, "builtin Service:ExternalAuth:Oidc:0", "plugin plugins/kernel-provider-corp"}, dup: true},
		{name: "same code from another builtin", code: "corp", provider: fake{"corp"}, src: idp.BuiltinSource("Service:ExternalAuth:Oidc:1"),
			wantErr: []string{"builtin Service:ExternalAuth:Oidc:0", "builtin Service:ExternalAuth:Oidc:1"}, dup: true},
		{name: "same code in another case", code: "CORP", provider: fake{"CORP"}, src: idp.PluginSource("x"),
			wantErr: []string{"builtin Service:ExternalAuth:Oidc:0", "plugin x"}, dup: true},
		{name: "invalid code", code: "co-rp", provider: fake{"co-rp"}, src: idp.PluginSource("x"), wantErr: []string{"letters, digits and underscores"}},
		{name: "too long code", code: strings.Repeat("a", 33), provider: fake{"a"}, src: idp.PluginSource("x"), wantErr: []string{"at most 32"}},
		{name: "nil provider", code: "empty", src: idp.PluginSource("x"), wantErr: []string{"nil"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := idp.NewRegistry()
			if err := r.Register("corp", fake{"corp"}, first); err != nil {
				t.Fatal(err)
			}
			err := r.Register(tc.code, tc.provider, tc.src)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Register = %v, want success", err)
				}
				if _, ok := r.Get(tc.code); !ok {
					t.Errorf("Get(%q) found nothing after Register", tc.code)
				}
				return
			}
			if err == nil {
				t.Fatal("Register succeeded, want an error")
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			var de *idp.DuplicateError
			if errors.As(err, &de) != tc.dup {
				t.Errorf("error %T: DuplicateError = %v, want %v", err, !tc.dup, tc.dup)
			}
			if r.Len() != 1 {
				t.Errorf("Len = %d after a refused registration, want 1", r.Len())
			}
		})
	}
}

func TestListGetStatus(t *testing.T) {
	r := idp.NewRegistry()
	codes := []string{"oidc", "enterprise_chat", "corp", "code_host"}
	for i, c := range codes {
		src := idp.BuiltinSource(c)
		if i%2 == 1 {
			src = idp.PluginSource(c)
		}
		if err := r.Register(c, fake{c}, src); err != nil {
			t.Fatal(err)
		}
	}
	list := r.List()
	for i, e := range list {
		if e.Code != codes[i] || e.Status != idp.Ready {
			t.Errorf("List[%d] = %s/%s, want %s/ready (registration order)", i, e.Code, e.Status, codes[i])
		}
	}
	if _, ok := r.Get("OIDC"); ok {
		t.Error("Get is case-sensitive: OIDC must not find oidc")
	}
	if err := r.SetStatus("enterprise_chat", idp.Degraded); err != nil {
		t.Fatal(err)
	}
	if e, _ := r.Get("enterprise_chat"); e.Status != idp.Degraded || e.Source.Kind != idp.Plugin {
		t.Errorf("entry = %+v, want a degraded plugin", e)
	}
	if err := r.SetStatus("nope", idp.Ready); err == nil {
		t.Error("SetStatus of an unknown code succeeded")
	}
}

func TestConcurrentUse(t *testing.T) {
	r := idp.NewRegistry()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = r.Register("p"+strings.Repeat("x", i%5), fake{"p"}, idp.PluginSource("x"))
		}()
		go func() {
			defer wg.Done()
			_ = r.List()
			_, _ = r.Get("px")
			_ = r.SetStatus("p", idp.Degraded)
		}()
	}
	wg.Wait()
	if r.Len() != 5 {
		t.Errorf("Len = %d, want 5 distinct codes", r.Len())
	}
}
