// Package hub is the kernel's realtime hub: WebSocket connections at
// /hub/realtime (github.com/coder/websocket) over which the kernel pushes
// `notice`, `unread-count`, `force-logout` and `permissions-changed`
// messages to the signed-in console.
//
// Authentication is the access token, in the `access_token` query
// parameter (browsers cannot set headers on a WebSocket) or in the first
// message ({"type":"auth","token":"..."}) within AuthTimeout; the token's
// session is checked as on any Session route (active, not restricted to a
// password change). Cookies are never accepted: a WebSocket is not covered
// by CORS, so a cookie-authenticated socket could be opened by any site
// (cross-site WebSocket hijacking).
//
// What reaches a connection comes from the kernel's change events
// (host/events), which the relay (host/bus) carries between replicas
// through Redis: a notice published or a session ended on another replica
// reaches the connections held here. Without Redis the events stay in
// process.
//
// Each connection has a bounded send queue: a message that does not fit
// closes the connection (a slow reader never blocks the others), and every
// write has a deadline. A heartbeat (WebSocket ping) runs every Heartbeat
// and re-checks the session, so a session that ended without an event
// reaching this replica is closed within one heartbeat. One user holds at
// most sys.realtime.maxConnectionsPerUser connections per replica: the
// oldest is closed beyond it.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/token"
)

// Path is where the hub is served.
const Path = "/hub/realtime"

// TokenParam is the query parameter carrying the access token.
const TokenParam = "access_token"

// Message types.
const (
	TypeNotice             = "notice"
	TypeUnreadCount        = "unread-count"
	TypeForceLogout        = "force-logout"
	TypePermissionsChanged = "permissions-changed"
	TypeAuth               = "auth"
	TypePing               = "ping"
	TypePong               = "pong"
)

// Close codes (the 4000-4999 application range).
const (
	// CloseUnauthorized: no valid token or session (first message missing,
	// late or wrong).
	CloseUnauthorized websocket.StatusCode = 4401
	// CloseSessionEnded follows a force-logout message.
	CloseSessionEnded websocket.StatusCode = 4001
	// CloseTooSlow: the send queue overflowed or a write timed out.
	CloseTooSlow websocket.StatusCode = 4008
	// CloseReplaced: the user opened more connections than the cap.
	CloseReplaced websocket.StatusCode = 4029
)

// Defaults of Options.
const (
	DefaultQueue        = 16
	DefaultHeartbeat    = 25 * time.Second
	DefaultWriteTimeout = 5 * time.Second
	DefaultAuthTimeout  = 10 * time.Second
	// readLimit bounds a client message (only auth and ping are read).
	readLimit = 4096
)

// MaxConnectionsKey is the sys_config key of the per-user cap.
const MaxConnectionsKey = "sys.realtime.maxConnectionsPerUser"

// Tokens verifies access tokens (*token.Issuer).
type Tokens interface {
	Verify(raw string) (token.Claims, error)
}

// Sessions answers a session's state from the cache (*session.Service).
type Sessions interface {
	State(ctx context.Context, sid string) (session.State, error)
}

// Notices is what the hub reads of notices (*notice.Service).
type Notices interface {
	// Audience returns the message of a published notice and whether
	// each of the given users receives it (nil, false when the notice is
	// gone).
	Audience(ctx context.Context, noticeID int64, users []int64) (msg any, receives func(userID int64) bool, ok bool, err error)
	UnreadCount(ctx context.Context, userID int64) (int, error)
}

