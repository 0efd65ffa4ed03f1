package hub

// The SignalR side of the hub: the original admin UI connects with the
// official @microsoft/signalr client (wire contract §6 item 4), so the
// same path also speaks the SignalR JSON hub protocol over WebSockets:
//
//   - POST /hub/realtime/negotiate?negotiateVersion=1 (access token in
//     Authorization: Bearer or access_token) answers {connectionId,
//     connectionToken, negotiateVersion: 1, availableTransports:
//     [{transport: "WebSockets", transferFormats: ["Text"]}]}. The
//     connection token is one-time, lives NegotiateTTL and is bound to the
//     caller's session; it is kept in the shared cache, so the socket may
//     open on another replica.
//   - GET /hub/realtime?id=<connectionToken> (the access token again)
//     upgrades; an unknown, spent or foreign id answers 404.
//   - The client's handshake {"protocol":"json","version":1}\x1e is
//     answered {}\x1e; another protocol gets {"error":"..."}\x1e and the
//     close.
//   - Server messages are invocations {"type":1,"target":T,"arguments":[…]}
//     (force-logout, notice-changed and the targets modules push), pings
//     {"type":6} every KeepAlive, and a close {"type":7,"error":…,
//     "allowReconnect":…} before the server ends a connection.
//
// Both protocols share the registry, the per-user cap, the queue and the
// events, so every replica's connections of either kind hear the same
// things.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/adminkernel/kernel/host/events"
)

// NegotiatePath is the SignalR negotiate endpoint (POST).
const NegotiatePath = Path + "/negotiate"

// ConnectionParam is the query parameter of the SignalR connection token.
const ConnectionParam = "id"

// SignalR targets of the kernel.
const (
	TargetForceLogout   = "force-logout"
	TargetNoticeChanged = "notice-changed"
)

// Defaults of the SignalR options.
const (
	DefaultKeepAlive        = 15 * time.Second
	DefaultClientTimeout    = 30 * time.Second
	DefaultHandshakeTimeout = 15 * time.Second
	// NegotiateTTL is how long a connection token waits for its socket.
	NegotiateTTL = 60 * time.Second
)

// recordSeparator ends every SignalR JSON message.
const recordSeparator = 0x1e

// SignalR message types.
const (
	srInvocation = 1
	srCompletion = 3
	srStream     = 4
	srPing       = 6
	srClose      = 7
)

// OneTime stores one-time values (cache.Store).
type OneTime interface {
	PutOnce(ctx context.Context, key string, val []byte, ttl time.Duration) error
	Take(ctx context.Context, key string) (val []byte, ok bool, err error)
}

// connKeyPrefix is the cache key prefix of connection tokens (followed by
// the token's SHA-256: the cache never holds a usable token).
const connKeyPrefix = "hub:signalr:"

type pending struct {
	SID string `json:"s"`
	UID int64  `json:"u"`
}

// Negotiate issues a connection token for p and returns the negotiate
// answer (version 0 clients get the token as their connectionId, which is
// what they connect with).
func (h *Hub) Negotiate(ctx context.Context, p Principal, version int) ([]byte, error) {
	tok, err := randomString(32)
	if err != nil {
		return nil, err
	}
	cid, err := randomString(16)
	if err != nil {
		return nil, err
	}
	val, _ := json.Marshal(pending{SID: p.SessionID, UID: p.UserID})
	if err := h.opts.Connections.PutOnce(ctx, connKey(tok), val, NegotiateTTL); err != nil {
		return nil, err
	}
	type transport struct {
		Transport       string   `json:"transport"`
		TransferFormats []string `json:"transferFormats"`
	}
	ans := struct {
		ConnectionID        string      `json:"connectionId"`
		ConnectionToken     string      `json:"connectionToken,omitempty"`
		NegotiateVersion    int         `json:"negotiateVersion"`
		AvailableTransports []transport `json:"availableTransports"`
	}{ConnectionID: cid, ConnectionToken: tok, NegotiateVersion: 1,
		AvailableTransports: []transport{{Transport: "WebSockets", TransferFormats: []string{"Text"}}}}
	if version < 1 {
		ans.ConnectionID, ans.ConnectionToken, ans.NegotiateVersion = tok, "", 0
	}
	return json.Marshal(ans)
}

// Claim spends a connection token: true when it was issued to p's session
// and had not been used or expired. A token of another session is spent
// all the same.
func (h *Hub) Claim(ctx context.Context, p Principal, token string) (bool, error) {
	if token == "" || len(token) > 128 {
		return false, nil
	}
	raw, ok, err := h.opts.Connections.Take(ctx, connKey(token))
	if err != nil || !ok {
		return false, err
	}
	var got pending
	if json.Unmarshal(raw, &got) != nil {
		return false, nil //nolint:nilerr // an unreadable record matches no connection
	}
	return got.SID == p.SessionID && got.UID == p.UserID, nil
}

func connKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return connKeyPrefix + hex.EncodeToString(sum[:])
}

func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("hub: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// memOneTime is the in-process OneTime of a hub built without a cache.
type memOneTime struct {
	mu sync.Mutex
	m  map[string]memEntry
}

type memEntry struct {
	val []byte
	exp time.Time
}

func newMemOneTime() *memOneTime { return &memOneTime{m: map[string]memEntry{}} }

func (s *memOneTime) PutOnce(_ context.Context, key string, val []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, e := range s.m {
		if now.After(e.exp) {
			delete(s.m, k)
		}
	}
	if e, ok := s.m[key]; ok && now.Before(e.exp) {
		return errors.New("hub: key exists")
	}
	s.m[key] = memEntry{val: val, exp: now.Add(ttl)}
	return nil
}

func (s *memOneTime) Take(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	delete(s.m, key)
	if !ok || time.Now().After(e.exp) {
		return nil, false, nil
	}
	return e.val, true, nil
}

// handshake reads the client's handshake request and answers it; the
// records after it in the same frame are returned. false: the socket is
// closed.
func (h *Hub) handshake(ctx context.Context, ws *websocket.Conn) ([][]byte, bool) {
	hctx, cancel := context.WithTimeout(ctx, h.opts.HandshakeTimeout)
	defer cancel()
	fail := func(msg string) ([][]byte, bool) {
		b, _ := json.Marshal(struct {
			Error string `json:"error"`
		}{msg})
		wctx, wcancel := context.WithTimeout(ctx, h.opts.WriteTimeout)
		_ = ws.Write(wctx, websocket.MessageText, append(b, recordSeparator))
		wcancel()
		_ = ws.Close(websocket.StatusPolicyViolation, "handshake failed")
		return nil, false
	}
	typ, data, err := ws.Read(hctx)
	if err != nil {
		_ = ws.Close(websocket.StatusPolicyViolation, "no handshake")
		return nil, false
	}
	if typ != websocket.MessageText {
		return fail("Handshake request must be text.")
	}
	i := bytes.IndexByte(data, recordSeparator)
	if i < 0 {
		return fail("Handshake request is incomplete.")
	}
	var req struct {
		Protocol *string `json:"protocol"`
		Version  *int    `json:"version"`
	}
	if json.Unmarshal(data[:i], &req) != nil || req.Protocol == nil || req.Version == nil {
		return fail("Handshake request is invalid.")
	}
	if *req.Protocol != "json" {
		return fail(fmt.Sprintf("The protocol '%.32s' is not supported.", *req.Protocol))
	}
	if *req.Version < 0 || *req.Version > 1 {
		return fail(fmt.Sprintf("The server does not support version %d of the 'json' protocol.", *req.Version))
	}
	wctx, wcancel := context.WithTimeout(ctx, h.opts.WriteTimeout)
	err = ws.Write(wctx, websocket.MessageText, []byte{'{', '}', recordSeparator})
	wcancel()
	if err != nil {
		_ = ws.CloseNow()
		return nil, false
	}
	return records(data[i+1:]), true
}

// records splits a frame into its SignalR messages.
func records(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, recordSeparator)
		if i < 0 {
			break // an unterminated tail is not a message
		}
		if i > 0 {
			out = append(out, data[:i])
		}
		data = data[i+1:]
	}
	return out
}

// readLoopSignalR reads the client's messages until the socket closes.
func (c *conn) readLoopSignalR(ctx context.Context) {
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		c.lastRead.Store(time.Now().UnixNano())
		if typ != websocket.MessageText {
			continue
		}
		for _, rec := range records(data) {
			if !c.onRecord(rec) {
				return
			}
		}
	}
}

// onRecord handles one client message; false ends the connection.
func (c *conn) onRecord(rec []byte) bool {
	var m struct {
		Type         int    `json:"type"`
		InvocationID string `json:"invocationId"`
	}
	if json.Unmarshal(rec, &m) != nil {
		return true
	}
	switch m.Type {
	case srClose:
		c.close(websocket.StatusNormalClosure, "")
		return false
	case srInvocation, srStream:
		// The hub has no client-callable methods.
		if m.InvocationID != "" && len(m.InvocationID) <= 64 {
			b, _ := json.Marshal(struct {
				Type         int    `json:"type"`
				InvocationID string `json:"invocationId"`
				Error        string `json:"error"`
			}{srCompletion, m.InvocationID, "Unknown hub method."})
			c.push(append(b, recordSeparator))
		}
	}
	return true
}

var pingMessage = []byte{'{', '"', 't', 'y', 'p', 'e', '"', ':', '6', '}', recordSeparator}

