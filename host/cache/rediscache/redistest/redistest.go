// Package redistest runs a private, disposable Redis server for tests that
// stop and restart it (outage and recovery): redis-server on a free
// loopback port, without persistence, as a child process of the test. The
// binary is found on PATH or at ADMINKERNEL_TEST_REDIS_SERVER; a missing
// binary fails the test.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvServer names the redis-server binary when it is not on PATH.
const EnvServer = "ADMINKERNEL_TEST_REDIS_SERVER"

// Server is a running (or stopped) private Redis.
type Server struct {
	// Addr is 127.0.0.1:<port>; it stays the same across restarts.
	Addr string

	t    testing.TB
	bin  string
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts a server on a free port and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvServer)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			t.Fatalf("redistest: redis-server is not on PATH (install it or set %s): %v", EnvServer, err)
		}
	}
	port := freePort(t)
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), t: t, bin: bin, port: port}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// Restart starts the server again (empty: nothing is persisted) on the same
// port and waits until it answers PING. Starting a running server is a
// no-op.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := &bytes.Buffer{}
		// Not CommandContext: the server lives until Stop (a test cleanup),
		// which runs after the test's context is cancelled. G204: s.bin is
		// redis-server from PATH or from EnvServer, set by whoever runs the
		// tests.
		//nolint:gosec,noctx // outlives the test's context; the operator's redis-server (see above)
		cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no")
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			s.t.Fatalf("redistest: start %s: %v", s.bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if ping(s.Addr, exited, deadline) {
			s.cmd, s.exited = cmd, exited
			return
		}
		_ = cmd.Process.Kill()
		<-exited
		// The port may still be in TIME_WAIT from the previous run.
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: redis-server on port %d did not answer:\n%s", s.port, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ping waits until the server answers PING, it exits, or the deadline.
func ping(addr string, exited <-chan struct{}, deadline time.Time) bool {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	d := &net.Dialer{Timeout: 200 * time.Millisecond}
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			n, _ := c.Read(buf)
			_ = c.Close() // a probe: its answer is already read
			if bytes.HasPrefix(buf[:n], []byte("+PONG")) {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// Stop kills the server (SIGKILL: an abrupt outage) and waits until its
// port refuses connections. Stopping a stopped server is a no-op.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		c, err := (&net.Dialer{Timeout: 100 * time.Millisecond}).DialContext(ctx, "tcp", s.Addr)
		if err != nil {
			return
		}
		_ = c.Close() // a probe: only whether it connected matters
		time.Sleep(20 * time.Millisecond)
	}
}

// Pause stops the server process (SIGSTOP): connections stay open but
// nothing is answered, as in a network partition that keeps TCP alive.
// Resume continues it. Pausing a stopped server is a no-op.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Errorf("redistest: signal %v: %v", sig, err)
	}
}

// String describes the server.
func (s *Server) String() string { return fmt.Sprintf("redis-server %s", s.Addr) }