// Options configures a Hub.
type Options struct {
	Tokens   Tokens
	Sessions Sessions
	// Notices may be nil (the Notice module disabled): no notice messages.
	Notices Notices
	// Events is the kernel's change-event bus (nil: nothing is pushed).
	Events *events.Bus
	// MaxPerUser reads the per-user cap (nil: 5).
	MaxPerUser func(context.Context) int
	// OriginPatterns are the host patterns of other origins allowed to
	// open a socket (the Api:Cors:AllowedOrigins hosts); the request's own
	// host is always allowed.
	OriginPatterns []string
	Queue          int
	Heartbeat      time.Duration
	WriteTimeout   time.Duration
	AuthTimeout    time.Duration
	Log            hclog.Logger

	// Connections holds the SignalR connection tokens between negotiate
	// and the WebSocket (the kernel's cache: shared by the replicas, so
	// negotiate and the socket may land on different ones). Nil: an
	// in-process store.
	Connections OneTime
	// KeepAlive is the SignalR ping interval (default 15 s: the official
	// client's server timeout is 30 s); ClientTimeout closes a SignalR
	// connection that sent nothing for that long (default 30 s; the client
	// pings every 15 s); HandshakeTimeout bounds the SignalR handshake
	// (default 15 s).
	KeepAlive        time.Duration
	ClientTimeout    time.Duration
	HandshakeTimeout time.Duration
}

// Hub holds the connections of one replica. It is safe for concurrent use.
type Hub struct {
	opts   Options
	log    hclog.Logger
	cancel func()

	mu     sync.RWMutex
	byUser map[int64][]*conn
	bySID  map[string][]*conn
	closed bool
	// unread caches users' unread counts for new connections: dropped for
	// everyone when a notice is published, for the user after a read.
	unread map[int64]int

	count    atomic.Int64
	slow     atomic.Int64
	replaced atomic.Int64
	ctx      context.Context
	stop     context.CancelFunc
}

// New returns a Hub subscribed to opts.Events; Close unsubscribes.
func New(opts Options) *Hub {
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.AuthTimeout <= 0 {
		opts.AuthTimeout = DefaultAuthTimeout
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.ClientTimeout <= 0 {
		opts.ClientTimeout = DefaultClientTimeout
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opts.Connections == nil {
		opts.Connections = newMemOneTime()
	}
	if opts.MaxPerUser == nil {
		opts.MaxPerUser = func(context.Context) int { return 5 }
	}
	h := &Hub{opts: opts, log: opts.Log, byUser: map[int64][]*conn{}, bySID: map[string][]*conn{}, unread: map[int64]int{}}
	if h.log == nil {
		h.log = hclog.NewNullLogger()
	}
	h.ctx, h.stop = context.WithCancel(context.Background())
	h.cancel = func() {}
	if opts.Events != nil {
		h.cancel = opts.Events.Subscribe(h.onEvent)
	}
	return h
}

// Stats are counters of a Hub.
type Stats struct {
	// Connections open now; Slow: closed for a full queue or a write
	// timeout; Replaced: closed by the per-user cap.
	Connections, Slow, Replaced int64
}

// Stats returns the counters.
func (h *Hub) Stats() Stats {
	return Stats{Connections: h.count.Load(), Slow: h.slow.Load(), Replaced: h.replaced.Load()}
}

// Close unsubscribes and closes every connection (going away).
func (h *Hub) Close() {
	h.cancel()
	h.mu.Lock()
	h.closed = true
	var all []*conn
	for _, cs := range h.byUser {
		all = append(all, cs...)
	}
	h.mu.Unlock()
	for _, c := range all {
		c.closeWith(websocket.StatusGoingAway, "server shutting down", c.closeMessage("Server is shutting down.", true))
	}
	h.stop()
}

// conn is one open socket. An idle connection holds one goroutine (the
// read loop) and a stopped-or-pending heartbeat timer: the writer
// goroutine runs only while messages are queued, and the queue's backing
// array exists only then.
type conn struct {
	hub    *Hub
	ws     *websocket.Conn
	userID int64
	sid    string
	ctx    context.Context
	cancel context.CancelFunc
	// beat runs the heartbeat (set before the connection is registered,
	// never replaced).
	beat *time.Timer

	mu      sync.Mutex
	queue   [][]byte // at most hub.opts.Queue waiting messages
	writing bool     // a drain goroutine is running
	closed  bool
	// registered: in byUser and bySID (guarded by hub.mu).
	registered bool

	// proto is the connection's protocol (protoPlain or protoSignalR).
	proto uint8
	// lastRead is when a SignalR client last sent something (Unix
	// nanoseconds): silence beyond ClientTimeout closes the connection.
	lastRead atomic.Int64
}

// Protocols of a connection.
const (
	protoPlain uint8 = iota
	protoSignalR
)

// Principal is an authenticated caller of the hub.
type Principal struct {
	UserID    int64
	SessionID string
}

// ErrUnauthorized: the token is missing, invalid or its session inactive.
var ErrUnauthorized = errors.New("hub: no valid access token or session")

// Authenticate verifies an access token and its session as a Session route
// does. A read failure of the session is returned as is.
func (h *Hub) Authenticate(ctx context.Context, raw string) (Principal, error) {
	if raw == "" {
		return Principal{}, ErrUnauthorized
	}
	claims, err := h.opts.Tokens.Verify(raw)
	if err != nil {
		return Principal{}, errors.Join(ErrUnauthorized, err)
	}
	st, err := h.opts.Sessions.State(ctx, claims.SessionID)
	if err != nil {
		return Principal{}, err
	}
	if st != session.Active {
		return Principal{}, ErrUnauthorized
	}
	return Principal{UserID: claims.UserID, SessionID: claims.SessionID}, nil
}

// Handler serves one WebSocket upgrade for p (already authenticated), or
// for the first message when p is nil, on a net/http server. The kernel
// (fasthttp) uses Upgrade.
func (h *Hub) Handler(p *Principal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: h.opts.OriginPatterns})
		if err != nil {
			h.log.Debug("websocket upgrade refused", "error", err)
			return
		}
		h.serve(ws, p, protoPlain)
	})
}

