// Package connlimit wraps the kernel's TCP listener so that running out of
// descriptors or connections never ends the process:
//
//   - Accept retries temporary accept errors (EMFILE, ENFILE, ECONNABORTED,
//     ENOBUFS, ENOMEM, timeouts) with exponential back-off instead of handing
//     them to the HTTP server, whose Serve would return on them; connections
//     already accepted keep being served meanwhile.
//   - It caps the connections open at once, overall and per direct peer IP.
//     A connection beyond a cap is shed: accepted and closed at once, never
//     queued. Peers listed as exempt (the trusted proxies, through which
//     every client arrives) have no per-IP cap.
//
// Retried errors and shed connections are logged at most once per LogEvery,
// with the count since the previous line.
//
// It also knows which connections have not sent a byte yet: CloseSilent
// closes those during a shutdown. fasthttp counts a fresh connection as
// active from the moment it is accepted, so one that a client or a load
// balancer opened ahead of need (pre-connect, a dial race in a client
// pool) would otherwise hold the graceful shutdown until its timeout.
package connlimit

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults of Options.
const (
	DefaultMinBackoff = 5 * time.Millisecond
	DefaultMaxBackoff = time.Second
	DefaultLogEvery   = 10 * time.Second
)

// Options configure a Listener. The zero value retries accept errors and
// caps nothing.
type Options struct {
	// MaxConns caps the connections open at once (0 = unlimited).
	MaxConns int
	// MaxPerIP caps the connections open at once from one peer IP
	// (0 = unlimited).
	MaxPerIP int
	// Exempt reports whether a peer is free of the per-IP cap (the trusted
	// proxies). It may be nil.
	Exempt func(netip.Addr) bool
	// Log receives the throttled lines (nil: discarded).
	Log hclog.Logger
	// LogEvery is the least time between two lines of one kind
	// (default DefaultLogEvery).
	LogEvery time.Duration
	// MinBackoff and MaxBackoff bound the wait before retrying a failed
	// accept: it starts at MinBackoff and doubles up to MaxBackoff
	// (defaults DefaultMinBackoff and DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
}

// Listener is a net.Listener with temporary-error retry and connection caps.
type Listener struct {
	net.Listener
	opts Options

	mu     sync.Mutex
	open   int
	perIP  map[netip.Addr]int
	silent map[*conn]time.Time // accepted, nothing read yet: when accepted

	done      chan struct{}
	closeOnce sync.Once

	shed      throttle
	retried   throttle
	shedTotal atomic.Int64
	retryTot  atomic.Int64
}

// Wrap returns ln with the behaviour of opts.
func Wrap(ln net.Listener, opts Options) *Listener {
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.LogEvery <= 0 {
		opts.LogEvery = DefaultLogEvery
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	return &Listener{
		Listener: ln,
		opts:     opts,
		perIP:    make(map[netip.Addr]int),
		silent:   make(map[*conn]time.Time),
		done:     make(chan struct{}),
		shed:     throttle{every: opts.LogEvery},
		retried:  throttle{every: opts.LogEvery},
	}
}

// Accept returns the next connection within the caps. Temporary accept
// errors are retried after a back-off and never returned; a connection
// beyond a cap is closed and the next one awaited.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !Temporary(err) {
				return nil, err
			}
			if l.closed() {
				return nil, net.ErrClosed
			}
			if delay == 0 {
				delay = l.opts.MinBackoff
			} else {
				delay = min(2*delay, l.opts.MaxBackoff)
			}
			l.retryTot.Add(1)
			if n, ok := l.retried.note(time.Now()); ok {
				l.opts.Log.Warn("accepting a connection failed; retrying with back-off, open connections keep being served",
					"error", err, "failures", n, "backoff", delay.String(), "open", l.Open())
			}
			if !l.sleep(delay) {
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		ip := peerIP(c)
		lc := &conn{Conn: c, l: l, ip: ip}
		if reason := l.admit(lc); reason != "" {
			_ = c.Close()
			l.shedTotal.Add(1)
			if n, ok := l.shed.note(time.Now()); ok {
				l.opts.Log.Warn("connection shed: limit reached", "limit", reason, "peer", ip.String(), "shed", n, "open", l.Open())
			}
			continue
		}
		return lc, nil
	}
}

// Close closes the listener and ends any back-off in progress.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Open is the number of connections handed out and not yet closed.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// OpenFrom is the number of open connections from ip.
func (l *Listener) OpenFrom(ip netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.perIP[ip.Unmap()]
}

// Shed is the number of connections closed at once because of a cap.
func (l *Listener) Shed() int64 { return l.shedTotal.Load() }

