package providertest

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/grpcprovider"
)

// FilePrefix is how a plugin binary's file name starts: the rest is its
// provider code.
const FilePrefix = "adminkernel-provider-"

// StartTimeout bounds a plugin's start (exec to the end of the go-plugin
// handshake), as the kernel's.
const StartTimeout = 10 * time.Second

// CodeOf is the provider code a plugin binary's file name announces
// ("adminkernel-provider-acme" → "acme"), or "" when the name does not
// start with FilePrefix.
func CodeOf(binaryPath string) string {
	code, ok := strings.CutPrefix(filepath.Base(binaryPath), FilePrefix)
	if !ok {
		return ""
	}
	return code
}

// Launch runs the whole kit against a built plugin binary, started as the
// kernel starts it: a fresh process per check (Start), the go-plugin
// handshake, gRPC only, AutoMTLS, an empty environment. The code must be
// the one the file name announces; settings is its settings section (nil:
// the Configure checks are skipped).
//
//	func TestBinary(t *testing.T) {
//		providertest.Launch(t, "bin/adminkernel-provider-acme", pluginsdk.Settings{"ClientId": "id", "ClientSecret": "s3cret"})
//	}
//
// LaunchWith takes complete Options (a Login against a test vendor, Required
// keys, WantSubject).
func Launch(t *testing.T, binaryPath string, settings pluginsdk.Settings) {
	t.Helper()
	LaunchWith(t, binaryPath, Options{Settings: settings})
}

// LaunchWith is Launch with Options; an empty Options.Code is the code the
// file name announces.
func LaunchWith(t *testing.T, binaryPath string, opts Options) {
	t.Helper()
	code := CodeOf(binaryPath)
	if code == "" {
		t.Fatalf("providertest: %s is not named %s<code>", binaryPath, FilePrefix)
	}
	if opts.Code == "" {
		opts.Code = code
	}
	Run(t, func(t *testing.T) pluginsdk.Provider { return Start(t, binaryPath) }, opts)
}

// Start launches a plugin binary as the kernel does and returns the
// kernel's view of it (its gRPC client). The process is killed when the
// test ends; its log goes to the test log.
func Start(t TB, binaryPath string) pluginsdk.Provider {
	t.Helper()
	return startLogging(t, binaryPath, launchLogLevel)
}

// startLogging is Start with the level of the plugin's log.
func startLogging(t TB, binaryPath string, level hclog.Level) pluginsdk.Provider {
	t.Helper()
	out := &testWriter{t: t}
	p, stop, err := start(binaryPath, out, level)
	if err != nil {
		out.stop()
		t.Fatalf("providertest: %v", err)
	}
	t.Cleanup(func() {
		out.stop()
		stop()
	})
	return p
}

// start launches binaryPath with the kernel's go-plugin client settings and
// checks its fingerprint (Describe reports the protocol version the
// handshake settled on). stop kills the process.
func start(binaryPath string, logOut io.Writer, level hclog.Level) (pluginsdk.Provider, func(), error) {
	abs, err := filepath.Abs(binaryPath)
	if err != nil {
		return nil, nil, err
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: level, Output: logOut})
	cmd := exec.Command(abs) //nolint:gosec,noctx // go-plugin owns the process lifecycle; the binary under test
	// No inherited environment: go-plugin adds only its handshake
	// variables, as for the kernel's plugins.
	cmd.Env = []string{}
	cmd.Dir = filepath.Dir(abs)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  grpcprovider.Handshake,
		VersionedPlugins: grpcprovider.VersionedPlugins(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     StartTimeout,
		Logger:           log,
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("starting %s: %w", binaryPath, err)
	}
	raw, err := rpc.Dispense(grpcprovider.PluginName)
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("dispensing the provider of %s: %w", binaryPath, err)
	}
	p, ok := raw.(pluginsdk.Provider)
	if !ok {
		client.Kill()
		return nil, nil, fmt.Errorf("%s dispensed %T, not a provider", binaryPath, raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	d, err := p.Describe(ctx)
	switch {
	case err != nil:
		client.Kill()
		return nil, nil, fmt.Errorf("%s: Describe: %w", binaryPath, err)
	case d.ProtocolVersion != client.NegotiatedVersion():
		client.Kill()
		return nil, nil, fmt.Errorf("%s reports protocol version %d but speaks version %d", binaryPath, d.ProtocolVersion, client.NegotiatedVersion())
	}
	return p, client.Kill, nil
}

// CheckBinary runs the kit against a built plugin binary outside go test
// (the kernel's `adminkernel providers test` command): it starts the binary
// as Launch does and runs every check with Check, each against a fresh
// process. progress, when not nil, gets each result as its check ends. The
// error is a binary that is misnamed or does not even start (no check
// ran); otherwise Report.OK tells whether the plugin passed.
func CheckBinary(binaryPath string, settings pluginsdk.Settings, progress func(Result)) (Report, error) {
	code := CodeOf(binaryPath)
	if code == "" {
		return Report{}, fmt.Errorf("%s is not named %s<code>", binaryPath, FilePrefix)
	}
	// A first start tells a binary that does not start apart from one that
	// fails checks.
	_, stop, err := start(binaryPath, io.Discard, hclog.Off)
	if err != nil {
		return Report{}, err
	}
	stop()
	return Check(func(t TB) pluginsdk.Provider { return startLogging(t, binaryPath, hclog.Warn) }, Options{Code: code, Settings: settings}, progress)
}

// launchLogLevel is the level of the launched plugins' log (and go-plugin's
// client log) under go test: everything (go test shows it for failed checks
// and with -v). CheckBinary's report shows warnings and errors.
const launchLogLevel = hclog.Debug
