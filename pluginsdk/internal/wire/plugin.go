package wire

import (
	"context"
	"errors"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
)

// Plugin is the one go-plugin binding of kernel.provider.v1. The plugin
// half (serve.Serve) sets Service; the kernel half
// (grpcprovider.VersionedPlugins) sets NewClient.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Service is the provider adapted to the generated service; nil on
	// the host.
	Service providerv1.ProviderServiceServer
	// NewClient builds the host's view of the plugin over a connection;
	// nil in a plugin.
	NewClient func(conn grpc.ClientConnInterface) any
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers Service with the plugin's gRPC server.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Service == nil {
		return errors.New("pluginsdk: this side of the provider plugin serves nothing (the host half)")
	}
	providerv1.RegisterProviderServiceServer(s, p.Service)
	return nil
}

// GRPCClient returns the host's view of the plugin over conn.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	if p.NewClient == nil {
		return nil, errors.New("pluginsdk: this side of the provider plugin has no client (the plugin half)")
	}
	return p.NewClient(conn), nil
}

// Plugins is the plugin set keyed by protocol version that both sides hand
// go-plugin: {1: {"provider": p}}. A future kernel.provider.v2 is a second
// entry; go-plugin then settles on the highest version both sides speak.
func Plugins(p *Plugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {PluginName: p}}
}

// ServeConfig is what the options of serve.Serve adjust. Only the level
// is open to vendors (serve.WithLogLevel); the logger and go-plugin's
// in-process test mode are set by providertest.InProcess.
type ServeConfig struct {
	Level  hclog.Level
	Logger hclog.Logger
	Test   *plugin.ServeTestConfig
}
