package connlimit_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/internal/connlimit"
)

// fakeAddr is a TCP peer address.
func fakeAddr(ip string, port int) *net.TCPAddr {
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), uint16(port)))
}

// fakeConn is a connection from a given peer that records Close.
type fakeConn struct {
	net.Conn
	remote net.Addr
	mu     sync.Mutex
	closes int
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) LocalAddr() net.Addr  { return fakeAddr("127.0.0.1", 5100) }
func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes++
	return nil
}

func (c *fakeConn) closeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes
}

// step is what the fake listener's next Accept returns.
type step struct {
	conn *fakeConn
	err  error
}

// fakeListener returns its steps in order, then net.ErrClosed.
type fakeListener struct {
	mu    sync.Mutex
	steps []step
	calls int
}

func (l *fakeListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if len(l.steps) == 0 {
		return nil, net.ErrClosed
	}
	s := l.steps[0]
	l.steps = l.steps[1:]
	if s.err != nil {
		return nil, s.err
	}
	return s.conn, nil
}
func (l *fakeListener) Close() error   { return nil }
func (l *fakeListener) Addr() net.Addr { return fakeAddr("127.0.0.1", 5100) }

func from(ip string, port int) *fakeConn { return &fakeConn{remote: fakeAddr(ip, port)} }

func conns(cs ...*fakeConn) []step {
	out := make([]step, len(cs))
	for i, c := range cs {
		out[i] = step{conn: c}
	}
	return out
}

// acceptAll accepts until the fake listener is exhausted.
func acceptAll(t *testing.T, l *connlimit.Listener) []net.Conn {
	t.Helper()
	var got []net.Conn
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return got
		}
		if err != nil {
			t.Fatalf("Accept: %v", err)
		}
		got = append(got, c)
	}
}

func logger(buf *syncbuf.Buffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Info})
}

func TestShedding(t *testing.T) {
	a1, a2, a3 := from("10.0.0.1", 1), from("10.0.0.1", 2), from("10.0.0.1", 3)
	b1 := from("10.0.0.2", 1)
	p1, p2, p3 := from("10.9.0.1", 1), from("10.9.0.1", 2), from("10.9.0.1", 3)
	mapped := from("::ffff:10.0.0.1", 4)
	tests := []struct {
		name     string
		opts     connlimit.Options
		in       []*fakeConn
		accepted []*fakeConn
		shedLog  string
	}{
		{
			name:     "per IP: the third connection of one peer is shed, another peer passes",
			opts:     connlimit.Options{MaxPerIP: 2},
			in:       []*fakeConn{a1, a2, a3, b1},
			accepted: []*fakeConn{a1, a2, b1},
			shedLog:  "Service:Http:MaxConnectionsPerIp",
		},
		{
			name:     "per IP: an IPv4-mapped IPv6 peer counts as its IPv4 address",
			opts:     connlimit.Options{MaxPerIP: 1},
			in:       []*fakeConn{a1, mapped},
			accepted: []*fakeConn{a1},
			shedLog:  "Service:Http:MaxConnectionsPerIp",
		},
		{
			name: "per IP: an exempt peer (trusted proxy) is not capped",
			opts: connlimit.Options{MaxPerIP: 1, Exempt: func(ip netip.Addr) bool {
				return ip == netip.MustParseAddr("10.9.0.1")
			}},
			in:       []*fakeConn{p1, p2, p3, a1, a2},
			accepted: []*fakeConn{p1, p2, p3, a1},
			shedLog:  "Service:Http:MaxConnectionsPerIp",
		},
		{
			name:     "overall: beyond MaxConns every peer is shed",
			opts:     connlimit.Options{MaxConns: 2},
			in:       []*fakeConn{a1, b1, p1, a2},
			accepted: []*fakeConn{a1, b1},
			shedLog:  "Service:Http:MaxConnections",
		},
		{
			name: "overall applies to exempt peers too",
			opts: connlimit.Options{MaxConns: 2, MaxPerIP: 1, Exempt: func(netip.Addr) bool { return true }},
			in:   []*fakeConn{p1, p2, p3},
			// p3 is shed by the overall cap although exempt from the per-IP one.
			accepted: []*fakeConn{p1, p2},
			shedLog:  "Service:Http:MaxConnections",
		},
		{
			name:     "0 is unlimited",
			opts:     connlimit.Options{},
			in:       []*fakeConn{a1, a2, a3, b1},
			accepted: []*fakeConn{a1, a2, a3, b1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf syncbuf.Buffer
			tt.opts.Log = logger(&buf)
			in := make([]*fakeConn, len(tt.in))
			for i, c := range tt.in {
				in[i] = &fakeConn{remote: c.remote}
			}
			l := connlimit.Wrap(&fakeListener{steps: conns(in...)}, tt.opts)
			got := acceptAll(t, l)
			if len(got) != len(tt.accepted) {
				t.Fatalf("accepted %d connections, want %d", len(got), len(tt.accepted))
			}
			for i, c := range got {
				if c.RemoteAddr().String() != tt.accepted[i].remote.String() {
					t.Errorf("accepted #%d from %s, want %s", i, c.RemoteAddr(), tt.accepted[i].remote)
				}
			}
			wantShed := len(tt.in) - len(tt.accepted)
			if l.Shed() != int64(wantShed) {
				t.Errorf("Shed() = %d, want %d", l.Shed(), wantShed)
			}
			// A shed connection is closed at once; an accepted one is not.
			closed := 0
			for _, c := range in {
				closed += c.closeCount()
			}
			if closed != wantShed {
				t.Errorf("%d connections closed by the listener, want %d (the shed ones)", closed, wantShed)
			}
			if l.Open() != len(tt.accepted) {
				t.Errorf("Open() = %d, want %d", l.Open(), len(tt.accepted))
			}
			logged := strings.Contains(buf.String(), "connection shed")
			if tt.shedLog != "" && (!logged || !strings.Contains(buf.String(), tt.shedLog)) {
				t.Errorf("log %q does not name the cap %q", buf.String(), tt.shedLog)
			}
			if tt.shedLog == "" && logged {
				t.Errorf("nothing shed, but the log says %q", buf.String())
			}
		})
	}
}

