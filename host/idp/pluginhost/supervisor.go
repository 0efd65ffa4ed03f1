package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/grpcprovider"
)

// ErrClosed is returned by calls to a plugin after Host.Close.
var ErrClosed = errors.New("pluginhost: the plugin host is closed")

// DownError is returned by calls to a plugin that is down while its
// restart backs off.
type DownError struct {
	Code string
	// RetryAt is when the next restart is attempted.
	RetryAt time.Time
	// Err is why the last restart failed.
	Err error
}

func (e *DownError) Error() string {
	return fmt.Sprintf("provider plugin %s is down (next restart attempt at %s): %v", e.Code, e.RetryAt.Format(time.RFC3339), e.Err)
}

func (e *DownError) Unwrap() error { return e.Err }

// instance is one run of a plugin process.
type instance struct {
	gen     uint64
	started time.Time
	client  *plugin.Client
	prov    pluginsdk.Provider
	pid     int
	// broken is set when a call found the process unreachable.
	broken atomic.Bool
}

func (in *instance) alive() bool { return !in.broken.Load() && !in.client.Exited() }

// supervisor runs one plugin and implements pluginsdk.Provider on top of
// it; it is what the registry holds. All (re)starts happen on its own
// goroutine, which is locked to its OS thread for the supervisor's life:
// the plugins' parent-death signal follows that thread.
type supervisor struct {
	h      *Host
	code   string
	path   string
	pin    []byte
	pinned bool
	plog   hclog.Logger // the plugin's output, under provider.<code>

	mu      sync.Mutex
	cur     *instance // nil while down
	gen     uint64
	changed chan struct{} // closed and replaced at every change
	// streak counts failed starts and early exits (before stableUptime)
	// in a row; it sets the back-off. failedStarts only grows: callers
	// waiting for a restart see whether it failed.
	streak       int
	failedStarts uint64
	nextTry      time.Time
	lastErr      error
	configErr    error
	settings     pluginsdk.Settings
	reg          *idp.Registry
	closed       bool

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

var _ pluginsdk.Provider = (*supervisor)(nil)

func newSupervisor(h *Host, c Candidate, pin []byte, pinned bool) *supervisor {
	var settings map[string]string
	if h.opts.Settings != nil {
		settings = h.opts.Settings(c.Code)
	}
	return &supervisor{
		h:        h,
		code:     c.Code,
		path:     c.Path,
		pin:      pin,
		pinned:   pinned,
		plog:     h.opts.Logger.ResetNamed("provider." + c.Code),
		changed:  make(chan struct{}),
		settings: cloneSettings(settings),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// start launches the plugin for the first time and, on success, keeps
// supervising it until close.
func (s *supervisor) start(ctx context.Context) error {
	first := make(chan error, 1)
	go s.run(first)
	select {
	case err := <-first:
		return err
	case <-ctx.Done():
		s.close()
		return ctx.Err()
	}
}

func (s *supervisor) run(first chan<- error) {
	// Never unlocked: the thread ends with the goroutine, after the
	// plugin has been killed.
	runtime.LockOSThread()
	defer close(s.done)
	err := s.launch()
	first <- err
	if err != nil {
		return
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			s.shutdown()
			return
		case <-s.kick:
		case <-tick.C:
		}
		s.check()
	}
}

// check restarts the plugin when it is down and the back-off allows.
func (s *supervisor) check() {
	s.mu.Lock()
	in, next, closed := s.cur, s.nextTry, s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	if in != nil {
		if in.alive() {
			s.mu.Lock()
			if s.streak > 0 && time.Since(in.started) >= stableUptime {
				s.streak = 0
			}
			s.mu.Unlock()
			return
		}
		s.down(in)
		s.mu.Lock()
		next = s.nextTry
		s.mu.Unlock()
	}
	if time.Now().Before(next) {
		return
	}
	s.h.opts.Metrics.PluginRestart(s.code)
	if err := s.launch(); err != nil {
		s.failed(err)
	}
}

func (s *supervisor) down(in *instance) {
	how := "exited"
	if !in.client.Exited() {
		how = "stopped answering"
	}
	uptime := time.Since(in.started)
	s.h.log.Error("provider plugin is down; restarting it", "provider", s.code, "pid", in.pid, "how", how, "uptime", uptime.Round(time.Millisecond))
	in.client.Kill()
	s.mu.Lock()
	if s.cur == in {
		s.cur = nil
	}
	if uptime < stableUptime {
		// Exiting soon after a start looks like a crash loop: back off.
		s.streak++
		s.nextTry = time.Now().Add(backoff(s.streak, s.h.opts.MinBackoff, s.h.opts.MaxBackoff))
		s.lastErr = fmt.Errorf("the plugin %s %s after its start", how, uptime.Round(time.Millisecond))
	} else {
		s.streak, s.nextTry = 0, time.Time{}
	}
	s.publishLocked()
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *supervisor) failed(err error) {
	s.mu.Lock()
	s.streak++
	s.failedStarts++
	wait := backoff(s.streak, s.h.opts.MinBackoff, s.h.opts.MaxBackoff)
	s.nextTry = time.Now().Add(wait)
	s.lastErr = err
	attempt := s.streak
	s.publishLocked()
	s.notifyLocked()
	s.mu.Unlock()
	s.h.log.Error("restarting provider plugin failed", "provider", s.code, "attempt", attempt, "retry_in", wait, "error", err)
}

// backoff is min·2^(n-1), capped at max.
func backoff(n int, minWait, maxWait time.Duration) time.Duration {
	d := minWait
	for i := 1; i < n && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

func (s *supervisor) shutdown() {
	s.mu.Lock()
	in := s.cur
	s.cur = nil
	s.mu.Unlock()
	if in != nil {
		in.client.Kill()
	}
}

func (s *supervisor) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.closed = true
	s.notifyLocked()
	s.mu.Unlock()
	close(s.stop)
	<-s.done
}

func (s *supervisor) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// stateLocked is the plugin's condition and why: degraded while it is
// down, misconfigured while it refuses its settings, ready otherwise.
func (s *supervisor) stateLocked() (State, string) {
	switch {
	case s.cur == nil && s.lastErr != nil:
		return Degraded, "restarting: " + s.lastErr.Error()
	case s.cur == nil:
		return Degraded, "restarting"
	case s.configErr != nil:
		return Misconfigured, "settings refused: " + remoteMessage(s.configErr)
	}
	return Ready, ""
}

// publishLocked tells the registry the plugin's condition.
func (s *supervisor) publishLocked() {
	if s.reg != nil {
		st, reason := s.stateLocked()
		_ = s.reg.SetStatus(s.code, idp.Status(st), reason)
	}
}

func (s *supervisor) register(reg *idp.Registry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := reg.Register(s.code, s, idp.PluginSource(s.path)); err != nil {
		return err
	}
	s.reg = reg
	s.publishLocked()
	return nil
}

func (s *supervisor) info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	inf := Info{Code: s.code, Path: s.path, Pinned: s.pinned}
	if s.cur != nil {
		inf.PID = s.cur.pid
	}
	inf.State, inf.Reason = s.stateLocked()
	return inf
}

// fixedName keeps go-plugin from appending the binary's name to the
// plugin's logger: plugin output appears under provider.<code>.
type fixedName struct{ hclog.Logger }

func (l fixedName) Named(string) hclog.Logger { return l }

// launchConfig is how the kernel starts every plugin process (the
// supervisor, and describe, which must see what the kernel would): the
// plugin's folder as working directory, no inherited environment (the
// host's holds database strings and secrets; go-plugin adds only its
// handshake variables and the one-time client certificate) beyond env,
// gRPC only, mutual TLS, the plugin's output under log.
func launchConfig(cmd *exec.Cmd, env []string, start time.Duration, log hclog.Logger) *plugin.ClientConfig {
	cmd.Env = append([]string{}, env...)
	cmd.Dir = filepath.Dir(cmd.Path)
	cmd.SysProcAttr = sysProcAttr()
	return &plugin.ClientConfig{
		HandshakeConfig:  grpcprovider.Handshake,
		VersionedPlugins: grpcprovider.VersionedPlugins(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     start,
		Logger:           fixedName{log},
	}
}

func (s *supervisor) clientConfig() *plugin.ClientConfig {
	cmd := exec.Command(s.path) //nolint:gosec,noctx // go-plugin owns the process lifecycle; a binary of the operator's plugin folder, checked by Discover and the SHA-256 pin
	var env []string
	if s.h.opts.Env != nil {
		env = s.h.opts.Env(s.code)
	}
	cfg := launchConfig(cmd, env, s.h.opts.StartTimeout, s.plog)
	cfg.Managed = true
	cfg.GRPCDialOptions = s.h.opts.GRPCDialOptions
	if s.pinned {
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: s.pin, Hash: sha256.New()}
	}
	return cfg
}

// launch starts, fingerprints and configures one plugin process.
func (s *supervisor) launch() error {
	client := plugin.NewClient(s.clientConfig())
	ok := false
	defer func() {
		if !ok {
			client.Kill()
		}
	}()
	rpc, err := client.Client()
	if err != nil {
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return errors.New("the binary does not match its SHA-256 pin (Service:ExternalAuth:PluginSha256)")
		}
		return fmt.Errorf("starting: %w", err)
	}
	raw, err := rpc.Dispense(grpcprovider.PluginName)
	if err != nil {
		return fmt.Errorf("dispensing the provider: %w", err)
	}
	prov, isProvider := raw.(pluginsdk.Provider)
	if !isProvider {
		return fmt.Errorf("dispensed %T, not a provider", raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.h.opts.CallTimeout)
	defer cancel()
	d, err := prov.Describe(ctx)
	if err != nil {
		return fmt.Errorf("describing itself: %w", err)
	}
	if d.Code != s.code {
		return fmt.Errorf("the plugin reports provider code %q but its file name says %q", d.Code, s.code)
	}
	if v := client.NegotiatedVersion(); d.ProtocolVersion != v {
		return fmt.Errorf("the plugin reports protocol version %d but speaks version %d", d.ProtocolVersion, v)
	}
	s.mu.Lock()
	settings := maps.Clone(s.settings)
	s.mu.Unlock()
	cerr := prov.Configure(ctx, settings)
	if cerr != nil && !isRemote(cerr) {
		return fmt.Errorf("configuring: %w", cerr)
	}
	pid := 0
	if rc := client.ReattachConfig(); rc != nil {
		pid = rc.Pid
	}
	s.mu.Lock()
	s.gen++
	in := &instance{gen: s.gen, started: time.Now(), client: client, prov: prov, pid: pid}
	restarted := s.gen > 1
	s.cur = in
	s.nextTry, s.lastErr, s.configErr = time.Time{}, nil, cerr
	s.publishLocked()
	s.notifyLocked()
	s.mu.Unlock()
	ok = true
	if cerr != nil {
		// Misconfigured: it runs (and is configured again after a
		// restart) but is not offered.
		s.h.log.Warn("provider plugin refused its settings; it is not offered", "provider", s.code, "error", remoteMessage(cerr))
	}
	if restarted {
		s.h.log.Info("provider plugin restarted", "provider", s.code, "pid", pid)
	}
	return nil
}

// remoteMessage is the plugin's own message of an error it returned.
func remoteMessage(err error) string {
	var re *grpcprovider.RemoteError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

func isRemote(err error) bool {
	var re *grpcprovider.RemoteError
	return errors.As(err, &re)
}

// poke asks the supervisor to check its plugin now.
func (s *supervisor) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// live returns a running instance newer than generation after. It waits
// for a restart that is under way or due within maxRestartWait, but not
// through a failed start nor through a longer back-off.
func (s *supervisor) live(ctx context.Context, after uint64) (*instance, error) {
	var seen uint64
	for first := true; ; first = false {
		s.mu.Lock()
		in, ch, closed := s.cur, s.changed, s.closed
		failed, next, lastErr := s.failedStarts, s.nextTry, s.lastErr
		s.mu.Unlock()
		if closed {
			return nil, fmt.Errorf("provider plugin %s: %w", s.code, ErrClosed)
		}
		if in != nil && in.gen > after && in.alive() {
			return in, nil
		}
		if first {
			seen = failed
		}
		if failed > seen || (in == nil && time.Until(next) > maxRestartWait) {
			if lastErr == nil {
				lastErr = errors.New("the plugin is not running")
			}
			return nil, &DownError{Code: s.code, RetryAt: next, Err: lastErr}
		}
		s.poke()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("provider plugin %s is restarting: %w", s.code, ctx.Err())
		}
	}
}

// crashed reports whether err means the plugin process is gone.
func crashed(in *instance, err error) bool {
	var te *grpcprovider.TransportError
	if !errors.As(err, &te) {
		return false
	}
	return te.Code == codes.Unavailable || in.client.Exited()
}

// call runs f on a live instance with the call deadline. When the process
// turns out to be gone, the supervisor is told; with retry (idempotent
// calls only) f runs once more on the restarted plugin.
func (s *supervisor) call(ctx context.Context, method string, retry bool, f func(context.Context, *instance) error) (err error) {
	defer func(start time.Time) { s.h.opts.Metrics.PluginCall(s.code, method, time.Since(start), err) }(time.Now())
	in, err := s.live(ctx, 0)
	if err != nil {
		return err
	}
	err = s.invoke(ctx, in, f)
	if err == nil || !crashed(in, err) {
		return err
	}
	in.broken.Store(true)
	s.poke()
	if !retry {
		s.h.log.Warn("provider plugin call failed: the plugin is gone; not retried", "provider", s.code, "method", method, "error", err)
		return err
	}
	s.h.log.Warn("provider plugin call failed: the plugin is gone; retrying after the restart", "provider", s.code, "method", method, "error", err)
	in2, rerr := s.live(ctx, in.gen)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	return s.invoke(ctx, in2, f)
}

func (s *supervisor) invoke(ctx context.Context, in *instance, f func(context.Context, *instance) error) error {
	cctx, cancel := context.WithTimeout(ctx, s.h.opts.CallTimeout)
	defer cancel()
	return f(cctx, in)
}

// Describe asks the plugin what it is (retried once after a restart).
func (s *supervisor) Describe(ctx context.Context) (d pluginsdk.Descriptor, err error) {
	err = s.call(ctx, "Describe", true, func(ctx context.Context, in *instance) error {
		d, err = in.prov.Describe(ctx)
		return err
	})
	return d, err
}

// Configure replaces the plugin's settings; restarts reuse them (retried
// once after a restart).
func (s *supervisor) Configure(ctx context.Context, settings pluginsdk.Settings) error {
	s.mu.Lock()
	s.settings = cloneSettings(settings)
	s.mu.Unlock()
	var gen uint64
	err := s.call(ctx, "Configure", true, func(ctx context.Context, in *instance) error {
		gen = in.gen
		return in.prov.Configure(ctx, maps.Clone(settings))
	})
	if err == nil || isRemote(err) {
		s.mu.Lock()
		if s.cur != nil && s.cur.gen == gen {
			s.configErr = err
			s.publishLocked()
		}
		s.mu.Unlock()
	}
	return err
}

// AuthorizeURL asks the plugin for the vendor's URL (retried once after a
// restart: it has no side effect at the vendor).
func (s *supervisor) AuthorizeURL(ctx context.Context, req pluginsdk.AuthorizeRequest) (resp pluginsdk.AuthorizeResponse, err error) {
	err = s.call(ctx, "AuthorizeURL", true, func(ctx context.Context, in *instance) error {
		resp, err = in.prov.AuthorizeURL(ctx, req)
		return err
	})
	return resp, err
}

// Exchange sends a callback to the plugin. It is never retried: the
// vendor's code is single-use and may already have been spent.
func (s *supervisor) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (resp pluginsdk.ExchangeResponse, err error) {
	err = s.call(ctx, "Exchange", false, func(ctx context.Context, in *instance) error {
		resp, err = in.prov.Exchange(ctx, req)
		return err
	})
	return resp, err
}

// decodePin reads a hex SHA-256 (case-insensitive, surrounding space
// ignored).
func decodePin(s string) ([]byte, bool) {
	sum, err := hex.DecodeString(strings.TrimSpace(s))
	return sum, err == nil && len(sum) == sha256.Size
}
