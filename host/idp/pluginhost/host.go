// Package pluginhost runs the kernel's provider plugins: vendor binaries
// named adminkernel-provider-<code> in the plugin folder, spoken to with
// hashicorp/go-plugin over gRPC (kernel.provider.v1).
//
// Load discovers the binaries (regular executable files with that name;
// anything else is skipped with a warning), leaves the unconfigured ones
// alone (an empty settings section: not started, listed as unconfigured
// with an INFO line), warns about configured plugins without a binary
// (missing), checks each configured binary against its
// optional SHA-256 pin, launches it (mutual TLS, no inherited environment,
// start timeout at most 10 s, killed by the kernel when the host dies),
// asks it for its code (which must match the file name), hands it its
// settings section over the Configure call (never through the environment
// or argv), and registers it in the idp registry with source plugin:
// ready, or misconfigured when it refuses its settings (a warning with its
// message). A plugin that fails any of this is not launched; the host
// still starts. Unconfigured, missing and not launched plugins are
// recorded in the registry without a provider, so administrators see them.
//
// Each registered plugin is supervised: every call carries a deadline; a
// plugin that exits is restarted by a single supervisor goroutine (so
// concurrent callers never start two): at once after a stable run, with
// capped exponential back-off after failed starts and early exits. Only its
// own provider is marked degraded meanwhile. Describe, Configure and
// AuthorizeURL are retried once after a restart; Exchange never is (vendor
// authorization codes are single-use): its transport failure is an error,
// which the external-login flow reports as 40015.
//
// Plugin output (hclog JSON on standard error) is re-logged at its level
// under provider.<code>.
package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/telemetry"
	"github.com/adminkernel/kernel/pluginsdk"
)

// Defaults and limits of Options.
const (
	// MaxStartTimeout caps how long a plugin may take to answer the
	// handshake (also the default).
	MaxStartTimeout = 10 * time.Second
	// DefaultCallTimeout bounds every call to a plugin.
	DefaultCallTimeout = 10 * time.Second
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before
	// restarting a plugin whose start failed or that exited soon after its
	// start (doubling from min to max).
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// pollInterval is how often a supervisor checks its plugin is alive.
	pollInterval = 250 * time.Millisecond
	// stableUptime: a plugin that exits sooner after its start counts as
	// crash-looping and is restarted after the back-off; one that ran
	// longer is restarted at once.
	stableUptime = 10 * time.Second
	// maxRestartWait is the longest a call waits for a restart that is
	// due; beyond it (a longer back-off) the call fails at once.
	maxRestartWait = 2 * time.Second
)

// Options configure Load.
type Options struct {
	// Dir is the plugin folder (see ResolveDir). A missing folder holds no
	// plugins.
	Dir string
	// DirRequired says Dir was named in the settings
	// (Service:ExternalAuth:PluginDir): a missing folder is then a warning
	// and listed as missing.
	DirRequired bool
	// Configured lists the provider codes whose settings section configures
	// them (config.ExternalAuth.ConfiguredPlugins): each is expected to have
	// a binary, and is listed as missing (with a warning) when it has none.
	Configured []string
	// SettingsKey names where the settings of a code are given, for
	// messages (config.ExternalAuth.SectionKey). Optional.
	SettingsKey func(code string) string
	// SHA256 pins plugin binaries: provider code → hex SHA-256 of the
	// binary (Service:ExternalAuth:PluginSha256). A pinned plugin whose
	// binary does not match is not launched. The check is repeated at
	// every restart.
	SHA256 map[string]string
	// RequirePins refuses every configured plugin without a pin in SHA256
	// (Service:ExternalAuth:RequirePins): it is not launched.
	RequirePins bool
	// Settings returns the settings section of a provider code
	// (config.ExternalAuth.ProviderSection); nil means none. A plugin whose
	// section holds no value that is not blank is unconfigured: it is not
	// started, only listed (with an INFO line).
	Settings func(code string) map[string]string
	// Logger receives the plugin host's messages; each plugin's output is
	// re-logged at its level through Logger.ResetNamed("provider.<code>").
	// Default: no logging.
	Logger hclog.Logger
	// StartTimeout bounds a plugin's start-up handshake (default and
	// maximum 10 s).
	StartTimeout time.Duration
	// CallTimeout bounds every call to a plugin (default 10 s); the
	// caller's own deadline applies too.
	CallTimeout time.Duration
	// MinBackoff and MaxBackoff bound the back-off between restarts of a
	// plugin whose starts fail or that exits within 10 s of its start
	// (defaults 500 ms and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// Metrics times the plugin calls and counts restarts (nil = none).
	Metrics *telemetry.Metrics
	// Env returns the environment of a plugin process, the provider code
	// given (the kernel's tracing passes exactly the OTLP exporter
	// variables, host/tracing); nil or an empty answer: an empty
	// environment.
	Env func(code string) []string
	// GRPCDialOptions are added to the dial options of every plugin's gRPC
	// connection (the tracing stats handler).
	GRPCDialOptions []grpc.DialOption
	// Registry receives every launched plugin, with source plugin. Load
	// fails when a plugin's code is already registered.
	Registry *idp.Registry
}

