package firstapp_test

// The markers of docs/developers/first-app.md, each an HTML comment on the
// line right before a fenced block:
//
//	<!-- run -->           the ```sh block runs with bash -euo pipefail
//	<!-- file: PATH -->    the ```go block is written to PATH (relative to
//	                       the current folder)
//	<!-- serve -->         the ```sh block starts a server: it runs in the
//	                       background until /health/ready answers 200 on
//	                       the address the test sets
//	                       (Service__Http__ListenAddress), is probed, then
//	                       stopped with SIGTERM before the next block
//	<!-- run-local: CMD --> CMD runs instead of the block (it replaces a step
//	                       that needs the network, such as go get, with its
//	                       local equivalent; $KERNEL is the repository root)
//
// Unmarked blocks are illustrations and are not run. The current folder
// and the exported variables carry over from one block to the next, as in
// one terminal. A block that fails fails the test.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"
)

type block struct {
	kind string // run, file, serve, run-local
	arg  string // the file's path, the run-local command
	code string
	line int
}

var marker = regexp.MustCompile(`^<!-- (run|serve|file: ([^ ]+)|run-local: (.+)) -->$`)

// blocks returns the marked blocks of a Markdown page, in order.
func blocks(t *testing.T, page string) []block {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var pending *block
	var cur *block
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(text))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = b.String()
			out = append(out, *cur)
			cur = nil
			b.Reset()
		case cur != nil:
			b.WriteString(line + "\n")
		case pending != nil:
			want := "```sh"
			if pending.kind == "file" {
				want = "```go"
			}
			if line != want {
				t.Fatalf("%s:%d: a %s marker must be followed by a %s fence, not %q", page, n-1, pending.kind, want, line)
			}
			cur, pending = pending, nil
		case marker.MatchString(line):
			m := marker.FindStringSubmatch(line)
			switch {
			case m[2] != "":
				pending = &block{kind: "file", arg: m[2], line: n}
			case m[3] != "":
				pending = &block{kind: "run-local", arg: m[3], line: n}
			default:
				pending = &block{kind: m[1], line: n}
			}
		case strings.HasPrefix(line, "<!-- run") || strings.HasPrefix(line, "<!-- serve") || strings.HasPrefix(line, "<!-- file"):
			t.Fatalf("%s:%d: malformed marker %q", page, n, line)
		}
	}
	if cur != nil || pending != nil {
		t.Fatalf("%s: a marked block is not closed", page)
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// TestFirstAppTutorial runs the page from an empty folder to a Production
// binary serving the generated module.
func TestFirstAppTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves an application from scratch; not with -short")
	}
	root := repoRoot(t)
	page := filepath.Join(root, "docs", "developers", "first-app.md")
	bs := blocks(t, page)
	kinds := map[string]int{}
	for _, b := range bs {
		kinds[b.kind]++
	}
	if kinds["run"] < 4 || kinds["file"] != 1 || kinds["serve"] != 2 || kinds["run-local"] != 1 {
		t.Fatalf("%s: marked blocks %v, want the tutorial's steps (at least 4 run, 1 file, 2 serve, 1 run-local)", page, kinds)
	}

	dir := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(state+".cwd", []byte(dir), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "KERNEL="+root,
		"Service__Http__ListenAddress="+base, "ADMINKERNEL_ENVIRONMENT=")
	// script wraps a block: the folder and the exported variables of the
	// previous block in, this block's out.
	script := func(code string) string {
		return fmt.Sprintf("set -euo pipefail\n[ -f %[1]s.env ] && . %[1]s.env\ncd \"$(cat %[1]s.cwd)\"\n"+
			"trap 'pwd > %[1]s.cwd; export -p | grep -v -e \" PWD=\" -e \" OLDPWD=\" -e \" SHLVL=\" > %[1]s.env' EXIT\n%[2]s", state, code)
	}
	var log strings.Builder
	cwd := func() string {
		b, err := os.ReadFile(state + ".cwd")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	for _, b := range bs {
		start := time.Now()
		switch b.kind {
		case "file":
			path := filepath.Join(cwd(), filepath.FromSlash(b.arg))
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.code), 0o600); err != nil {
				t.Fatal(err)
			}
		case "run", "run-local":
			code := b.code
			if b.kind == "run-local" {
				code = b.arg + "\n"
			}
			cmd := exec.CommandContext(t.Context(), "bash", "-c", script(code)) //nolint:gosec // the page's own blocks
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			log.Write(out)
			if err != nil {
				t.Fatalf("first-app.md:%d: the block failed: %v\n%s\n--- output:\n%s", b.line, err, code, out)
			}
		case "serve":
			serve(t, script(b.code), cwd(), env, base, b, &log)
		}
		t.Logf("first-app.md:%d %s: %s", b.line, b.kind, time.Since(start).Round(time.Millisecond))
	}
	out := log.String()
	for _, want := range []string{"ok  \texample.com/myapp/warehouse", "module tables created or extended: warehouses"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tutorial's output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "myapp", "deploy", "data", "superadmin-password.txt")); err != nil {
		t.Errorf("the Production start wrote no super-admin password file: %v", err)
	}
}

