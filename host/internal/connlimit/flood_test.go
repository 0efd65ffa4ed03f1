package connlimit_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// buildKernel builds host/cmd/adminkernel into a temporary directory.
func buildKernel(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "adminkernel")
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/adminkernel/kernel/host/cmd/adminkernel").CombinedOutput()
	if err != nil {
		t.Fatalf("go build adminkernel: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// Descriptor limit of the served process and the size of the flood: more
// idle connections than the process has descriptors.
const (
	floodFDLimit = 256
	floodConns   = 600
)

// TestServeSurvivesDescriptorExhaustion runs the real `adminkernel serve`
// under `ulimit -n 256` (soft and hard, so raising the soft limit gains
// nothing), floods it with 600 idle TCP connections from one client with
// both connection caps off (0), so that accept runs into EMFILE, and shows
// that the process stays up, then that /health answers 200 again from the
// same process once the flood is closed. Before connlimit, fasthttp's Serve
// returned the EMFILE accept error and the service exited with status 1.
func TestServeSurvivesDescriptorExhaustion(t *testing.T) {
	bin := buildKernel(t)
	dir := t.TempDir()
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" serve --environment Development --content-root "$1"`, floodFDLimit)
	cmd := exec.Command("bash", "-c", script, bin, dir)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir(),
		"Service__Http__ListenAddress=" + base,
		"Service__Http__MaxConnections=0",
		"Service__Http__MaxConnectionsPerIp=0",
		"Service__Seed__AdminPassword=Flood-test-1",
		"Service__Security__Password__Pbkdf2Iterations=100000",
	}
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start adminkernel: %v", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("log of adminkernel:\n%s", log)
		}
	})
	alive := func(when string) {
		t.Helper()
		select {
		case <-exited:
			t.Fatalf("%s: adminkernel (pid %d) exited: %v", when, pid, waitErr)
		default:
		}
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("%s: adminkernel (pid %d) is gone: %v", when, pid, err)
		}
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	healthy := func() bool {
		resp, err := client.Get(base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	poll.Until(t, 90*time.Second, "adminkernel answering /health", func() bool {
		alive("starting")
		return healthy()
	})
	if !strings.Contains(log.String(), "soft_after="+strconv.Itoa(floodFDLimit)) {
		t.Fatalf("the log does not show the descriptor limit %d:\n%s", floodFDLimit, log)
	}

	// The flood: idle connections that send nothing.
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			_ = c.Close()
		}
	}()
	dialer := net.Dialer{Timeout: 2 * time.Second}
	for range floodConns {
		c, err := dialer.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // the listen backlog is full: the flood is big enough
		}
		flood = append(flood, c)
	}
	if len(flood) <= floodFDLimit {
		t.Fatalf("only %d flood connections were established, want more than the descriptor limit %d", len(flood), floodFDLimit)
	}
	t.Logf("flood: %d idle connections against a descriptor limit of %d", len(flood), floodFDLimit)
	poll.Until(t, 30*time.Second, "the accept error logged (descriptors exhausted)", func() bool {
		alive("flooded")
		return strings.Contains(log.String(), "accepting a connection failed")
	})
	if !strings.Contains(log.String(), "too many open files") {
		t.Fatalf("the retried accept error is not EMFILE:\n%s", log)
	}
	alive("descriptors exhausted")

	for _, c := range flood {
		_ = c.Close()
	}
	flood = nil
	poll.Until(t, 60*time.Second, "/health answering 200 after the flood", func() bool {
		alive("after the flood")
		return healthy()
	})
	alive("recovered")
	if n := strings.Count(log.String(), " listening: address="); n != 1 {
		t.Fatalf("the kernel logged %d listening lines, want 1 (no restart)", n)
	}
}
