package wire

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
)

// One binding serves on the plugin's side and dispenses on the host's; a
// side asked for the half it does not have says so instead of serving
// nothing or returning a nil client.
func TestPluginHalves(t *testing.T) {
	t.Parallel()
	served := &Plugin{Service: providerv1.UnimplementedProviderServiceServer{}}
	dialed := &Plugin{NewClient: func(grpc.ClientConnInterface) any { return "client" }}

	if err := served.GRPCServer(nil, grpc.NewServer()); err != nil {
		t.Errorf("GRPCServer with a Service = %v, want nil", err)
	}
	if err := dialed.GRPCServer(nil, grpc.NewServer()); err == nil {
		t.Error("GRPCServer without a Service = nil, want an error")
	}
	if c, err := dialed.GRPCClient(context.Background(), nil, nil); err != nil || c != "client" {
		t.Errorf("GRPCClient with NewClient = %v, %v; want the client", c, err)
	}
	if c, err := served.GRPCClient(context.Background(), nil, nil); err == nil {
		t.Errorf("GRPCClient without NewClient = %v, nil; want an error", c)
	}
	set := Plugins(dialed)[ProtocolVersion]
	if set[PluginName] != dialed {
		t.Errorf("Plugins(p)[%d][%q] = %v, want p", ProtocolVersion, PluginName, set[PluginName])
	}
}

func TestUTF8Repair(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"", ""},
		{"a\xffb", "a\uFFFDb"},
		{"中文", "中文"},
	}
	for _, c := range cases {
		if got := ValidUTF8(c.in); got != c.want {
			t.Errorf("ValidUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if UTF8Map(nil) != nil {
		t.Error("UTF8Map(nil) is not nil")
	}
	got := UTF8Map(map[string]string{"k\xff": "v\xfe"})
	if got["k\uFFFD"] != "v\uFFFD" || len(got) != 1 {
		t.Errorf("UTF8Map = %q, want the key and value repaired", got)
	}
}