// SignalRHandler is Handler for a SignalR connection of p (authenticated,
// its connection token claimed).
func (h *Hub) SignalRHandler(p Principal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: h.opts.OriginPatterns})
		if err != nil {
			h.log.Debug("websocket upgrade refused", "error", err)
			return
		}
		h.serve(ws, &p, protoSignalR)
	})
}

type inbound struct {
	Type  string `json:"type"`
	Token string `json:"token"`
}

func (h *Hub) serve(ws *websocket.Conn, p *Principal, proto uint8) {
	ws.SetReadLimit(readLimit)
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	var rest [][]byte
	if proto == protoSignalR {
		var ok bool
		if rest, ok = h.handshake(ctx, ws); !ok {
			return
		}
	}
	if p == nil {
		actx, acancel := context.WithTimeout(ctx, h.opts.AuthTimeout)
		got, err := h.firstMessage(actx, ws)
		acancel()
		if err != nil {
			_ = ws.Close(CloseUnauthorized, "unauthorized")
			return
		}
		p = &got
	}
	c := &conn{hub: h, ws: ws, userID: p.UserID, sid: p.SessionID, ctx: ctx, cancel: cancel, proto: proto}
	// Assigned under c.mu: the timer's function reads c.beat under it
	// (a short interval may fire before the assignment returns).
	c.mu.Lock()
	if proto == protoSignalR {
		c.lastRead.Store(time.Now().UnixNano())
		c.beat = time.AfterFunc(h.opts.KeepAlive, c.keepAlive)
	} else {
		c.beat = time.AfterFunc(h.opts.Heartbeat, c.heartbeat)
	}
	c.mu.Unlock()
	if !h.add(ctx, c) {
		c.beat.Stop()
		if proto == protoSignalR {
			c.writeNow(closeMessage("Server is shutting down.", true))
		}
		_ = ws.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	defer h.remove(c)
	if proto == protoSignalR {
		for _, rec := range rest {
			c.onRecord(rec)
		}
		c.readLoopSignalR(ctx)
		return
	}
	h.greet(ctx, c)
	c.readLoop(ctx)
}

// greet sends a plain connection its first message, the user's unread
// count. A failed read is tried again (three times, 50 ms apart and
// doubling) before the connection goes on without it, with a warning: a
// burst of connections can meet a busy database, and a client must not
// wait for the next event to learn its count.
func (h *Hub) greet(ctx context.Context, c *conn) {
	if h.opts.Notices == nil {
		return
	}
	delay := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		n, err := h.cachedUnread(ctx, c.userID)
		if err == nil {
			c.push(encode(TypeUnreadCount, n))
			return
		}
		if attempt == 3 || ctx.Err() != nil {
			h.log.Warn("a new realtime connection got no unread count", "user_id", c.userID, "error", err)
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay *= 2
	}
}

func (h *Hub) firstMessage(ctx context.Context, ws *websocket.Conn) (Principal, error) {
	typ, data, err := ws.Read(ctx)
	if err != nil || typ != websocket.MessageText {
		return Principal{}, ErrUnauthorized
	}
	var m inbound
	if json.Unmarshal(data, &m) != nil || m.Type != TypeAuth {
		return Principal{}, ErrUnauthorized
	}
	return h.Authenticate(ctx, m.Token)
}

// add registers c and enforces the per-user cap (closing the oldest).
func (h *Hub) add(ctx context.Context, c *conn) bool {
	limit := max(h.opts.MaxPerUser(ctx), 1)
	var evicted []*conn
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	c.registered = true
	h.byUser[c.userID] = append(h.byUser[c.userID], c)
	h.bySID[c.sid] = append(h.bySID[c.sid], c)
	h.count.Add(1)
	if over := len(h.byUser[c.userID]) - limit; over > 0 {
		evicted = append(evicted, h.byUser[c.userID][:over]...)
		for _, old := range evicted {
			h.unregister(old)
		}
	}
	h.mu.Unlock()
	for _, old := range evicted {
		h.replaced.Add(1)
		// No reconnect: the new connection won, a reconnecting old one
		// would only evict it in turn.
		old.closeWith(CloseReplaced, "too many connections", old.closeMessage("Too many connections.", false))
	}
	return true
}

// unregister drops c from the indexes (h.mu held).
func (h *Hub) unregister(c *conn) {
	if !c.registered {
		return
	}
	c.registered = false
	h.count.Add(-1)
	if cs := without(h.byUser[c.userID], c); len(cs) > 0 {
		h.byUser[c.userID] = cs
	} else {
		delete(h.byUser, c.userID)
		delete(h.unread, c.userID)
	}
	if cs := without(h.bySID[c.sid], c); len(cs) > 0 {
		h.bySID[c.sid] = cs
	} else {
		delete(h.bySID, c.sid)
	}
}

func without(cs []*conn, c *conn) []*conn {
	out := make([]*conn, 0, len(cs))
	for _, x := range cs {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}

func (h *Hub) remove(c *conn) {
	h.mu.Lock()
	h.unregister(c)
	h.mu.Unlock()
	c.close(websocket.StatusNormalClosure, "")
}

// closeMessage is the SignalR close message of c, nil for a plain
// connection.
func (c *conn) closeMessage(reason string, reconnect bool) []byte {
	if c.proto != protoSignalR {
		return nil
	}
	return closeMessage(reason, reconnect)
}

// readLoop reads client messages (application pings) until the socket
// closes.
func (c *conn) readLoop(ctx context.Context) {
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		var m inbound
		if json.Unmarshal(data, &m) == nil && m.Type == TypePing {
			c.push(pong)
		}
	}
}

var pong = encode(TypePong, nil)

// heartbeat (on its timer) re-checks the session and pings; a missing pong
// within the write timeout closes the connection.
func (c *conn) heartbeat() {
	if c.isClosed() || !c.check(c.ctx) {
		return
	}
	pctx, cancel := context.WithTimeout(c.ctx, c.hub.opts.WriteTimeout)
	err := c.ws.Ping(pctx)
	cancel()
	if err != nil {
		c.close(CloseTooSlow, "no pong")
		return
	}
	c.mu.Lock()
	if !c.closed {
		c.beat.Reset(c.hub.opts.Heartbeat)
	}
	c.mu.Unlock()
}

func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// drain writes the queued messages in order, then ends (started by push
// when the queue was idle).
func (c *conn) drain() {
	for {
		c.mu.Lock()
		if c.closed || len(c.queue) == 0 {
			c.writing = false
			c.queue = nil // an idle connection keeps no queue array
			c.mu.Unlock()
			return
		}
		msg := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		if !c.write(c.ctx, msg) {
			return
		}
	}
}

func (c *conn) write(ctx context.Context, msg []byte) bool {
	wctx, cancel := context.WithTimeout(ctx, c.hub.opts.WriteTimeout)
	err := c.ws.Write(wctx, websocket.MessageText, msg)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			c.hub.slow.Add(1)
		}
		c.closeWith(CloseTooSlow, "write failed", c.closeMessage("Write failed.", true))
		return false
	}
	return true
}

