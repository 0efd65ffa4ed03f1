package providertest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/internal/mutant"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

var (
	buildOnce sync.Once
	testBin   string
	buildErr  error
	buildOut  []byte
)

// testPlugin builds pluginsdk/internal/testplugin once per test binary and
// returns a copy named adminkernel-provider-<code> in a directory of the
// test's (the test plugin reports the code of its file name).
func testPlugin(t *testing.T, code string) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "providertest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		testBin = filepath.Join(dir, "testplugin")
		cmd := exec.Command("go", "build", "-o", testBin, "github.com/adminkernel/kernel/pluginsdk/internal/testplugin")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building the test plugin: %v\n%s", buildErr, buildOut)
	}
	b, err := os.ReadFile(testBin)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), providertest.FilePrefix+code)
	if err := os.WriteFile(path, b, 0o700); err != nil { //nolint:gosec // a plugin binary must be executable
		t.Fatal(err)
	}
	return path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testBin != "" {
		_ = os.RemoveAll(filepath.Dir(testBin))
	}
	os.Exit(code)
}

// TestLaunchTestPlugin runs the whole kit against the test plugin's binary,
// started as the kernel starts plugins.
func TestLaunchTestPlugin(t *testing.T) {
	t.Parallel()
	opts := providertest.FakeOptions("fake_bin")
	opts.WantSubject = "fake-user"
	providertest.LaunchWith(t, testPlugin(t, "fake_bin"), opts)
}

// TestLaunchSettingsOnly is Launch as a vendor without a test vendor calls
// it: settings, nothing else.
func TestLaunchSettingsOnly(t *testing.T) {
	t.Parallel()
	providertest.Launch(t, testPlugin(t, "fake_plain"), providertest.FakeSettings())
}

// The plugin runs with an empty environment, as under the kernel: a
// variable of the test's environment does not reach it (read from
// /proc/<pid>/environ of the plugin process).
func TestStartEmptyEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Setenv("PROVIDERTEST_SECRET_OF_THE_HOST", "must-not-leak")
	bin := testPlugin(t, "fake_env")
	p := providertest.Start(t, bin)
	d, err := p.Describe(t.Context())
	if err != nil || d.Code != "fake_env" {
		t.Fatalf("Describe() = %+v, %v; want code fake_env", d, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var environ []byte
	for _, c := range procs {
		if b, err := os.ReadFile(c); err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			environ, err = os.ReadFile(filepath.Join(filepath.Dir(c), "environ"))
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if environ == nil {
		t.Fatalf("no process runs %s", bin)
	}
	vars := strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
	for _, v := range vars {
		if !strings.HasPrefix(v, "PLUGIN_") && !strings.HasPrefix(v, "ADMINKERNEL_PROVIDER_PLUGIN=") {
			t.Errorf("the plugin's environment holds %q; want only go-plugin's handshake variables", v)
		}
	}
	if len(vars) == 0 {
		t.Error("the plugin's environment is empty; want go-plugin's handshake variables")
	}
}

func TestCodeOf(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/p/adminkernel-provider-acme": "acme", "adminkernel-provider-": "", "acme": "", "/x/kernel-provider-acme": "",
	} {
		if got := providertest.CodeOf(in); got != want {
			t.Errorf("CodeOf(%q) = %q, want %q", in, got, want)
		}
	}
}

const (
	mutantEnv    = "PROVIDERTEST_MUTANT"
	mutantBinEnv = "PROVIDERTEST_MUTANT_BIN"
)

// TestMutantKit is the run TestMutantsAreCaught observes: the kit against
// the mutant named by PROVIDERTEST_MUTANT, in process or (with
// PROVIDERTEST_MUTANT_BIN) as a launched binary. Without the variable it
// does nothing.
func TestMutantKit(t *testing.T) {
	kind := os.Getenv(mutantEnv)
	if kind == "" {
		t.Skip("run by TestMutantsAreCaught")
	}
	opts := providertest.FakeOptions(kind)
	opts.WantSubject = "fake-user"
	if bin := os.Getenv(mutantBinEnv); bin != "" {
		providertest.LaunchWith(t, bin, opts)
		return
	}
	providertest.Run(t, func(*testing.T) pluginsdk.Provider {
		return mutant.New(kind, providertest.NewFake(kind))
	}, opts)
}

// TestMutantsAreCaught runs the kit in a child go test against each mutant
// of the test plugin and checks that it fails, with the message of the
// rule the mutant breaks; the unmutated test plugin passes the same run.
func TestMutantsAreCaught(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("inside a mutant run")
	}
	if testing.Short() {
		t.Skip("runs go test in child processes; not with -short")
	}
	cases := []struct {
		name   string
		kind   string
		binary bool // launched as a plugin binary, else in process
		race   bool
		want   []string // all in the output; empty: the run passes
	}{
		{name: "control in process", kind: "fake_control", race: true},
		{name: "control binary", kind: "fake_control", binary: true},
		{name: "racy Configure", kind: mutant.Racy, race: true,
			want: []string{"WARNING: DATA RACE", "race detected during execution of test", "--- FAIL: TestMutantKit/Concurrency"}},
		{name: "changeable subject in process", kind: mutant.ChangeableSubject,
			want: []string{`Identity.Subject = "Fake fake-user", want "fake-user": the subject must be the vendor's stable user id`, "--- FAIL: TestMutantKit/RoundTrip"}},
		{name: "changeable subject binary", kind: mutant.ChangeableSubject, binary: true,
			want: []string{`Identity.Subject = "Fake fake-user", want "fake-user": the subject must be the vendor's stable user id`, "--- FAIL: TestMutantKit/RoundTrip"}},
		{name: "ignored context", kind: mutant.IgnoresContext,
			want: []string{"Exchange with a canceled context =", "--- FAIL: TestMutantKit/Cancellation/RealCode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"test", "-count=1", "-run", "^TestMutantKit$", "-v"}
			if c.race {
				args = append(args, "-race")
			}
			cmd := exec.Command("go", append(args, ".")...) //nolint:gosec // the go tool with fixed arguments
			cmd.Env = append(os.Environ(), mutantEnv+"="+c.kind)
			if c.binary {
				cmd.Env = append(cmd.Env, mutantBinEnv+"="+testPlugin(t, c.kind))
			}
			out, err := cmd.CombinedOutput()
			text := string(out)
			if len(c.want) == 0 {
				if err != nil || !strings.Contains(text, "--- PASS: TestMutantKit") {
					t.Fatalf("the unmutated test plugin failed the kit: %v\n%s", err, text)
				}
				return
			}
			if err == nil {
				t.Fatalf("the kit passed the %s mutant:\n%s", c.kind, text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the kit's report on the %s mutant lacks %q:\n%s", c.kind, w, text)
				}
			}
		})
	}
}

