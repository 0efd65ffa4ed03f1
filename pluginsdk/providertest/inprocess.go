package providertest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/grpcprovider"
	"github.com/adminkernel/kernel/pluginsdk/internal/wire"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

// InProcess serves p through serve.Serve (in go-plugin's test mode) and
// returns the host's view of it: the kernel's gRPC client (grpcprovider)
// talking to it over real gRPC, through the same handshake version, plugin set and conversions
// a launched plugin binary uses. Run the conformance kit on both p and
// InProcess(t, p) to test the provider and the wire:
//
//	providertest.Run(t, func(t *testing.T) pluginsdk.Provider {
//		return providertest.InProcess(t, mine.New(hclog.NewNullLogger()))
//	}, opts)
//
// The server and the connection end when the test ends. The plugin's log
// goes to the test log.
func InProcess(t TB, p pluginsdk.Provider) pluginsdk.Provider {
	t.Helper()
	out := &testWriter{t: t}
	log := hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Debug, Output: out})

	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go serve.Serve(func(hclog.Logger) pluginsdk.Provider { return p },
		inProcessServe(log, &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}))

	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-closed:
		cancel()
		t.Fatal("providertest: the provider could not be served")
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("providertest: the in-process plugin server did not start within 10 s")
	}
	rc.ReattachFunc = func() (runner.AttachedRunner, error) { return &servedRunner{done: closed}, nil }

	// A reattached client skips the handshake: name the plugin set of the
	// version the server settled on.
	plugins, ok := grpcprovider.VersionedPlugins()[rc.ProtocolVersion]
	if !ok {
		cancel()
		t.Fatalf("providertest: the plugin serves protocol version %d, which the host does not speak", rc.ProtocolVersion)
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  grpcprovider.Handshake,
		Plugins:          plugins,
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           log.Named("host"),
	})
	t.Cleanup(func() {
		// Shutting the test server down logs noise: stop logging first.
		out.stop()
		client.Kill()
		cancel()
		<-closed
	})
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("providertest: connecting to the in-process plugin: %v", err)
	}
	raw, err := rpc.Dispense(grpcprovider.PluginName)
	if err != nil {
		t.Fatalf("providertest: dispensing the provider: %v", err)
	}
	prov, ok := raw.(pluginsdk.Provider)
	if !ok {
		t.Fatalf("providertest: dispensed %T, not a pluginsdk.Provider", raw)
	}
	return prov
}

// inProcessServe makes serve.Serve log to log and run in go-plugin's
// in-process test mode: instead of taking over the process it serves until
// test.Context ends and sends where to attach on test.ReattachConfigCh.
func inProcessServe(log hclog.Logger, test *plugin.ServeTestConfig) serve.Option {
	return func(c *wire.ServeConfig) {
		c.Logger = log
		c.Test = test
	}
}

// servedRunner stands for the in-process server in go-plugin's reattach
// machinery: it "exits" when Serve returns.
type servedRunner struct{ done <-chan struct{} }

func (r *servedRunner) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (r *servedRunner) Kill(context.Context) error { return nil }
func (r *servedRunner) ID() string                 { return "in-process" }
func (r *servedRunner) PluginToHost(n, a string) (string, string, error) {
	return n, a, nil
}
func (r *servedRunner) HostToPlugin(n, a string) (string, string, error) {
	return n, a, nil
}

// testWriter sends log lines to the test log until the test is over.
type testWriter struct {
	t    TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