// check re-reads the session; an ended one gets force-logout and closes.
func (c *conn) check(ctx context.Context) bool {
	st, err := c.hub.opts.Sessions.State(ctx, c.sid)
	if err != nil {
		return true // fail open for the socket only: every HTTP request re-checks
	}
	if st == session.Active {
		return true
	}
	c.forceLogout(ctx, "session ended")
	return false
}

// forceLogout writes the force-logout message (bounded by the write
// timeout, past the queue) and closes the connection; a SignalR connection
// gets the force-logout invocation and a close message without reconnect.
func (c *conn) forceLogout(ctx context.Context, reason string) {
	data := map[string]string{"reason": reason}
	if c.proto == protoSignalR {
		msg := append(invocation(TargetForceLogout, []any{data}), closeMessage("Session ended.", false)...)
		wctx, cancel := context.WithTimeout(ctx, c.hub.opts.WriteTimeout)
		_ = c.ws.Write(wctx, websocket.MessageText, msg)
		cancel()
		c.close(websocket.StatusNormalClosure, "session ended")
		return
	}
	wctx, cancel := context.WithTimeout(ctx, c.hub.opts.WriteTimeout)
	_ = c.ws.Write(wctx, websocket.MessageText, encode(TypeForceLogout, data))
	cancel()
	c.close(CloseSessionEnded, "session ended")
}

