// Package wire holds what both halves of the provider plugin share and
// neither a vendor nor the kernel should spell out: the go-plugin
// handshake, the one go-plugin binding of kernel.provider.v1, the options
// of serve.Serve, and the conversions that do not depend on the Go types of
// the contract (UTF-8 repair, the ErrorKind table).
//
// It imports nothing of pluginsdk, so pluginsdk/serve (the plugin half) and
// pluginsdk/grpcprovider (the kernel half) both build on it. Being
// internal, only packages under pluginsdk/ can import it, like the
// generated protocol code it binds (pluginsdk/internal/proto).
package wire

import plugin "github.com/hashicorp/go-plugin"

// ProtocolVersion is the application protocol served and dispensed:
// kernel.provider.v1. It equals pluginsdk.ProtocolVersion (a test checks).
const ProtocolVersion = 1

// PluginName is the name under which a plugin binary offers its provider in
// the go-plugin plugin set (one per protocol version).
const PluginName = "provider"

// The magic cookie tells a plugin binary that it was started by an Admin
// Kernel host. It is a usability check (a binary run by hand explains
// itself and exits), not a security measure: the host verifies binaries by
// SHA-256 pin and talks to them over mutual TLS.
const (
	MagicCookieKey   = "ADMINKERNEL_PROVIDER_PLUGIN"
	MagicCookieValue = "5d0b6f2e4c1a49f7b3e8a2d6c9f04e71"
)

// Handshake is the go-plugin handshake shared by the host and every provider
// plugin. Its ProtocolVersion is the default application protocol; both
// sides also list their versions in a VersionedPlugins map keyed by
// protocol version (1: kernel.provider.v1), so a v2 can be served beside v1
// and the two sides agree on the highest version both speak.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   MagicCookieKey,
	MagicCookieValue: MagicCookieValue,
}