// blocking is a provider whose Exchange waits for its context to end and
// reports that it did.
type blocking struct {
	*providertest.Fake
	entered chan struct{}
	ended   chan error
}

func (b *blocking) Exchange(ctx context.Context, _ pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	close(b.entered)
	select {
	case <-ctx.Done():
		b.ended <- ctx.Err()
		return pluginsdk.ExchangeResponse{}, ctx.Err()
	case <-time.After(30 * time.Second):
		b.ended <- nil
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "the context never ended"), nil
	}
}

// Over gRPC, the end of the caller's context reaches the provider's
// context in the plugin: canceling a call under way, and a deadline that
// passes during the call.
func TestCancellationReachesThePlugin(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cancel", "deadline"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			b := &blocking{Fake: providertest.NewFake("blocking"), entered: make(chan struct{}), ended: make(chan error, 1)}
			p := providertest.InProcess(t, b)
			var ctx context.Context
			var cancel context.CancelFunc
			if mode == "cancel" {
				ctx, cancel = context.WithCancel(t.Context())
				go func() {
					<-b.entered
					cancel()
				}()
			} else {
				ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
			}
			defer cancel()
			start := time.Now()
			_, err := p.Exchange(ctx, pluginsdk.ExchangeRequest{Query: map[string]string{"code": "x"}})
			if err == nil {
				t.Fatal("Exchange with an ended context returned no error")
			}
			select {
			case perr := <-b.ended:
				if perr == nil {
					t.Fatal("the provider's context never ended")
				}
				t.Logf("the provider saw %v after %v", perr, time.Since(start).Round(time.Millisecond))
			case <-time.After(5 * time.Second):
				t.Fatal("the provider's context had not ended 5 s after the caller's")
			}
		})
	}
}