// Retried is the number of accept errors retried.
func (l *Listener) Retried() int64 { return l.retryTot.Load() }

func (l *Listener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// sleep waits d or until the listener is closed (false).
func (l *Listener) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.done:
		return false
	}
}

// CloseSilent closes the connections that have not sent a byte since
// they were accepted at least quiet ago, and returns how many. The kernel
// calls it while shutting down, after the listener closed: such a
// connection carries no request to finish, and net/http closes the same
// ones (StateNew past five seconds) in its own Shutdown.
func (l *Listener) CloseSilent(quiet time.Duration) int {
	cutoff := time.Now().Add(-quiet)
	var victims []*conn
	l.mu.Lock()
	for c, at := range l.silent {
		if at.After(cutoff) || !c.state.CompareAndSwap(connSilent, connSilenced) {
			continue
		}
		delete(l.silent, c)
		victims = append(victims, c)
	}
	l.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
	return len(victims)
}

// Silent is the number of open connections that have sent nothing yet.
func (l *Listener) Silent() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.silent)
}

// admit counts a new connection, or returns which cap refuses it.
func (l *Listener) admit(c *conn) string {
	ip := c.ip
	perIP := l.opts.MaxPerIP > 0 && ip.IsValid() && (l.opts.Exempt == nil || !l.opts.Exempt(ip))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opts.MaxConns > 0 && l.open >= l.opts.MaxConns {
		return "Service:Http:MaxConnections"
	}
	if perIP && l.perIP[ip] >= l.opts.MaxPerIP {
		return "Service:Http:MaxConnectionsPerIp"
	}
	l.open++
	if ip.IsValid() {
		l.perIP[ip]++
	}
	l.silent[c] = time.Now()
	return ""
}

// heard forgets c as silent: it sent its first bytes.
func (l *Listener) heard(c *conn) {
	l.mu.Lock()
	delete(l.silent, c)
	l.mu.Unlock()
}

func (l *Listener) release(c *conn) {
	ip := c.ip
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	delete(l.silent, c)
	if !ip.IsValid() {
		return
	}
	if n := l.perIP[ip]; n <= 1 {
		delete(l.perIP, ip)
	} else {
		l.perIP[ip] = n - 1
	}
}

// The states of a conn's first bytes.
const (
	connSilent   int32 = iota // nothing read yet
	connHeard                 // its first bytes were read
	connSilenced              // closed by CloseSilent before it spoke
)

// conn releases its slot exactly once, on the first Close, and tells its
// listener when its first bytes arrive.
type conn struct {
	net.Conn
	l      *Listener
	ip     netip.Addr
	closed atomic.Bool
	state  atomic.Int32
}

// Read costs one atomic load per call once the connection has spoken.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.state.Load() == connSilent && c.state.CompareAndSwap(connSilent, connHeard) {
		c.l.heard(c)
	}
	return n, err
}

func (c *conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	err := c.Conn.Close()
	c.l.release(c)
	return err
}

// peerIP is the connection's remote IP (IPv4-mapped IPv6 unmapped), or the
// zero Addr when it has none.
func peerIP(c net.Conn) netip.Addr {
	switch a := c.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	case nil:
		return netip.Addr{}
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}
		}
		return ap.Addr().Unmap()
	}
}

// temporaryErrnos are the accept errors that pass: descriptors, buffers or
// memory run out for a while, or a client gave up before the accept.
var temporaryErrnos = []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS, syscall.ENOMEM}

// Temporary reports whether an accept error is worth retrying: one of
// EMFILE, ENFILE, ECONNABORTED, ENOBUFS, ENOMEM, or a timeout.
func Temporary(err error) bool {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, e := range temporaryErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// throttle lets one log line through per period and counts the events in
// between.
type throttle struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
	count int64
}

// note counts an event; when a line is due it returns the count since the
// previous line (this event included) and true.
func (t *throttle) note(now time.Time) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.count++
	if !t.last.IsZero() && now.Sub(t.last) < t.every {
		return 0, false
	}
	n := t.count
	t.count, t.last = 0, now
	return n, true
}

// EffectiveMax lowers a connection cap to what the descriptor limit allows:
// the limit minus a reserve (a quarter of it, at most 256) for the database
// pool, log files, plugins and the listener itself. configured 0
// (unlimited) is kept; lowered reports whether the cap was changed.
func EffectiveMax(configured int, fdLimit uint64) (limit int, lowered bool) {
	if configured <= 0 || fdLimit == 0 {
		return configured, false
	}
	reserve := min(fdLimit/4, 256)
	room := max(fdLimit-reserve, 1)
	if uint64(configured) <= room {
		return configured, false
	}
	return int(room), true //nolint:gosec // room < configured, so it fits an int
}