func TestCloseReleasesTheSlotOnce(t *testing.T) {
	a1, a2, a3 := from("10.0.0.1", 1), from("10.0.0.1", 2), from("10.0.0.1", 3)
	fl := &fakeListener{steps: conns(a1, a2)}
	l := connlimit.Wrap(fl, connlimit.Options{MaxConns: 1, MaxPerIP: 1})
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	// a2 is shed (both caps are full), then the fake listener is exhausted.
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Accept: %v, want the listener's end", err)
	}
	if l.Shed() != 1 || a2.closeCount() != 1 {
		t.Fatalf("shed %d, a2 closed %d times; want 1 and 1", l.Shed(), a2.closeCount())
	}
	ip := netip.MustParseAddr("10.0.0.1")
	if l.Open() != 1 || l.OpenFrom(ip) != 1 {
		t.Fatalf("open %d, from the peer %d; want 1 and 1", l.Open(), l.OpenFrom(ip))
	}
	// Closing twice (fasthttp and a handler may both close) releases once.
	for range 2 {
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if a1.closeCount() != 1 {
		t.Errorf("the underlying connection was closed %d times, want 1", a1.closeCount())
	}
	if l.Open() != 0 || l.OpenFrom(ip) != 0 {
		t.Fatalf("after Close: open %d, from the peer %d; want 0 and 0", l.Open(), l.OpenFrom(ip))
	}
	// The released slot admits the next connection of the same peer.
	fl.mu.Lock()
	fl.steps = conns(a3)
	fl.mu.Unlock()
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after the release: %v", err)
	}
	if c.RemoteAddr().String() != a3.remote.String() || l.Open() != 1 {
		t.Fatalf("accepted %s with %d open, want %s with 1", c.RemoteAddr(), l.Open(), a3.remote)
	}
	// Concurrent double closes of many connections never drive the count
	// below zero.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _ = c.Close() })
	}
	wg.Wait()
	if l.Open() != 0 {
		t.Fatalf("after concurrent closes Open() = %d, want 0", l.Open())
	}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTemporaryAcceptErrorsAreRetried(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"EMFILE", emfile},
		{"ENFILE", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENFILE)}},
		{"ECONNABORTED", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}},
		{"ENOBUFS", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENOBUFS)}},
		{"ENOMEM", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENOMEM)}},
		{"timeout", timeoutErr{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const failures = 5
			want := from("10.0.0.1", 1)
			var steps []step
			for range failures {
				steps = append(steps, step{err: tt.err})
			}
			fl := &fakeListener{steps: append(steps, step{conn: want})}
			var buf syncbuf.Buffer
			l := connlimit.Wrap(fl, connlimit.Options{
				Log: logger(&buf), MinBackoff: time.Microsecond, MaxBackoff: 4 * time.Microsecond, LogEvery: time.Hour,
			})
			c, err := l.Accept()
			if err != nil {
				t.Fatalf("Accept returned %v, want the connection after the errors", err)
			}
			if c.RemoteAddr().String() != want.remote.String() {
				t.Fatalf("got a connection from %s", c.RemoteAddr())
			}
			if fl.calls != failures+1 || l.Retried() != failures {
				t.Fatalf("%d accept calls, %d retried; want %d and %d", fl.calls, l.Retried(), failures+1, failures)
			}
			// Throttled: one line for the five failures (LogEvery is an hour).
			if n := strings.Count(buf.String(), "accepting a connection failed"); n != 1 {
				t.Fatalf("%d log lines for %d failures, want 1:\n%s", n, failures, buf.String())
			}
		})
	}
}