// State is the condition of a file in the plugin folder, or of a plugin
// the settings expect. The provider statuses are those of the idp
// registry.
type State string

// States of Info.
const (
	// Ready: launched, configured and registered.
	Ready = State(idp.Ready)
	// Degraded: registered, but down (being restarted).
	Degraded = State(idp.Degraded)
	// Misconfigured: launched and registered, but it refused its settings
	// (the reason is its message); not offered.
	Misconfigured = State(idp.Misconfigured)
	// Unconfigured: a plugin binary whose settings section is empty; not
	// started.
	Unconfigured = State(idp.Unconfigured)
	// Missing: a configured plugin without a usable binary, or a plugin
	// folder named in the settings that does not exist.
	Missing = State(idp.Missing)
	// NotLaunched: a configured plugin binary that failed its checks or
	// its start; not registered.
	NotLaunched = State(idp.NotLaunched)
	// Skipped: not a plugin binary.
	Skipped State = "skipped"
	// Found: a configured plugin binary, as Inspect sees it (without
	// launching it).
	Found State = "found"
)

// Info describes one file of the plugin folder (or a plugin the settings
// expect, or the folder itself when it is missing).
type Info struct {
	// Code is the provider code ("" for skipped files and the folder).
	Code  string
	Path  string
	State State
	// Reason says why the plugin is not ready.
	Reason string
	// PID is the plugin's process id while it runs.
	PID int
	// Pinned is true when the binary is checked against a SHA-256 pin.
	Pinned bool
}

// Problem reports whether the state is one an operator must act on (a
// warning or an error at startup): anything but ready, unconfigured and
// found.
func (s State) Problem() bool {
	switch s {
	case Ready, Unconfigured, Found:
		return false
	}
	return true
}

// Host owns the launched plugins. Close ends them.
type Host struct {
	log  hclog.Logger
	opts Options

	mu          sync.Mutex
	supervisors []*supervisor
	others      []Info // skipped and not launched files
	closed      bool
}

// FromConfig returns the options the settings give: the plugin folder
// (Service:ExternalAuth:PluginDir, see ResolveDir; required when named), the
// SHA-256 pins, each code's settings section and the configured codes.
// The caller adds Logger and Registry.
func FromConfig(cfg *config.Config) (Options, error) {
	ea := &cfg.Service.ExternalAuth
	dir, err := ResolveDir(ea.PluginDir, cfg.ContentRoot)
	if err != nil {
		return Options{}, err
	}
	return Options{
		Dir:         dir,
		DirRequired: strings.TrimSpace(ea.PluginDir) != "",
		Configured:  ea.ConfiguredPlugins(),
		SettingsKey: ea.SectionKey,
		SHA256:      ea.PluginSHA256,
		RequirePins: ea.RequirePins,
		Settings:    func(code string) map[string]string { return ea.ProviderSection(code) },
	}, nil
}