// push queues msg without blocking; a full queue closes the connection.
func (c *conn) push(msg []byte) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= c.hub.opts.Queue {
		c.mu.Unlock()
		c.hub.slow.Add(1)
		c.closeWith(CloseTooSlow, "too slow", c.closeMessage("Too slow.", true))
		return
	}
	c.queue = append(c.queue, msg)
	start := !c.writing
	c.writing = true
	c.mu.Unlock()
	if start {
		go c.drain()
	}
}

// close marks c closed and closes the socket in the background (Close
// waits up to 5 s for the peer's close frame; it must never hold the
// caller).
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closeWith(code, reason, nil)
}

// closeWith is close with a last message (a SignalR close message) written
// before the close frame, bounded by the write timeout.
func (c *conn) closeWith(code websocket.StatusCode, reason string, last []byte) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.queue = nil
	c.mu.Unlock()
	c.beat.Stop()
	go func() {
		if last != nil {
			c.writeNow(last)
		}
		_ = c.ws.Close(code, reason)
		c.cancel()
	}()
}

// envelope is the wire form of a server message.
type envelope struct {
	Type string `json:"type"`
	Data any    `json:"data,omitempty"`
}

func encode(typ string, data any) []byte {
	raw, err := json.Marshal(envelope{Type: typ, Data: data})
	if err != nil {
		raw, _ = json.Marshal(envelope{Type: typ})
	}
	return raw
}

// onEvent turns change events into messages for the local connections.
func (h *Hub) onEvent(e events.Event) {
	switch e := e.(type) {
	case events.SessionsEnded:
		h.sessionsEnded(e.SessionIDs)
	case events.PermissionsChanged:
		// Plain connections only: the SignalR client of the original UI
		// knows no such target (it would log a warning for each).
		msg := encode(TypePermissionsChanged, nil)
		for _, c := range h.conns(e.UserID) {
			if c.proto == protoPlain {
				c.push(msg)
			}
		}
	case events.UserPushed:
		h.pushed(e)
	case events.NoticePublished:
		h.mu.Lock()
		clear(h.unread)
		h.mu.Unlock()
		if e.ID != 0 {
			h.noticePublished(e.ID)
		}
	case events.NoticeRead:
		if e.UserID != 0 {
			h.sendUnread(e.UserID)
		}
	}
}

