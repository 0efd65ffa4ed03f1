package netcut_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/netcut"
)

// echo serves a line echo on a loopback port.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) (net.Conn, error) {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second}
	return d.DialContext(context.Background(), "tcp", addr)
}

func roundTrip(c net.Conn, msg string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return line, err
}

func TestCutAndRestore(t *testing.T) {
	p := netcut.Start(t, echo(t))
	c, err := dial(t, p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if got, err := roundTrip(c, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	if n := p.Conns(); n != 1 {
		t.Fatalf("Conns = %d, want 1", n)
	}

	p.Cut()
	if _, err := roundTrip(c, "again"); err == nil {
		t.Fatal("a connection survived the cut")
	}
	if _, err := dial(t, p.Addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while cut: %v, want connection refused", err)
	}

	p.Restore()
	c2, err := dial(t, p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c2.Close() }()
	if got, err := roundTrip(c2, "back"); err != nil || got != "back\n" {
		t.Fatalf("after the restore: %q %v", got, err)
	}
}
