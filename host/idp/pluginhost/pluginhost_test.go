package pluginhost_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/grpcprovider"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

func authorizeReq(state string) pluginsdk.AuthorizeRequest {
	return pluginsdk.AuthorizeRequest{
		State:       state,
		RedirectURI: "https://kernel.example.test/api/v1/auth/external/x/callback",
		Nonce:       "n",
		Purpose:     pluginsdk.PurposeLogin,
	}
}

func provider(t testing.TB, reg *idp.Registry, code string) pluginsdk.Provider {
	t.Helper()
	e, ok := reg.Get(code)
	if !ok {
		t.Fatalf("provider %q is not registered", code)
	}
	if e.Provider == nil {
		t.Fatalf("provider %q is recorded without a provider: status %s, reason %q", code, e.Status, e.Reason)
	}
	return e.Provider
}

// recorded checks that code is in the registry without a provider, with
// the status and a reason containing why.
func recorded(t testing.TB, reg *idp.Registry, code string, st idp.Status, why string) {
	t.Helper()
	e, ok := reg.Get(code)
	if !ok || e.Provider != nil || e.Status != st || !strings.Contains(e.Reason, why) || e.Source.Kind != idp.Plugin {
		t.Errorf("registry entry %s = %+v (found %v); want recorded without a provider, %s, reason containing %q", code, e, ok, st, why)
	}
}

func status(reg *idp.Registry, code string) idp.Status {
	e, _ := reg.Get(code)
	return e.Status
}

// login runs AuthorizeURL and Exchange for subject through p.
func login(t testing.TB, p pluginsdk.Provider, subject string) (pluginsdk.ExchangeResponse, error) {
	t.Helper()
	ctx := context.Background()
	state := "st" + strings.ToLower(rand.Text())
	auth, err := p.AuthorizeURL(ctx, authorizeReq(state))
	if err != nil {
		return pluginsdk.ExchangeResponse{}, err
	}
	return p.Exchange(ctx, pluginsdk.ExchangeRequest{
		Query:        map[string]string{"code": providertest.FakeCode(subject), "state": state},
		ProviderData: auth.ProviderData,
	})
}

func TestLoadRegistersAndRoundTrips(t *testing.T) {
	t.Parallel()
	e := load(t, pluginDir(t, "alpha", "beta"), nil)

	entries := e.reg.List()
	if len(entries) != 2 {
		t.Fatalf("registered %d providers, want 2: %+v", len(entries), entries)
	}
	for _, en := range entries {
		if en.Source.Kind != idp.Plugin || en.Source.Name != filepath.Join(e.dir, pluginhost.FilePrefix+en.Code) || en.Status != idp.Ready {
			t.Errorf("entry %s = source %v, status %s; want plugin %s, ready", en.Code, en.Source, en.Status, pluginhost.FilePrefix+en.Code)
		}
		if in := e.info(t, en.Code); in.State != pluginhost.Ready || in.PID == 0 || !running(in.PID) {
			t.Errorf("Plugins() %s = %+v; want ready with a running pid", en.Code, in)
		}
	}

	p := provider(t, e.reg, "alpha")
	d, err := p.Describe(context.Background())
	if err != nil || d.Code != "alpha" || d.ProtocolVersion != pluginsdk.ProtocolVersion {
		t.Errorf("Describe() = %+v, %v", d, err)
	}
	resp, err := login(t, p, "u-1")
	if err != nil || resp.Identity == nil || resp.Identity.Subject != "u-1" {
		t.Errorf("round trip = %+v, %v; want identity u-1", resp, err)
	}
	denied, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"error": "access_denied"}})
	if err != nil || denied.Error == nil || denied.Error.Kind != pluginsdk.Denied {
		t.Errorf("Exchange(error=access_denied) = %+v, %v; want a Denied ProviderError", denied, err)
	}

	// Plugin output reaches the host log under the provider's name (it
	// travels on the plugin's stderr, so it may trail the answer).
	poll.Until(t, 10*time.Second, "the plugin's log line in the host log", func() bool {
		return len(e.log.lines("provider.alpha:", "exchange received", "ok-u-1")) == 1
	})

	// Close ends every plugin.
	pids := []int{e.info(t, "alpha").PID, e.info(t, "beta").PID}
	if err := e.host.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("plugin pid %d still runs after Close", pid)
		}
	}
	if _, err := p.Describe(context.Background()); !errors.Is(err, pluginhost.ErrClosed) {
		t.Errorf("Describe() after Close = %v, want ErrClosed", err)
	}
}