// Load discovers, verifies, launches, configures and registers the plugins
// of opts.Dir. Plugins that fail are logged and left out; Load fails only
// when the folder cannot be read or a plugin's code is already registered
// (a duplicate stops startup, naming both registrations). ctx bounds the
// launch.
func Load(ctx context.Context, opts Options) (*Host, error) {
	if opts.Registry == nil {
		return nil, errors.New("pluginhost: Options.Registry is required")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.StartTimeout <= 0 || opts.StartTimeout > MaxStartTimeout {
		opts.StartTimeout = MaxStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	h := &Host{log: opts.Logger, opts: opts}

	found, others, err := survey(opts)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 && len(others) == 0 {
		h.log.Info("no provider plugins", "dir", opts.Dir)
	}
	if !orphanSafe && len(found) > 0 {
		h.log.Warn("on this system plugins may outlive a host that is killed (no parent-death signal)")
	}
	for _, in := range others {
		switch {
		case in.State == Skipped:
			h.log.Warn("skipping a file in the plugin folder", "path", in.Path, "reason", in.Reason)
		case in.State == Missing && in.Code == "":
			h.log.Warn("the plugin folder does not exist", "dir", in.Path, "reason", in.Reason)
		case in.State == Missing:
			h.log.Warn("provider plugin is configured but missing", "provider", in.Code, "reason", in.Reason)
		case in.State == Unconfigured:
			h.log.Info("provider plugin not configured; not started", "provider", in.Code, "path", in.Path, "reason", in.Reason)
		}
	}
	h.others = append(h.others, others...)
	pins, badPins := normalizePins(opts.SHA256)
	for _, in := range strayPins(opts, found, others) {
		h.log.Warn("a SHA-256 pin names a provider with no plugin binary", "provider", in.Code, "reason", in.Reason)
		h.others = append(h.others, in)
	}

	// Launch every plugin at once: a slow one does not delay the others.
	type result struct {
		s   *supervisor
		err error
	}
	results := make([]result, len(found))
	var wg sync.WaitGroup
	for i, c := range found {
		var pin []byte
		pinned := false
		if bad, ok := badPins[c.Code]; ok {
			results[i] = result{err: fmt.Errorf("the SHA-256 pin %q is not 64 hexadecimal digits", bad)}
			continue
		}
		if p, ok := pins[c.Code]; ok {
			pin, pinned = p, true
		}
		if !pinned && opts.RequirePins {
			results[i] = result{err: errors.New(unpinnedReason(c.Code))}
			continue
		}
		s := newSupervisor(h, c, pin, pinned)
		results[i].s = s
		wg.Go(func() { results[i].err = s.start(ctx) })
	}
	wg.Wait()

	var notLaunched []Info
	for i, r := range results {
		c := found[i]
		if r.err != nil {
			h.log.Error("provider plugin not launched", "provider", c.Code, "path", c.Path, "error", r.err)
			_, malformed := badPins[c.Code]
			pinned := malformed || (r.s != nil && r.s.pinned)
			notLaunched = append(notLaunched, Info{Code: c.Code, Path: c.Path, State: NotLaunched, Reason: r.err.Error(), Pinned: pinned})
			continue
		}
		if err := r.s.register(opts.Registry); err != nil {
			// Stop the rest too: startup fails.
			r.s.close()
			for _, later := range results[i+1:] {
				if later.s != nil && later.err == nil {
					later.s.close()
				}
			}
			_ = h.Close()
			return nil, err
		}
		h.supervisors = append(h.supervisors, r.s)
		if in := r.s.info(); in.State == Ready {
			h.log.Info("provider plugin ready", "provider", c.Code, "path", c.Path, "pid", in.PID, "pinned", r.s.pinned)
		}
	}
	h.others = append(notLaunched, h.others...)
	// The plugins that cannot take part in logins are recorded so that
	// administrators see them with the reason. A code another provider
	// already holds stays out of the registry (the other one is meant).
	for _, in := range h.others {
		if in.Code == "" {
			continue
		}
		err := opts.Registry.Record(in.Code, idp.PluginSource(in.Path), idp.Status(in.State), in.Reason)
		var dup *idp.DuplicateError
		if err != nil && !errors.As(err, &dup) {
			_ = h.Close()
			return nil, err
		}
	}
	return h, nil
}

// survey classifies the plugin folder: the configured binaries to launch,
// and the rest (skipped files, unconfigured binaries, configured plugins
// without a binary, a required folder that does not exist) with the
// reason.
func survey(opts Options) ([]Candidate, []Info, error) {
	found, skipped, err := Discover(opts.Dir)
	if err != nil {
		return nil, nil, err
	}
	var others []Info
	if opts.DirRequired {
		if _, err := os.Stat(opts.Dir); errors.Is(err, fs.ErrNotExist) {
			others = append(others, Info{Path: opts.Dir, State: Missing, Reason: "the plugin folder named by Service:ExternalAuth:PluginDir does not exist"})
		}
	}
	key := func(code string) string {
		if opts.SettingsKey != nil {
			return opts.SettingsKey(code)
		}
		return "its settings section"
	}
	var launch []Candidate
	have := map[string]bool{}
	for _, c := range found {
		have[strings.ToLower(c.Code)] = true
		var settings map[string]string
		if opts.Settings != nil {
			settings = opts.Settings(c.Code)
		}
		if !config.VendorSettings(settings).Configured() {
			others = append(others, Info{Code: c.Code, Path: c.Path, State: Unconfigured, Reason: "no settings: " + key(c.Code) + " is empty"})
			continue
		}
		launch = append(launch, c)
	}
	skippedByName := map[string]SkippedFile{}
	for _, sk := range skipped {
		others = append(others, Info{Path: sk.Path, State: Skipped, Reason: sk.Reason})
		skippedByName[strings.ToLower(filepath.Base(sk.Path))] = sk
	}
	configured := slices.Clone(opts.Configured)
	sort.Strings(configured)
	for _, code := range configured {
		if have[strings.ToLower(code)] || !idp.ValidCode(code) {
			continue
		}
		have[strings.ToLower(code)] = true
		path := filepath.Join(opts.Dir, FilePrefix+code)
		reason := fmt.Sprintf("%s is set, but the plugin folder %s has no plugin binary %s", key(code), opts.Dir, FilePrefix+code)
		if sk, ok := skippedByName[strings.ToLower(FilePrefix+code)]; ok {
			path = sk.Path
			reason = fmt.Sprintf("%s is set, but its binary %s is skipped: %s", key(code), sk.Path, sk.Reason)
		}
		others = append(others, Info{Code: code, Path: path, State: Missing, Reason: reason})
	}
	return launch, others, nil
}

// unpinnedReason is why a plugin without a pin is refused under
// RequirePins.
func unpinnedReason(code string) string {
	return fmt.Sprintf("not pinned: Service:ExternalAuth:RequirePins is on and Service:ExternalAuth:PluginSha256:%s is not set", code)
}

// strayPins lists the pins whose code has no plugin binary in the folder
// (a misspelt code would otherwise pin nothing, silently): each is listed
// as missing. A configured plugin without a binary is listed as missing
// already.
func strayPins(opts Options, found []Candidate, others []Info) []Info {
	have := map[string]bool{}
	for _, c := range found {
		have[strings.ToLower(c.Code)] = true
	}
	for _, in := range others {
		if in.Code != "" {
			have[strings.ToLower(in.Code)] = true
		}
	}
	codes := slices.Sorted(maps.Keys(opts.SHA256))
	var out []Info
	for _, code := range codes {
		lc := strings.ToLower(code)
		if have[lc] {
			continue
		}
		have[lc] = true
		out = append(out, Info{
			Code: code, Path: filepath.Join(opts.Dir, FilePrefix+code), State: Missing, Pinned: true,
			Reason: fmt.Sprintf("Service:ExternalAuth:PluginSha256:%s pins a plugin, but the plugin folder %s has no plugin binary %s (a misspelt code?)", code, opts.Dir, FilePrefix+code),
		})
	}
	return out
}

// Inspect lists what Load would find, without launching anything: the
// configured plugin binaries (state Found, with their pin), and the
// unconfigured, missing and skipped ones with the reason, as Load lists
// them. It reads only the plugin folder.
func Inspect(opts Options) ([]Info, error) {
	launch, others, err := survey(opts)
	if err != nil {
		return nil, err
	}
	pins, badPins := normalizePins(opts.SHA256)
	out := make([]Info, 0, len(launch)+len(others))
	for _, c := range launch {
		_, pinned := pins[c.Code]
		_, bad := badPins[c.Code]
		if !pinned && !bad && opts.RequirePins {
			out = append(out, Info{Code: c.Code, Path: c.Path, State: NotLaunched, Reason: unpinnedReason(c.Code)})
			continue
		}
		out = append(out, Info{Code: c.Code, Path: c.Path, State: Found, Pinned: pinned || bad})
	}
	out = append(out, others...)
	return append(out, strayPins(opts, launch, others)...), nil
}

// normalizePins decodes the pins; codes are compared case-sensitively as
// registered, but settings keys may arrive lower-cased, so each pin is
// also filed under its lower-case code.
func normalizePins(in map[string]string) (pins map[string][]byte, bad map[string]string) {
	pins, bad = map[string][]byte{}, map[string]string{}
	for code, hexSum := range in {
		sum, ok := decodePin(hexSum)
		for _, k := range []string{code, strings.ToLower(code)} {
			if ok {
				pins[k] = sum
			} else {
				bad[k] = hexSum
			}
		}
	}
	return pins, bad
}

// Providers returns the registered providers, keyed by code: the
// supervised clients the registry holds.
func (h *Host) Providers() map[string]pluginsdk.Provider {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]pluginsdk.Provider, len(h.supervisors))
	for _, s := range h.supervisors {
		out[s.code] = s
	}
	return out
}

// Plugins describes every file of the plugin folder: the registered
// plugins with their state and process id, then the plugins that were not
// launched, are unconfigured or missing (and the folder itself when a
// required one is missing), and the skipped files, each with the reason.
func (h *Host) Plugins() []Info {
	h.mu.Lock()
	sups := append([]*supervisor(nil), h.supervisors...)
	others := append([]Info(nil), h.others...)
	h.mu.Unlock()
	out := make([]Info, 0, len(sups)+len(others))
	for _, s := range sups {
		out = append(out, s.info())
	}
	return append(out, others...)
}

// Close ends every plugin (gracefully, then by force after 2 s) and stops
// supervising. It is idempotent.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	sups := h.supervisors
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sups {
		wg.Go(s.close)
	}
	wg.Wait()
	return nil
}

func cloneSettings(m map[string]string) pluginsdk.Settings {
	if m == nil {
		return pluginsdk.Settings{}
	}
	return maps.Clone(m)
}
