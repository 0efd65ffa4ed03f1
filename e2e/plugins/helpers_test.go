package plugins_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/internal/vendortest"
)

const (
	base        = "/api/v1/auth/external"
	callbackURL = "https://kernel.example.com"
	filePrefix  = "adminkernel-provider-"
	desktopUA   = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0 Safari/537.36"
)

// buildPlugins builds the four vendor plugins and the SDK's test plugin
// (installed as acme and chatty) into a fresh folder with one go build
// for the vendors.
func buildPlugins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	const mod = "github.com/adminkernel/kernel/"
	args := []string{"build", "-o", dir + string(os.PathSeparator)}
	for _, p := range []string{"enterprisechat", "teamchat", "codehost", "socialchat"} {
		code := map[string]string{"enterprisechat": "enterprise_chat", "teamchat": "team_chat", "codehost": "code_host", "socialchat": "social_chat"}[p]
		args = append(args, mod+"plugins/"+p+"/cmd/"+filePrefix+code)
	}
	run := func(args ...string) {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(args...)
	run("build", "-o", filepath.Join(dir, filePrefix+"acme"), mod+"pluginsdk/internal/testplugin")
	b, err := os.ReadFile(filepath.Join(dir, filePrefix+"acme"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filePrefix+"chatty"), b, 0o755); err != nil { //nolint:gosec // a plugin binary must be executable
		t.Fatal(err)
	}
	return dir
}

// browser keeps cookies like a browser and talks to the kernel in process.
type browser struct {
	*kerneltest.Jar
	t *testing.T
	k *kerneltest.Kernel
}

// newBrowser returns a browser whose failures are reported on t.
func newBrowser(t *testing.T, k *kerneltest.Kernel) *browser {
	kk := *k
	kk.T = t
	return &browser{Jar: kk.NewJar(), t: t, k: &kk}
}

func (b *browser) send(method, target, token, body string) kerneltest.Reply {
	b.t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Header.Set("User-Agent", desktopUA)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r := b.Send(req)
	if r.Status >= 500 {
		b.t.Errorf("%s %s answered HTTP %d: %s", method, target, r.Status, r.Raw)
	}
	return r
}

// authorize starts a login and returns the vendor's authorization URL.
func (b *browser) authorize(code string) string {
	b.t.Helper()
	r := b.send("GET", base+"/"+code+"/authorize", "", "")
	if r.Status != http.StatusFound {
		b.t.Fatalf("authorize %s = HTTP %d %s, want 302", code, r.Status, r.Raw)
	}
	return r.Header.Get("Location")
}

// vendor plays the user at the fake vendor's page: it returns where the
// vendor sends the browser back (the kernel's callback with the vendor's
// code parameter and the state).
func (b *browser) vendor(code, authorizeURL string) *url.URL {
	b.t.Helper()
	cb := vendortest.Follow(b.t, authorizeURL)
	if want := callbackURL + base + "/" + code + "/callback"; cb.Scheme+"://"+cb.Host+cb.Path != want {
		b.t.Fatalf("the vendor sent the browser to %s, want %s", cb, want)
	}
	return cb
}

// callback brings the vendor's redirect to the kernel and returns the
// frontend result URL it redirects to.
func (b *browser) callback(cb *url.URL) *url.URL {
	b.t.Helper()
	return result(b.t, b.send("GET", cb.Path+"?"+cb.RawQuery, "", ""))
}

// sso runs authorize → vendor page → callback.
func (b *browser) sso(code string) *url.URL {
	b.t.Helper()
	return b.callback(b.vendor(code, b.authorize(code)))
}

// exchange redeems a ticket with the browser's ticket cookie.
func (b *browser) exchange(ticket string) kerneltest.Tokens {
	b.t.Helper()
	var tk kerneltest.Tokens
	b.send("POST", base+"/exchange", "", `{"ticket":"`+ticket+`"}`).Expect(b.t, "exchange", 200, 0).Decode(b.t, &tk)
	return tk
}

// login runs a whole login that must end in a ticket, exchanges it, pings
// with the access token and checks the session; it returns the tokens.
func (b *browser) login(code string) kerneltest.Tokens {
	b.t.Helper()
	res := b.sso(code)
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		b.t.Fatalf("%s login ended in %s, want a ticket; kernel log about it:\n%s", code, res, b.logAbout(code))
	}
	tk := b.exchange(ticket)
	b.pingAndSession(tk)
	return tk
}

// pingAndSession checks that the access token works and that its user
// has a live session.
func (b *browser) pingAndSession(tk kerneltest.Tokens) {
	b.t.Helper()
	b.send("GET", "/api/v1/ping", tk.AccessToken, "").Expect(b.t, "ping with the SSO access token", 200, 0)
	n := b.k.Ent().SysSession.Query().Where(syssession.UserID(tk.UserID), syssession.RevokedAtIsNil()).CountX(context.Background())
	if n == 0 {
		b.t.Errorf("user %d has no live session after the external login", tk.UserID)
	}
}

// logAbout returns the kernel's log lines that mention code.
func (b *browser) logAbout(code string) string {
	var out []string
	for _, line := range strings.Split(b.k.Log(), "\n") {
		if strings.Contains(line, code) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// result checks that r is the kernel's redirect to the frontend result
// page and returns its URL.
func result(t *testing.T, r kerneltest.Reply) *url.URL {
	t.Helper()
	if r.Status != http.StatusFound {
		t.Fatalf("callback = HTTP %d %s, want a 302 to the result page", r.Status, r.Raw)
	}
	u, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/oauth/callback" {
		t.Fatalf("callback redirected to %s, want the result page /oauth/callback", u)
	}
	return u
}

// pidOf is the live process of the plugin at dir/adminkernel-provider-code
// that this test process started, 0 when there is none.
func pidOf(dir, code string) int {
	want := filepath.Join(dir, filePrefix+code)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" || f[1] != strconv.Itoa(self) {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if argv0, _, _ := strings.Cut(string(cmd), "\x00"); argv0 == want {
			return pid
		}
	}
	return 0
}

// kill sends SIGKILL to the plugin of code and returns its pid.
func kill(t *testing.T, dir, code string) int {
	t.Helper()
	pid := pidOf(dir, code)
	if pid == 0 {
		t.Fatalf("no running plugin %s", code)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return pid
}

// procStatusKiB reads a "Vm...:  N kB" line of /proc/<pid>/status.
func procStatusKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // opened read-only: nothing to flush
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s of %d: %q", field, pid, rest)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