// The conformance kit passes against a real plugin binary seen through the
// host (supervised gRPC client).
func TestConformanceThroughHost(t *testing.T) {
	t.Parallel()
	bin := pluginDir(t, "gamma")
	providertest.Run(t, func(t *testing.T) pluginsdk.Provider {
		dir := t.TempDir()
		copyFile(t, filepath.Join(bin, pluginhost.FilePrefix+"gamma"), filepath.Join(dir, pluginhost.FilePrefix+"gamma"))
		return provider(t, load(t, dir, nil).reg, "gamma")
	}, providertest.FakeOptions("gamma"))
}

func TestKilledPluginIsRestartedAndOthersNeverNotice(t *testing.T) {
	t.Parallel()
	e := load(t, pluginDir(t, "alpha", "beta"), nil)
	alpha, beta := provider(t, e.reg, "alpha"), provider(t, e.reg, "beta")
	betaPID := e.info(t, "beta").PID

	// beta is called without pause for the whole test.
	var betaCalls, betaFailures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			betaCalls.Add(1)
			if resp, err := login(t, beta, "b"+strconv.Itoa(i)); err != nil || resp.Identity == nil {
				betaFailures.Add(1)
				t.Errorf("beta call failed: %+v, %v", resp, err)
			}
		}
	})

	// An Exchange in flight when alpha is killed fails at once and is
	// never retried.
	oldPID := e.info(t, "alpha").PID
	type result struct {
		resp pluginsdk.ExchangeResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := alpha.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "hang"}})
		done <- result{resp, err}
	}()
	poll.Until(t, 10*time.Second, "alpha to receive the exchange", func() bool {
		return len(e.log.lines("provider.alpha", "exchange received", "code=hang")) == 1
	})
	killedAt := time.Now()
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err == nil || !grpcprovider.IsTransport(r.err) {
		t.Errorf("in-flight Exchange of a killed plugin = %+v, %v; want a transport error", r.resp, r.err)
	}
	if d := time.Since(killedAt); d > 5*time.Second {
		t.Errorf("in-flight Exchange returned %v after the kill", d)
	}

	// The next authorize works: it waits for the restart.
	if _, err := alpha.AuthorizeURL(context.Background(), authorizeReq("afterkill")); err != nil {
		t.Fatalf("AuthorizeURL after the kill = %v", err)
	}
	newPID := e.info(t, "alpha").PID
	if newPID == oldPID || !running(newPID) || running(oldPID) {
		t.Errorf("alpha pid %d → %d; want a new running process and the old one gone", oldPID, newPID)
	}
	if status(e.reg, "alpha") != idp.Ready {
		t.Errorf("alpha status after the restart = %s, want ready", status(e.reg, "alpha"))
	}

	// Kill again and call at once: the call finds the process gone
	// (before or after the supervisor notices) and still succeeds.
	if err := syscall.Kill(newPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if resp, err := login(t, alpha, "again"); err != nil || resp.Identity == nil {
		t.Errorf("login right after a second kill = %+v, %v", resp, err)
	}

	close(stop)
	wg.Wait()
	if betaFailures.Load() != 0 || betaCalls.Load() < 5 {
		t.Errorf("beta: %d failures in %d calls; want 0 failures", betaFailures.Load(), betaCalls.Load())
	}
	if pid := e.info(t, "beta").PID; pid != betaPID {
		t.Errorf("beta pid changed %d → %d", betaPID, pid)
	}
	// The hanging exchange reached a plugin exactly once.
	if got := e.log.lines("exchange received", "code=hang"); len(got) != 1 {
		t.Errorf("exchange with code hang received %d times, want 1 (never retried):\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := e.log.lines("provider plugin is down", "provider=alpha"); len(got) == 0 {
		t.Errorf("no log line says alpha went down:\n%s", e.log)
	}
}

func TestRestartBacksOffAndOnlyThatProviderIsDegraded(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "alpha", "beta")
	e := load(t, dir, func(o *pluginhost.Options) {
		o.MinBackoff, o.MaxBackoff = 300*time.Millisecond, 600*time.Millisecond
	})
	alpha, beta := provider(t, e.reg, "alpha"), provider(t, e.reg, "beta")
	path := filepath.Join(dir, pluginhost.FilePrefix+"alpha")

	// Take the binary away and kill the process: restarts fail.
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(e.info(t, "alpha").PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "a failed restart", func() bool { return len(e.log.lines("restarting provider plugin failed", "provider=alpha")) > 0 })
	if en, _ := e.reg.Get("alpha"); en.Status != idp.Degraded || en.Ready() || !strings.HasPrefix(en.Reason, "restarting") || e.info(t, "alpha").State != pluginhost.Degraded {
		t.Errorf("alpha: registry %+v, Plugins %+v; want degraded, restarting", en, e.info(t, "alpha"))
	}
	if status(e.reg, "beta") != idp.Ready {
		t.Errorf("beta status = %s, want ready", status(e.reg, "beta"))
	}
	start := time.Now()
	_, err := alpha.AuthorizeURL(context.Background(), authorizeReq("down"))
	var down *pluginhost.DownError
	if !errors.As(err, &down) {
		t.Errorf("AuthorizeURL while down = %v; want a DownError", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("AuthorizeURL while down took %v", d)
	}
	if resp, err := login(t, beta, "b"); err != nil || resp.Identity == nil {
		t.Errorf("beta while alpha is down = %+v, %v", resp, err)
	}

	// Back-off: a few attempts, spaced.
	time.Sleep(1500 * time.Millisecond)
	attempts := len(e.log.lines("restarting provider plugin failed", "provider=alpha"))
	if attempts < 2 || attempts > 8 {
		t.Errorf("%d restart attempts in ~1.5 s with back-off 300-600 ms; want a few", attempts)
	}

	// Bring the binary back: the next attempt succeeds.
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "alpha ready again", func() bool { return status(e.reg, "alpha") == idp.Ready })
	if resp, err := login(t, alpha, "back"); err != nil || resp.Identity == nil {
		t.Errorf("alpha after recovery = %+v, %v", resp, err)
	}
}