// keepAlive (on its timer) re-checks the session, closes a silent client
// and sends a SignalR ping.
func (c *conn) keepAlive() {
	if c.isClosed() || !c.check(c.ctx) {
		return
	}
	if time.Since(time.Unix(0, c.lastRead.Load())) > c.hub.opts.ClientTimeout {
		c.closeWith(CloseTooSlow, "client timeout", closeMessage("Client timeout.", true))
		return
	}
	c.push(pingMessage)
	c.mu.Lock()
	if !c.closed {
		c.beat.Reset(c.hub.opts.KeepAlive)
	}
	c.mu.Unlock()
}

// writeNow writes msg past the queue, bounded by the write timeout.
func (c *conn) writeNow(msg []byte) {
	ctx := context.Background()
	if c.ctx != nil {
		ctx = c.ctx
	}
	wctx, cancel := context.WithTimeout(ctx, c.hub.opts.WriteTimeout)
	_ = c.ws.Write(wctx, websocket.MessageText, msg)
	cancel()
}

// invocation is a SignalR invocation message of target.
func invocation(target string, args []any) []byte {
	if args == nil {
		args = []any{}
	}
	b, err := json.Marshal(struct {
		Type      int    `json:"type"`
		Target    string `json:"target"`
		Arguments []any  `json:"arguments"`
	}{srInvocation, target, args})
	if err != nil {
		b, _ = json.Marshal(struct {
			Type      int    `json:"type"`
			Target    string `json:"target"`
			Arguments []any  `json:"arguments"`
		}{srInvocation, target, []any{}})
	}
	return append(b, recordSeparator)
}

// closeMessage is a SignalR close message.
func closeMessage(reason string, reconnect bool) []byte {
	b, _ := json.Marshal(struct {
		Type           int    `json:"type"`
		Error          string `json:"error,omitempty"`
		AllowReconnect bool   `json:"allowReconnect"`
	}{srClose, reason, reconnect})
	return append(b, recordSeparator)
}

// Push limits.
const (
	// MaxPushBytes bounds the JSON of a push's arguments.
	MaxPushBytes = 16 << 10
)

var targetPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)

// reserved are the targets and message types the kernel sends itself.
var reserved = map[string]bool{
	TargetForceLogout: true, TargetNoticeChanged: true, TypeNotice: true, TypeUnreadCount: true,
	TypePermissionsChanged: true, TypeAuth: true, TypePing: true, TypePong: true,
}

// ErrPush: a push with a bad target or arguments.
var ErrPush = errors.New("hub: invalid push")

// Push sends target with args to every connection of userID on every
// replica (through the change-event bus and its Redis relay), in both
// protocols: a SignalR client receives the invocation target(args...)
// (connection.on(target, ...)); a plain client receives {"type": target,
// "data": args[0]} (the array of args when there are several, no data for
// none). target is 1-64 letters, digits, '.', '_', ':' or '-' and not one
// the kernel sends; args must marshal to JSON within MaxPushBytes.
// Delivery is at most once, like every hub message: a push to a user with
// no open connection is dropped.
func (h *Hub) Push(_ context.Context, userID int64, target string, args ...any) error {
	if userID <= 0 || !targetPattern.MatchString(target) || reserved[target] {
		return fmt.Errorf("%w: target %q for user %d", ErrPush, target, userID)
	}
	raw := make([]json.RawMessage, len(args))
	n := 0
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("%w: argument %d: %w", ErrPush, i, err)
		}
		raw[i] = b
		n += len(b)
	}
	if n > MaxPushBytes {
		return fmt.Errorf("%w: arguments of %d bytes (at most %d)", ErrPush, n, MaxPushBytes)
	}
	e := events.UserPushed{UserID: userID, Target: target, Args: raw}
	if h.opts.Events == nil {
		h.pushed(e)
		return nil
	}
	h.opts.Events.Publish(e)
	return nil
}

// pushed delivers a push to the local connections of its user.
func (h *Hub) pushed(e events.UserPushed) {
	if e.UserID <= 0 || !targetPattern.MatchString(e.Target) || reserved[e.Target] {
		return
	}
	cs := h.conns(e.UserID)
	if len(cs) == 0 {
		return
	}
	var plain, sr []byte
	for _, c := range cs {
		if c.proto == protoSignalR {
			if sr == nil {
				args := make([]any, len(e.Args))
				for i, a := range e.Args {
					args[i] = a
				}
				sr = invocation(e.Target, args)
			}
			c.push(sr)
			continue
		}
		if plain == nil {
			var data any
			switch len(e.Args) {
			case 0:
			case 1:
				data = e.Args[0]
			default:
				data = e.Args
			}
			plain = encode(e.Target, data)
		}
		c.push(plain)
	}
}