func TestPermanentAcceptErrorsAreReturned(t *testing.T) {
	for _, err := range []error{
		net.ErrClosed,
		&net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EINVAL)},
		errors.New("something else"),
	} {
		t.Run(err.Error(), func(t *testing.T) {
			fl := &fakeListener{steps: []step{{err: err}, {conn: from("10.0.0.1", 1)}}}
			l := connlimit.Wrap(fl, connlimit.Options{})
			if _, got := l.Accept(); !errors.Is(got, err) {
				t.Fatalf("Accept: %v, want %v", got, err)
			}
		})
	}
}

func TestCloseEndsTheBackoff(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	steps := make([]step, 1000)
	for i := range steps {
		steps[i] = step{err: emfile}
	}
	// A back-off of an hour: only Close can end Accept.
	l := connlimit.Wrap(&fakeListener{steps: steps}, connlimit.Options{MinBackoff: time.Hour, MaxBackoff: time.Hour})
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	_ = l.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

func TestThrottledShedLog(t *testing.T) {
	var in []*fakeConn
	for i := range 50 {
		in = append(in, from("10.0.0.1", i+1))
	}
	var buf syncbuf.Buffer
	l := connlimit.Wrap(&fakeListener{steps: conns(in...)}, connlimit.Options{MaxPerIP: 10, Log: logger(&buf), LogEvery: time.Hour})
	got := acceptAll(t, l)
	if len(got) != 10 || l.Shed() != 40 {
		t.Fatalf("accepted %d, shed %d; want 10 and 40", len(got), l.Shed())
	}
	if n := strings.Count(buf.String(), "connection shed"); n != 1 {
		t.Fatalf("%d shed lines for 40 sheds, want 1 (throttled):\n%s", n, buf.String())
	}
}

func TestEffectiveMax(t *testing.T) {
	for _, tt := range []struct {
		configured int
		fds        uint64
		want       int
		lowered    bool
	}{
		{10000, 20000, 10000, false},
		{10000, 1024, 768, true}, // reserve 256
		{10000, 256, 192, true},  // reserve a quarter
		{0, 256, 0, false},       // unlimited stays unlimited
		{100, 0, 100, false},     // unknown limit
		{10000, 1 << 62, 10000, false},
	} {
		t.Run(fmt.Sprintf("%d/%d", tt.configured, tt.fds), func(t *testing.T) {
			got, lowered := connlimit.EffectiveMax(tt.configured, tt.fds)
			if got != tt.want || lowered != tt.lowered {
				t.Fatalf("EffectiveMax(%d, %d) = %d, %v; want %d, %v", tt.configured, tt.fds, got, lowered, tt.want, tt.lowered)
			}
		})
	}
}

// CloseSilent closes the accepted connections that have not sent a byte
// for the quiet period, and only those: a connection that spoke, or one
// that is younger than the period, stays open; the slots of those closed
// are released.
func TestCloseSilent(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.Wrap(raw, connlimit.Options{})
	t.Cleanup(func() { _ = l.Close() })
	accept := func(speak bool) (server net.Conn) {
		t.Helper()
		client, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.Close() })
		server, err = l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = server.Close() })
		if speak {
			if _, err := client.Write([]byte("G")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(server, make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
		}
		return server
	}
	spoke := accept(true)
	silent := accept(false)
	if got := l.Silent(); got != 1 {
		t.Fatalf("Silent() = %d, want 1 (one connection spoke)", got)
	}
	if n := l.CloseSilent(time.Hour); n != 0 {
		t.Fatalf("CloseSilent(1h) closed %d connections accepted just now", n)
	}
	if n := l.CloseSilent(0); n != 1 {
		t.Fatalf("CloseSilent(0) closed %d connections, want the silent one", n)
	}
	if got, open := l.Silent(), l.Open(); got != 0 || open != 1 {
		t.Fatalf("after CloseSilent: Silent() = %d, Open() = %d, want 0 and 1", got, open)
	}
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Error("the silent connection can still be read after CloseSilent")
	}
	_ = spoke.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := spoke.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection that spoke: read %v, want it open (deadline exceeded)", err)
	}
}