// A plugin that keeps exiting right after its start is restarted with
// growing pauses, not in a hot loop, and only its own provider suffers.
func TestCrashLoopBacksOff(t *testing.T) {
	t.Parallel()
	e := load(t, pluginDir(t, "crashy", "beta"), func(o *pluginhost.Options) {
		o.MinBackoff, o.MaxBackoff = time.Second, 4*time.Second
	})
	if _, ok := e.reg.Get("crashy"); !ok {
		t.Fatalf("crashy is not registered: %+v", e.host.Plugins())
	}
	time.Sleep(4 * time.Second)
	crashes := len(e.log.lines("provider plugin is down", "provider=crashy"))
	// It exits 300 ms after each start: without back-off about ten times
	// in 4 s; with pauses of 1 s, 2 s, 4 s three times.
	if crashes < 2 || crashes > 5 {
		t.Errorf("crashy went down %d times in 4 s with back-off 1 s..4 s; want 2 to 5\n%s", crashes, e.log)
	}
	if status(e.reg, "crashy") == idp.Ready && e.info(t, "crashy").PID == 0 {
		t.Errorf("crashy: registry ready while not running")
	}
	if resp, err := login(t, provider(t, e.reg, "beta"), "b"); err != nil || resp.Identity == nil {
		t.Errorf("beta during crashy's crash loop = %+v, %v", resp, err)
	}
	if status(e.reg, "beta") != idp.Ready {
		t.Errorf("beta status = %s", status(e.reg, "beta"))
	}
}

func TestPinnedChecksum(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "alpha", "beta", "gamma", "delta")
	good := sha256File(t, filepath.Join(dir, pluginhost.FilePrefix+"beta"))
	wrong := strings.Repeat("ab", 32)
	e := load(t, dir, func(o *pluginhost.Options) {
		o.SHA256 = map[string]string{"alpha": wrong, "beta": strings.ToUpper(good), "delta": "not-hex", "nobody": good}
	})
	recorded(t, e.reg, "alpha", idp.NotLaunched, "SHA-256 pin")
	recorded(t, e.reg, "delta", idp.NotLaunched, "not 64 hexadecimal digits")
	for _, c := range []string{"beta", "gamma"} {
		if en, ok := e.reg.Get(c); !ok || !en.Ready() {
			t.Errorf("%s is not registered and ready: %+v", c, en)
		}
	}
	if in := e.info(t, "alpha"); in.State != pluginhost.NotLaunched || !strings.Contains(in.Reason, "SHA-256") || in.PID != 0 {
		t.Errorf("Plugins() alpha = %+v; want not launched because of the SHA-256 pin", in)
	}
	if in := e.info(t, "beta"); !in.Pinned || in.State != pluginhost.Ready {
		t.Errorf("Plugins() beta = %+v; want pinned and ready", in)
	}
	if got := e.log.lines("[ERROR]", "not launched", "provider=alpha"); len(got) != 1 {
		t.Errorf("no error logged for alpha's mismatch:\n%s", e.log)
	}
	if got := e.log.lines("[WARN]", "no plugin binary", "provider=nobody"); len(got) != 1 {
		t.Errorf("no warning for the pin of a missing plugin:\n%s", e.log)
	}
}

