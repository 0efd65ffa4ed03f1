package pluginhost_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// pluginBin is the test plugin (pluginsdk/internal/testplugin), built once
// by TestMain. Installed as adminkernel-provider-<code> it reports <code>.
var pluginBin string

// childHostEnv makes the test binary act as a host (see runChildHost).
const childHostEnv = "PLUGINHOST_TEST_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childHostEnv); dir != "" {
		runChildHost(dir)
		return
	}
	tmp, err := os.MkdirTemp("", "pluginhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin = filepath.Join(tmp, "testplugin")
	build := exec.Command("go", "build", "-o", pluginBin, "github.com/adminkernel/kernel/pluginsdk/internal/testplugin")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test plugin:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

// runChildHost loads the plugins of dir, prints "PIDS <pid> ..." and waits
// to be killed.
func runChildHost(dir string) {
	h, err := pluginhost.Load(context.Background(), pluginhost.Options{
		Dir:      dir,
		Settings: func(string) map[string]string { return providertest.FakeSettings() },
		Registry: idp.NewRegistry(),
	})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	var pids []string
	for _, p := range h.Plugins() {
		pids = append(pids, strconv.Itoa(p.PID))
	}
	fmt.Println("PIDS", strings.Join(pids, " "))
	select {}
}

// install copies the test plugin into dir as adminkernel-provider-<code>.
func install(t testing.TB, dir, code string) string {
	t.Helper()
	path := filepath.Join(dir, pluginhost.FilePrefix+code)
	copyFile(t, pluginBin, path)
	return path
}

// copyFile installs from at to: a hard link when the file system allows
// one, else a copy. A copy is written through a descriptor of this process,
// and a plugin launched by a parallel test can inherit it between fork and
// exec: executing the copy then fails with ETXTBSY (go.dev/issue/22315),
// which a hard link to the binary written by go build never does.
func copyFile(t testing.TB, from, to string) {
	t.Helper()
	if os.Link(from, to) == nil {
		return
	}
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = src.Close() }()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func pluginDir(t testing.TB, codes ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range codes {
		install(t, dir, c)
	}
	return dir
}

func sha256File(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// logBuf collects the host's log.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines returns the log lines containing every one of subs.
func (l *logBuf) lines(subs ...string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
next:
	for sc.Scan() {
		for _, s := range subs {
			if !strings.Contains(sc.Text(), s) {
				continue next
			}
		}
		out = append(out, sc.Text())
	}
	return out
}

type env struct {
	host *pluginhost.Host
	reg  *idp.Registry
	log  *logBuf
	dir  string
}

// load runs Load on dir with the fake's settings for every code; tweak
// adjusts the options.
func load(t testing.TB, dir string, tweak func(*pluginhost.Options)) env {
	t.Helper()
	e := env{reg: idp.NewRegistry(), log: &logBuf{}, dir: dir}
	opts := pluginhost.Options{
		Dir:      dir,
		Settings: func(string) map[string]string { return providertest.FakeSettings() },
		Logger:   hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: e.log}),
		Registry: e.reg,
	}
	if tweak != nil {
		tweak(&opts)
	}
	h, err := pluginhost.Load(context.Background(), opts)
	if err != nil {
		t.Fatalf("Load() = %v\nlog:\n%s", err, e.log)
	}
	e.host = h
	t.Cleanup(func() { _ = h.Close() })
	return e
}

func (e env) info(t testing.TB, code string) pluginhost.Info {
	t.Helper()
	for _, p := range e.host.Plugins() {
		if p.Code == code {
			return p
		}
	}
	t.Fatalf("no plugin %q in %+v", code, e.host.Plugins())
	return pluginhost.Info{}
}

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}
