package serve

import (
	"os"
	"reflect"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/internal/wire"
)

// Option adjusts Serve.
type Option func(*wire.ServeConfig)

// WithLogLevel sets the level of the logger Serve builds (default Trace:
// the host's logger decides what is kept).
func WithLogLevel(l hclog.Level) Option {
	return func(c *wire.ServeConfig) { c.Level = l }
}

// Serve runs a provider plugin; it is the whole main function of a vendor
// binary:
//
//	func main() { serve.Serve(codehost.New) }
//
// factory is the provider's constructor: any func(hclog.Logger) P whose P
// implements pluginsdk.Provider (a *codehost.Provider, or pluginsdk.Provider
// itself). Serve builds the plugin's logger (hclog, JSON on standard error:
// the host re-logs each line at its level under the provider's name), calls
// factory once with it, and serves the provider over gRPC with the kernel's
// handshake and protocol version 1 (kernel.provider.v1). The host starts the
// plugin with mutual TLS and an almost empty environment, and hands it its
// settings through Configure.
//
// Standard output belongs to go-plugin's handshake: a plugin must never
// write to it. Whatever the factory prints there is sent to standard error
// instead. Serve does not return until the host ends the plugin; run by
// hand (without the host's magic cookie) it explains itself and exits 1.
func Serve[P pluginsdk.Provider](factory func(log hclog.Logger) P, opts ...Option) {
	cfg := wire.ServeConfig{Level: hclog.Trace}
	for _, o := range opts {
		o(&cfg)
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{
			Level:      cfg.Level,
			Output:     os.Stderr,
			JSONFormat: true,
		})
	}
	var p P
	if cfg.Test != nil {
		p = factory(log)
	} else {
		// Nothing may reach standard output before the handshake line.
		stdout := os.Stdout
		os.Stdout = os.Stderr
		p = factory(log)
		os.Stdout = stdout
	}
	if isNil(p) {
		log.Error("the provider factory returned nil")
		if cfg.Test == nil {
			os.Exit(1)
		}
		return
	}
	var grpcOpts []grpc.ServerOption
	if cfg.Test == nil {
		// With the host's tracing on: the plugin's own spans, flushed when
		// the host ends it (tracing.go).
		var flush func()
		grpcOpts, flush = setupTracing(log)
		defer flush()
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.Plugins(&wire.Plugin{Service: newGRPCServer(p, log)}),
		GRPCServer:       grpcServerWith(grpcOpts),
		Logger:           log,
		Test:             cfg.Test,
	})
}

// isNil reports whether a provider is nil, also when it is a nil pointer
// of a concrete type (a factory returning (*T)(nil)).
func isNil(p any) bool {
	if p == nil {
		return true
	}
	switch v := reflect.ValueOf(p); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
