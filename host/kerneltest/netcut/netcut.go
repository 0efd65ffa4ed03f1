// Package netcut is a TCP proxy a test controls, to take a network
// dependency (a database server) away from a kernel and give it back: Cut
// closes every proxied connection and refuses new ones (connection
// refused: the listening port is closed), Restore listens again on the
// same address and forwards as before.
package netcut

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards every connection accepted on Addr to its target.
type Proxy struct {
	// Addr is the proxy's host:port (127.0.0.1, a free port).
	Addr string

	t      testing.TB
	target string

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Start listens on a free loopback port and forwards to target
// (host:port). The proxy is closed when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("netcut: listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), t: t, target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// Cut closes the listener (new connections are refused) and every proxied
// connection, both sides.
func (p *Proxy) Cut() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
}

// Restore listens on Addr again.
func (p *Proxy) Restore() {
	p.t.Helper()
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", p.Addr)
	if err != nil {
		p.t.Fatalf("netcut: listen on %s again: %v", p.Addr, err)
	}
	p.serve(ln)
}

// Conns is how many connections are being proxied now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

func (p *Proxy) close() {
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					p.t.Logf("netcut: accept: %v", err)
				}
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.forward(ln, c)
			}()
		}
	}()
}

// forward pipes c to a new connection to the target until either side
// closes or the proxy is cut.
func (p *Proxy) forward(ln net.Listener, c net.Conn) {
	up, err := new(net.Dialer).DialContext(context.Background(), "tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln != ln { // cut while dialling
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	var once sync.Once
	done := make(chan struct{})
	closeBoth := func() {
		once.Do(func() {
			_ = c.Close()
			_ = up.Close()
			close(done)
		})
	}
	go func() {
		_, _ = io.Copy(up, c)
		closeBoth()
	}()
	_, _ = io.Copy(c, up)
	closeBoth()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}
