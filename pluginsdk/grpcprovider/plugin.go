// Package grpcprovider is the kernel's half of the provider plugin: what a
// host needs to launch a vendor binary with hashicorp/go-plugin and call it
// over gRPC (kernel.provider.v1). The kernel's plugin host
// (host/idp/pluginhost) and providertest.InProcess use it.
//
// Vendors never import it: a plugin binary calls serve.Serve
// (pluginsdk/serve), and its tests use pluginsdk/providertest. It is a
// public package only because the kernel lives outside pluginsdk/ and Go's
// internal packages are visible to their parent tree alone; see
// pluginsdk/README.md. For the same reason it is the kernel's only way to
// the wire: the generated protocol code (pluginsdk/internal/proto) and the
// go-plugin binding (pluginsdk/internal/wire) are internal to the SDK, and
// nothing of them appears in this package's API.
//
// The host hands Handshake and VersionedPlugins to plugin.ClientConfig and
// dispenses PluginName; what it gets is a pluginsdk.Provider calling the
// plugin process. It is safe for concurrent use and never retries a call.
//
// Errors of that provider: a domain failure of Exchange is
// ExchangeResponse.Error as always; an error returned by the provider's
// method inside the plugin is a *RemoteError; trouble reaching the plugin is
// a *TransportError (the gRPC code says which: Unavailable when the process
// is gone), or the context's error when the caller's context ended.
package grpcprovider

import (
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/adminkernel/kernel/pluginsdk/internal/wire"
)

// Handshake is the go-plugin handshake of every provider plugin: the
// magic cookie and the default protocol version, the same values
// serve.Serve uses.
var Handshake = wire.Handshake

// PluginName is the name to dispense from a provider plugin's client.
const PluginName = wire.PluginName

// VersionedPlugins is the plugin set the host offers, keyed by protocol
// version: {1: {PluginName: the kernel.provider.v1 binding}}. A future
// kernel.provider.v2 is a second entry; go-plugin then settles on the
// highest version both sides speak.
func VersionedPlugins() map[int]plugin.PluginSet {
	return wire.Plugins(&wire.Plugin{NewClient: func(conn grpc.ClientConnInterface) any { return newClient(conn) }})
}
