package host_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest"
)

// A connection that was opened and never sent a request (a load
// balancer's pre-connect, a client pool's dial race) does not hold the
// graceful shutdown until Service:Http:ShutdownTimeoutSeconds: fasthttp
// counts it as active, so the kernel closes it; a keep-alive connection
// between two requests is closed as idle. Both end within a second or two,
// and the shutdown reports no error.
func TestShutdownClosesSilentConnections(t *testing.T) {
	const timeout = 8 * time.Second
	k := kerneltest.Start(t, []string{"Service__Http__ShutdownTimeoutSeconds=8"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.ServeListener(ctx, ln) }()

	dial := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	silent := dial()
	kept := dial()
	if _, err := io.WriteString(kept, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(kept)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health: HTTP %d", resp.StatusCode)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown with a silent connection open: %v", err)
		}
	case <-time.After(timeout + 2*time.Second):
		t.Fatal("ServeListener did not return")
	}
	took := time.Since(start)
	if took >= timeout/2 {
		t.Errorf("shutdown took %s with a silent connection open, want well under the %s timeout", took, timeout)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "keep-alive": kept} {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if n, err := c.Read(make([]byte, 1)); err == nil || n > 0 {
			t.Errorf("%s connection still open after the shutdown (read %d bytes, %v)", name, n, err)
		}
	}
	t.Logf("shutdown with a silent and a keep-alive connection open: %s", took.Round(time.Millisecond))
}
