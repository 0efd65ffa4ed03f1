// Package grpcprovider binds pluginsdk.Provider to hashicorp/go-plugin over
// gRPC (kernel.provider.v1).
//
// Plugin is the go-plugin binding with both halves: the host half dispenses
// a *Client, which implements pluginsdk.Provider by calling the plugin
// process; the plugin half serves a Provider through pluginsdk.NewGRPCServer
// (the same adapter pluginsdk.Serve uses, which lives in pluginsdk because
// Serve does). Vendors never import this package: they call pluginsdk.Serve.
// The kernel's plugin host and providertest.InProcess use it.
//
// Errors of a Client: a domain failure of Exchange is
// ExchangeResponse.Error as always; an error returned by the provider's
// method inside the plugin is a *RemoteError; trouble reaching the plugin is
// a *TransportError (the gRPC code says which: Unavailable when the process
// is gone), or the context's error when the caller's context ended.
package grpcprovider

import (
	"context"
	"errors"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/adminkernel/kernel/pluginsdk"
	providerv1 "github.com/adminkernel/kernel/pluginsdk/proto/kernel/provider/v1"
)

// Plugin is the go-plugin binding of protocol version 1. On the host Impl
// is nil; in a plugin (or a test serving in process) Impl is the provider
// served.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pluginsdk.Provider
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers Impl with the plugin's gRPC server.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("grpcprovider: Plugin.Impl is nil")
	}
	providerv1.RegisterProviderServiceServer(s, pluginsdk.NewGRPCServer(p.Impl, nil))
	return nil
}

// GRPCClient returns a *Client calling the plugin over conn.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn), nil
}

// VersionedPlugins is the plugin set the host offers, keyed by protocol
// version: {1: {"provider": Plugin}}. A future kernel.provider.v2 is a
// second entry; go-plugin then settles on the highest version both sides
// speak.
func VersionedPlugins() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {pluginsdk.PluginName: &Plugin{}},
	}
}