func TestCodeMustMatchFileName(t *testing.T) {
	t.Parallel()
	e := load(t, pluginDir(t, "liar", "alpha"), nil)
	recorded(t, e.reg, "liar", idp.NotLaunched, "someone_else")
	if _, ok := e.reg.Get("someone_else"); ok {
		t.Error("the liar's claimed code is registered")
	}
	if in := e.info(t, "liar"); in.State != pluginhost.NotLaunched || !strings.Contains(in.Reason, "someone_else") {
		t.Errorf("Plugins() liar = %+v", in)
	}
	if _, ok := e.reg.Get("alpha"); !ok {
		t.Error("alpha is not registered")
	}
}

func TestSkipsOtherFilesWithWarnings(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "alpha")
	writeFile(t, filepath.Join(dir, "README.md"), 0o644)
	writeFile(t, filepath.Join(dir, pluginhost.FilePrefix+"noexec"), 0o644)
	copyFile(t, pluginBin, filepath.Join(dir, "kernel-provider-old"))
	if err := os.Symlink(filepath.Join(dir, pluginhost.FilePrefix+"alpha"), filepath.Join(dir, pluginhost.FilePrefix+"link")); err != nil {
		t.Fatal(err)
	}
	e := load(t, dir, nil)
	if n := e.reg.Len(); n != 1 {
		t.Errorf("registered %d providers, want only alpha", n)
	}
	for _, name := range []string{"README.md", pluginhost.FilePrefix + "noexec", "kernel-provider-old", pluginhost.FilePrefix + "link"} {
		if got := e.log.lines("[WARN]", "skipping", name); len(got) != 1 {
			t.Errorf("no warning for %s:\n%s", name, e.log)
		}
	}
	var skipped int
	for _, p := range e.host.Plugins() {
		if p.State == pluginhost.Skipped {
			skipped++
		}
	}
	if skipped != 4 {
		t.Errorf("Plugins() lists %d skipped files, want 4: %+v", skipped, e.host.Plugins())
	}
}

func TestDuplicateCodeStopsLoad(t *testing.T) {
	t.Parallel()
	reg := idp.NewRegistry()
	if err := reg.Register("alpha", providertest.NewFake("alpha"), idp.BuiltinSource("Service:ExternalAuth:Oidc:0")); err != nil {
		t.Fatal(err)
	}
	dir := pluginDir(t, "alpha")
	_, err := pluginhost.Load(context.Background(), pluginhost.Options{
		Dir: dir, Registry: reg, Settings: func(string) map[string]string { return providertest.FakeSettings() },
	})
	var dup *idp.DuplicateError
	if !errors.As(err, &dup) || !strings.Contains(err.Error(), "Service:ExternalAuth:Oidc:0") || !strings.Contains(err.Error(), pluginhost.FilePrefix+"alpha") {
		t.Errorf("Load() = %v; want a DuplicateError naming both", err)
	}
}

