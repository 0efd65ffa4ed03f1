package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100
// on every Linux architecture Go supports).
const clockTicks = 100

// server is a child process started by compare.
type server struct {
	name    string
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:port
	log     *os.File
	started time.Time
	done    chan struct{}
	waitErr error
}

// freePort asks the kernel for a free loopback port.
func freePort(ctx context.Context) (int, error) {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		return 0, err
	}
	return port, nil
}

// startServer starts bin with args and env, its output appended to logPath.
// The child gets its own process group so that a forced stop also reaches
// anything it started (plugin processes).
func startServer(name, bin string, args, env []string, port int, logPath string) (*server, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(lf, "\n==== %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	// Not CommandContext: stop ends the server gracefully (SIGTERM, then
	// the process group), which a cancelled context's SIGKILL would skip.
	// G204: bin is one of the binaries compare built into <out>/bin.
	//nolint:gosec,noctx // a binary built here, stopped by stop (see above)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &server{name: name, cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: lf, done: make(chan struct{})}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("starting %s: %w", name, err), lf.Close())
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// waitReady polls path until it answers 200 and returns the time since the
// process was started.
func (s *server) waitReady(ctx context.Context, path string, timeout time.Duration) (time.Duration, error) {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		if s.exited() {
			if s.waitErr == nil {
				return 0, fmt.Errorf("%s exited before answering (exit status 0); see %s", s.name, s.log.Name())
			}
			return 0, fmt.Errorf("%s exited before answering (%w); see %s", s.name, s.waitErr, s.log.Name())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(s.started), nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s did not answer %s with 200 within %s (last error %w); see %s", s.name, path, timeout, err, s.log.Name())
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop sends SIGTERM, waits up to 15 s, then kills the process group.
// It returns how long the graceful stop took.
func (s *server) stop() time.Duration {
	if s == nil {
		return 0
	}
	defer func() {
		if err := s.log.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			logf("closing %s: %v", s.log.Name(), err)
		}
	}()
	if s.exited() {
		return 0
	}
	t0 := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return time.Since(t0)
	case <-time.After(15 * time.Second):
	}
	_ = syscall.Kill(-s.pid(), syscall.SIGKILL)
	<-s.done
	return time.Since(t0)
}

// cpuSeconds returns user+system CPU seconds of pid from /proc.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may contain spaces: fields start after the last ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(raw[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (ut + st) / clockTicks, nil
}

// memKB returns VmRSS and VmHWM of pid in kB.
func memKB(pid int) (rss, hwm int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, nil
}
