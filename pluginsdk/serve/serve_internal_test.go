package serve

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/adminkernel/kernel/pluginsdk"
	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
	"github.com/adminkernel/kernel/pluginsdk/internal/wire"
)

// The contract's constants and the wire's must agree: the handshake
// carries wire.ProtocolVersion, Descriptor carries pluginsdk.ProtocolVersion.
func TestProtocolVersionMatchesTheWire(t *testing.T) {
	t.Parallel()
	if pluginsdk.ProtocolVersion != wire.ProtocolVersion || wire.Handshake.ProtocolVersion != pluginsdk.ProtocolVersion {
		t.Errorf("ProtocolVersion = %d, wire.ProtocolVersion = %d, handshake = %d; want all equal",
			pluginsdk.ProtocolVersion, wire.ProtocolVersion, wire.Handshake.ProtocolVersion)
	}
}

// Every ErrorKind crosses the wire as its own protobuf value and comes back
// unchanged; an unknown kind travels as UNSPECIFIED and is read as
// ExchangeFailed.
func TestErrorKindsRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind pluginsdk.ErrorKind
		wire providerv1.ErrorKind
		back pluginsdk.ErrorKind
	}{
		{pluginsdk.ExchangeFailed, providerv1.ErrorKind_ERROR_KIND_EXCHANGE_FAILED, pluginsdk.ExchangeFailed},
		{pluginsdk.InvalidCallback, providerv1.ErrorKind_ERROR_KIND_INVALID_CALLBACK, pluginsdk.InvalidCallback},
		{pluginsdk.Misconfigured, providerv1.ErrorKind_ERROR_KIND_MISCONFIGURED, pluginsdk.Misconfigured},
		{pluginsdk.Denied, providerv1.ErrorKind_ERROR_KIND_DENIED, pluginsdk.Denied},
		{"brand_new_kind", providerv1.ErrorKind_ERROR_KIND_UNSPECIFIED, pluginsdk.ExchangeFailed},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			got := wire.KindToProto(string(c.kind))
			if got != c.wire {
				t.Errorf("KindToProto(%q) = %v, want %v", c.kind, got, c.wire)
			}
			if back := pluginsdk.ErrorKind(wire.KindFromProto(got)); back != c.back {
				t.Errorf("KindFromProto(%v) = %q, want %q", got, back, c.back)
			}
		})
	}
}

type nilProvider struct{ pluginsdk.Provider }

// Serve takes a constructor returning a concrete provider type; one that
// returns a nil pointer is refused (logged), not served.
func TestServeRefusesATypedNilProvider(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	log := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Error})
	reattach := make(chan *plugin.ReattachConfig, 1)
	Serve(func(hclog.Logger) *nilProvider { return nil }, func(c *wire.ServeConfig) {
		c.Logger = log
		c.Test = &plugin.ServeTestConfig{Context: t.Context(), ReattachConfigCh: reattach}
	})
	select {
	case rc := <-reattach:
		t.Fatalf("Serve served a nil provider (reattach %+v)", rc)
	default:
	}
	if !strings.Contains(out.String(), "the provider factory returned nil") {
		t.Errorf("Serve logged %q; want a line saying the factory returned nil", out.String())
	}
}
