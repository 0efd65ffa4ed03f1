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
	if err := r.SetStatus("enterprise_chat", idp.Degraded, "restarting"); err != nil {
		t.Fatal(err)
	}
	if e, _ := r.Get("enterprise_chat"); e.Status != idp.Degraded || e.Reason != "restarting" || e.Source.Kind != idp.Plugin || e.Ready() {
		t.Errorf("entry = %+v, want a degraded plugin, not ready, with its reason", e)
	}
	if err := r.SetStatus("enterprise_chat", idp.Ready, ""); err != nil {
		t.Fatal(err)
	}
	if e, _ := r.Get("enterprise_chat"); !e.Ready() || e.Reason != "" {
		t.Errorf("entry = %+v, want ready without a reason", e)
	}
	if err := r.SetStatus("nope", idp.Ready, ""); err == nil {
		t.Error("SetStatus of an unknown code succeeded")
	}
}

// Record lists a plugin that cannot work, without a provider: it takes its
// code like a registration, is never Ready, and keeps its status.
func TestRecord(t *testing.T) {
	r := idp.NewRegistry()
	if err := r.Register("oidc", fake{"oidc"}, idp.BuiltinSource("Service:ExternalAuth:Oidc:0")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code    string
		status  idp.Status
		wantErr string
	}{
		{"team_chat", idp.Unconfigured, ""},
		{"acme", idp.Missing, ""},
		{"chatty", idp.NotLaunched, ""},
		{"OIDC", idp.Unconfigured, "registered twice"},
		{"TEAM_CHAT", idp.Missing, "registered twice"},
		{"bad code", idp.Missing, "letters, digits and underscores"},
		{"ghost", idp.Ready, "cannot be recorded without a provider"},
		{"ghost", idp.Degraded, "cannot be recorded without a provider"},
		{"ghost", idp.Misconfigured, "cannot be recorded without a provider"},
	}
	for _, tt := range tests {
		err := r.Record(tt.code, idp.PluginSource("/p/"+tt.code), tt.status, "why "+tt.code)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("Record(%q, %s) = %v, want error containing %q", tt.code, tt.status, err, tt.wantErr)
		}
	}
	if err := r.Register("acme", fake{"acme"}, idp.PluginSource("/other")); err == nil {
		t.Error("Register of a recorded code succeeded")
	}
	list := r.List()
	if len(list) != 4 {
		t.Fatalf("List = %+v, want oidc and the three recorded plugins", list)
	}
	for _, e := range list[1:] {
		if e.Provider != nil || e.Ready() || e.Reason != "why "+e.Code || e.Source.Kind != idp.Plugin {
			t.Errorf("recorded entry %+v: want no provider, not ready, its reason", e)
		}
	}
	if err := r.SetStatus("team_chat", idp.Ready, ""); err == nil {
		t.Error("SetStatus made a recorded entry without a provider ready")
	}
	if e, _ := r.Get("team_chat"); e.Status != idp.Unconfigured {
		t.Errorf("team_chat = %+v, want still unconfigured", e)
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
			_ = r.SetStatus("p", idp.Degraded, "x")
		}()
	}
	wg.Wait()
	if r.Len() != 5 {
		t.Errorf("Len = %d, want 5 distinct codes", r.Len())
	}
}
