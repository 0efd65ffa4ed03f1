package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// adminPassword is the seeded super-admin's password in the scale database.
const adminPassword = "Scale-Admin-Pass-1"

// kernel is a kernel process started by scale.
type kernel struct {
	cmd  *exec.Cmd
	base string
	log  *os.File
	done chan struct{}
	err  error
}

func freePort(ctx context.Context) (int, error) {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// startKernel starts the kernel binary on t with Redis as its cache and the
// SQL log on (Info, JSON lines) in logPath, and waits for /health/ready.
func startKernel(ctx context.Context, o options, t *target, logPath string, extra ...string) (*kernel, error) {
	port, err := freePort(ctx)
	if err != nil {
		return nil, err
	}
	content, err := os.MkdirTemp("", "ak-scale-")
	if err != nil {
		return nil, err
	}
	dbType := map[string]string{"postgres": "PostgreSQL", "mysql": "MySql", "sqlite": "Sqlite"}[t.kind]
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "service__") || strings.HasPrefix(lk, "api__") || strings.HasPrefix(lk, "logging__") || strings.HasPrefix(lk, "adminkernel_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		fmt.Sprintf("Service__Http__ListenAddress=http://127.0.0.1:%d", port),
		"Service__Database__DbType="+dbType,
		"Service__Database__ConnectionString="+t.dsn,
		"Service__Database__SqlLog__Enabled=true",
		"Logging__Format=json",
		"Service__Seed__AdminPassword="+adminPassword,
	)
	if t.kind == "sqlite" {
		// One replica on its own file: the in-process cache, as the
		// embedded default runs.
		env = append(env, "Service__Cache__Provider=")
	} else {
		env = append(env,
			"Service__Cache__Provider=Redis",
			"Service__Cache__Redis__Address="+o.redis,
			"Service__Cache__Redis__KeyPrefix="+fmt.Sprintf("ak-scale-%s-%d:", t.kind, time.Now().UnixNano()),
		)
	}
	env = append(env, extra...)
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	//nolint:gosec,noctx // the kernel binary built by scale; stopped by stop
	cmd := exec.Command(o.bin, "serve", "--environment", "Development", "--content-root", content)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	k := &kernel{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: lf, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(err, lf.Close())
	}
	go func() { k.err = cmd.Wait(); close(k.done) }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(5 * time.Minute) // the first start migrates and seeds
	for {
		select {
		case <-k.done:
			return nil, fmt.Errorf("the kernel exited (%w); see %s", k.err, logPath)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, k.base+"/health/ready", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return k, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			k.stop()
			return nil, fmt.Errorf("the kernel did not become ready; see %s", logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (k *kernel) stop() {
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
	}
	_ = k.log.Close()
}