// conns returns the connections of a user, or all of them for 0.
func (h *Hub) conns(userID int64) []*conn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if userID != 0 {
		return append([]*conn(nil), h.byUser[userID]...)
	}
	out := make([]*conn, 0, h.count.Load())
	for _, cs := range h.byUser {
		out = append(out, cs...)
	}
	return out
}

func (h *Hub) users() []int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]int64, 0, len(h.byUser))
	for id := range h.byUser {
		out = append(out, id)
	}
	return out
}

func (h *Hub) sessionsEnded(sids []string) {
	if len(sids) == 0 {
		// Unknown which: re-check every connection's session.
		for _, c := range h.conns(0) {
			go c.check(h.ctx)
		}
		return
	}
	var hit []*conn
	h.mu.RLock()
	for _, sid := range sids {
		hit = append(hit, h.bySID[strings.TrimSpace(sid)]...)
	}
	h.mu.RUnlock()
	for _, c := range hit {
		go c.forceLogout(h.ctx, "session ended")
	}
}

func (h *Hub) noticePublished(id int64) {
	if h.opts.Notices == nil {
		return
	}
	users := h.users()
	if len(users) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	data, receives, ok, err := h.opts.Notices.Audience(ctx, id, users)
	if err != nil {
		h.log.Warn("cannot resolve the receivers of a notice; clients will see it on their next poll", "notice_id", id, "error", err)
		return
	}
	if !ok {
		return
	}
	msg := encode(TypeNotice, data)
	var srMsg []byte // built for the first SignalR receiver
	h.mu.RLock()
	var to []*conn
	for uid, cs := range h.byUser {
		if receives(uid) {
			to = append(to, cs...)
		}
	}
	h.mu.RUnlock()
	for _, c := range to {
		if c.proto == protoSignalR {
			if srMsg == nil {
				srMsg = invocation(TargetNoticeChanged, []any{map[string]any{"reason": "published", "notice": data}})
			}
			c.push(srMsg)
			continue
		}
		c.push(msg)
	}
}

// unreadCount returns the user's unread count, from the cache unless
// fresh is set (ok false without notices or on a read error).
func (h *Hub) unreadCount(ctx context.Context, userID int64, fresh bool) (int, bool) {
	if h.opts.Notices == nil {
		return 0, false
	}
	read := h.cachedUnread
	if fresh {
		read = h.readUnread
	}
	n, err := read(ctx, userID)
	return n, err == nil
}

// cachedUnread is unreadCount from the cache, with the read's error.
func (h *Hub) cachedUnread(ctx context.Context, userID int64) (int, error) {
	h.mu.RLock()
	n, ok := h.unread[userID]
	h.mu.RUnlock()
	if ok {
		return n, nil
	}
	return h.readUnread(ctx, userID)
}

// readUnread reads the user's unread count and caches it.
func (h *Hub) readUnread(ctx context.Context, userID int64) (int, error) {
	n, err := h.opts.Notices.UnreadCount(ctx, userID)
	if err != nil {
		return 0, err
	}
	h.mu.Lock()
	h.unread[userID] = n
	h.mu.Unlock()
	return n, nil
}

func (h *Hub) sendUnread(userID int64) {
	cs := h.conns(userID)
	if len(cs) == 0 {
		h.mu.Lock()
		delete(h.unread, userID)
		h.mu.Unlock()
		return
	}
	n, ok := h.unreadCount(h.ctx, userID, true)
	if !ok {
		return
	}
	msg := encode(TypeUnreadCount, n)
	var srMsg []byte
	for _, c := range cs {
		if c.proto == protoSignalR {
			if srMsg == nil {
				srMsg = invocation(TargetNoticeChanged, []any{map[string]any{"reason": "read", "unreadCount": n}})
			}
			c.push(srMsg)
			continue
		}
		c.push(msg)
	}
}