// serve runs a serve block until the kernel is ready, probes it and stops
// it.
func serve(t *testing.T, script, cwd string, env []string, base string, b block, log *strings.Builder) {
	t.Helper()
	// Written by the process's copy goroutines while the test reads it.
	out := &syncbuf.Buffer{}
	cmd := exec.Command("bash", "-c", script) //nolint:gosec // the page's own block
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case err := <-done:
			_ = err // the server was asked to stop: its exit status says nothing
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			if err := <-done; err != nil {
				t.Logf("killed after 30 s: %v", err)
			}
		}
		log.WriteString(out.String())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("first-app.md:%d: the server exited before it was ready: %v\n%s", b.line, err, out.String())
		case <-ctx.Done():
			stop()
			t.Fatalf("first-app.md:%d: not ready in time\n%s", b.line, out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer stop()
	// The console answers its page path, and the module is served: the
	// super-admin (its generated password from the Production file or the
	// Development log) reads the resource's description, creates a row and
	// finds it in the page.
	if code, _ := call(t, base, "GET", "/r/warehouse", "", nil); code != 200 {
		t.Errorf("first-app.md:%d: GET /r/warehouse = %d, want the console", b.line, code)
	}
	text := out.String()
	if file, err := os.ReadFile(filepath.Join(cwd, "data", "superadmin-password.txt")); err == nil {
		text = string(file)
	}
	m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("first-app.md:%d: no generated super-admin password in the data folder or the log:\n%s", b.line, out.String())
	}
	var login struct {
		Data struct {
			AccessToken string `json:"accessToken"`
		} `json:"data"`
	}
	if code, body := call(t, base, "POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": m[1]}); code != 200 ||
		json.Unmarshal(body, &login) != nil || login.Data.AccessToken == "" {
		t.Fatalf("first-app.md:%d: login = %d %s", b.line, code, body)
	}
	tok := login.Data.AccessToken
	var desc struct {
		Data struct {
			Base  string            `json:"base"`
			Label map[string]string `json:"label"`
		} `json:"data"`
	}
	if code, body := call(t, base, "GET", "/api/v1/sys/resource/warehouse/schema", tok, nil); code != 200 ||
		json.Unmarshal(body, &desc) != nil || desc.Data.Base != "/api/v1/warehouse" || desc.Data.Label["en-US"] != "Warehouse" {
		t.Fatalf("first-app.md:%d: the description = %d %s", b.line, code, body)
	}
	sku := fmt.Sprintf("W-%d", b.line)
	if code, body := call(t, base, "POST", "/api/v1/warehouse", tok, map[string]any{"sku": sku, "qty": 3, "site": 4, "kind": "a"}); code != 200 ||
		!bytes.Contains(body, []byte(`"code":0`)) {
		t.Fatalf("first-app.md:%d: create = %d %s", b.line, code, body)
	}
	var page struct {
		Data struct {
			Total int              `json:"total"`
			Items []map[string]any `json:"items"`
		} `json:"data"`
	}
	if code, body := call(t, base, "GET", "/api/v1/warehouse/page?sku="+sku, tok, nil); code != 200 || json.Unmarshal(body, &page) != nil ||
		page.Data.Total != 1 || page.Data.Items[0]["sku"] != sku || page.Data.Items[0]["qty"] != 3.0 {
		t.Fatalf("first-app.md:%d: page = %d %s", b.line, code, body)
	}
}

// call sends one request to the running application.
func call(t *testing.T, base, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}
