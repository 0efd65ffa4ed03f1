package pluginsdk

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	providerv1 "github.com/adminkernel/kernel/pluginsdk/proto/kernel/provider/v1"
)

// ServeOption adjusts Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	logger hclog.Logger
	level  hclog.Level
	test   *plugin.ServeTestConfig
}

// WithLogLevel sets the level of the logger Serve builds (default Trace:
// the host's logger decides what is kept).
func WithLogLevel(l hclog.Level) ServeOption {
	return func(c *serveConfig) { c.level = l }
}

// WithLogger replaces the logger Serve builds. Plugins launched by the host
// must log JSON to standard error (the default); this is for tests.
func WithLogger(l hclog.Logger) ServeOption {
	return func(c *serveConfig) { c.logger = l }
}

// WithTestConfig runs Serve in go-plugin's in-process test mode: instead of
// taking over the process it serves until cfg.Context ends and sends where
// to attach on cfg.ReattachConfigCh. providertest.InProcess uses it.
func WithTestConfig(cfg *plugin.ServeTestConfig) ServeOption {
	return func(c *serveConfig) { c.test = cfg }
}

// Serve runs a provider plugin; it is the whole main function of a vendor
// binary:
//
//	func main() { pluginsdk.Serve(codehost.New) }
//
// It builds the plugin's logger (hclog, JSON on standard error: the host
// re-logs each line at its level under the provider's name), calls factory
// once with it, and serves the provider over gRPC with the kernel's
// handshake and protocol version 1 (kernel.provider.v1). The host starts the
// plugin with mutual TLS and an almost empty environment, and hands it its
// settings through Configure.
//
// Standard output belongs to go-plugin's handshake: a plugin must never
// write to it. Whatever the factory prints there is sent to standard error
// instead. Serve does not return until the host ends the plugin; run by
// hand (without the host's magic cookie) it explains itself and exits 1.
func Serve(factory func(log hclog.Logger) Provider, opts ...ServeOption) {
	cfg := serveConfig{level: hclog.Trace}
	for _, o := range opts {
		o(&cfg)
	}
	log := cfg.logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{
			Level:      cfg.level,
			Output:     os.Stderr,
			JSONFormat: true,
		})
	}
	var p Provider
	if cfg.test != nil {
		p = factory(log)
	} else {
		// Nothing may reach standard output before the handshake line.
		stdout := os.Stdout
		os.Stdout = os.Stderr
		p = factory(log)
		os.Stdout = stdout
	}
	if p == nil {
		log.Error("the provider factory returned nil")
		if cfg.test == nil {
			os.Exit(1)
		}
		return
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			1: {PluginName: &servePlugin{impl: p, log: log}},
		},
		GRPCServer: plugin.DefaultGRPCServer,
		Logger:     log,
		Test:       cfg.test,
	})
}

// servePlugin is the plugin half of the go-plugin binding used by Serve.
// The host half (and a binding with both halves, for tests) is
// grpcprovider.Plugin.
type servePlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Provider
	log  hclog.Logger
}

var _ plugin.GRPCPlugin = (*servePlugin)(nil)

func (sp *servePlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	providerv1.RegisterProviderServiceServer(s, NewGRPCServer(sp.impl, sp.log))
	return nil
}

func (sp *servePlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errHostHalf
}