// An unconfigured plugin whose code a built-in provider holds does not
// stop the load: the built-in one is meant, the plugin stays out of the
// registry and is listed by Plugins as unconfigured.
func TestUnconfiguredPluginYieldsItsCode(t *testing.T) {
	t.Parallel()
	reg := idp.NewRegistry()
	builtin := providertest.NewFake("alpha")
	if err := reg.Register("alpha", builtin, idp.BuiltinSource("Service:ExternalAuth:Oidc:0")); err != nil {
		t.Fatal(err)
	}
	h, err := pluginhost.Load(context.Background(), pluginhost.Options{Dir: pluginDir(t, "alpha"), Registry: reg})
	if err != nil {
		t.Fatalf("Load() = %v; want the unconfigured plugin to yield its code", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if e, _ := reg.Get("alpha"); e.Provider != builtin || e.Source.Kind != idp.Builtin || reg.Len() != 1 {
		t.Errorf("registry alpha = %+v (%d entries); want the built-in provider only", e, reg.Len())
	}
	if p := h.Plugins(); len(p) != 1 || p[0].State != pluginhost.Unconfigured || p[0].PID != 0 {
		t.Errorf("Plugins() = %+v; want alpha unconfigured, not running", p)
	}
}

func TestMissingFolderHoldsNoPlugins(t *testing.T) {
	t.Parallel()
	e := load(t, filepath.Join(t.TempDir(), "absent"), nil)
	if e.reg.Len() != 0 || len(e.host.Plugins()) != 0 {
		t.Errorf("plugins from a missing folder: %+v", e.host.Plugins())
	}
	if w := e.log.lines("[WARN]"); len(w) != 0 {
		t.Errorf("the default plugin folder is missing: want no warning, got %q", w)
	}
}

func TestCallDeadline(t *testing.T) {
	t.Parallel()
	e := load(t, pluginDir(t, "alpha"), func(o *pluginhost.Options) { o.CallTimeout = 500 * time.Millisecond })
	p := provider(t, e.reg, "alpha")
	pid := e.info(t, "alpha").PID
	start := time.Now()
	_, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "hang"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exchange of a hanging plugin = %v; want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 3*time.Second {
		t.Errorf("Exchange of a hanging plugin returned after %v; want about 500 ms", d)
	}
	// A slow call is not a crash: same process, still serving.
	if _, err := p.AuthorizeURL(context.Background(), authorizeReq("after")); err != nil {
		t.Errorf("AuthorizeURL after a timeout = %v", err)
	}
	if got := e.info(t, "alpha").PID; got != pid {
		t.Errorf("pid changed %d → %d after a timeout", pid, got)
	}
}

// Not parallel: it sets an environment variable of the host process.
func TestPluginGetsNoHostEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	marker := "marker-" + rand.Text()
	t.Setenv("ADMINKERNEL_TEST_MARKER", marker)
	t.Setenv("Service__Database__ConnectionString", "postgres://kernel:"+marker+"@db/kernel")
	secret := "client-secret-" + rand.Text()
	e := load(t, pluginDir(t, "alpha"), func(o *pluginhost.Options) {
		o.Settings = func(string) map[string]string {
			return map[string]string{"ClientId": "id-from-settings", "ClientSecret": secret}
		}
	})
	pid := e.info(t, "alpha").PID
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		grpcprovider.Handshake.MagicCookieKey: true, "PLUGIN_MIN_PORT": true, "PLUGIN_MAX_PORT": true,
		"PLUGIN_PROTOCOL_VERSIONS": true, "PLUGIN_CLIENT_CERT": true,
	}
	for _, kv := range strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		if !allowed[name] {
			t.Errorf("plugin environment holds %s", name)
		}
		if strings.Contains(kv, marker) || strings.Contains(kv, secret) {
			t.Errorf("plugin environment leaks a host value: %.40s…", kv)
		}
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), secret) || strings.Contains(string(cmdline), "id-from-settings") {
		t.Error("plugin argv carries settings")
	}
	// The settings did arrive, over the RPC.
	auth, err := provider(t, e.reg, "alpha").AuthorizeURL(context.Background(), authorizeReq("env"))
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(auth.URL); u == nil || u.Query().Get("client_id") != "id-from-settings" {
		t.Errorf("AuthorizeURL() = %q; want client_id from the settings", auth.URL)
	}
}

// A host killed with SIGKILL leaves no plugin process behind.
func TestNoPluginSurvivesAKilledHost(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signal and /proc are Linux")
	}
	dir := pluginDir(t, "alpha", "beta")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe)
	child.Env = append(os.Environ(), childHostEnv+"="+dir)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	lines := bufio.NewScanner(out)
	var pids []int
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "PIDS "); ok {
			for _, f := range strings.Fields(rest) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			break
		}
		t.Logf("child: %s", lines.Text())
	}
	if len(pids) != 2 {
		t.Fatalf("child host reported plugin pids %v, want 2", pids)
	}
	for _, pid := range pids {
		if !running(pid) {
			t.Fatalf("plugin %d is not running before the kill", pid)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for _, pid := range pids {
		poll.Until(t, 10*time.Second, "plugin "+strconv.Itoa(pid)+" to die with its host", func() bool { return !running(pid) })
	}
}

func writeFile(t testing.TB, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
