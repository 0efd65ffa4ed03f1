//go:build !unit

package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/hub"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// srRecord is one SignalR message.
type srRecord struct {
	Type           int               `json:"type"`
	Target         string            `json:"target"`
	Arguments      []json.RawMessage `json:"arguments"`
	Error          string            `json:"error"`
	AllowReconnect *bool             `json:"allowReconnect"`
	raw            string
}

type srClient struct {
	t       *testing.T
	ws      *websocket.Conn
	pending []srRecord
}

// negotiate posts to the negotiate endpoint with the token in the
// Authorization header (header true) or the access_token parameter.
func negotiate(t *testing.T, addr, token string, header bool) (int, []byte) {
	t.Helper()
	u := "http://" + addr + hub.NegotiatePath + "?negotiateVersion=1"
	if token != "" && !header {
		u += "&" + hub.TokenParam + "=" + url.QueryEscape(token)
	}
	req, err := http.NewRequest("POST", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" && header {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

type negotiated struct {
	ConnectionID        string `json:"connectionId"`
	ConnectionToken     string `json:"connectionToken"`
	NegotiateVersion    int    `json:"negotiateVersion"`
	AvailableTransports []struct {
		Transport       string   `json:"transport"`
		TransferFormats []string `json:"transferFormats"`
	} `json:"availableTransports"`
}

func mustNegotiate(t *testing.T, addr, token string) negotiated {
	t.Helper()
	status, body := negotiate(t, addr, token, true)
	if status != 200 {
		t.Fatalf("negotiate = HTTP %d %s", status, body)
	}
	var n negotiated
	if err := json.Unmarshal(body, &n); err != nil {
		t.Fatalf("negotiate body %s: %v", body, err)
	}
	return n
}

// srOpen opens the socket of a connection token (no handshake yet).
func srOpen(t *testing.T, addr, connToken, token string) (*srClient, *http.Response, error) {
	t.Helper()
	u := "ws://" + addr + hub.Path + "?" + hub.ConnectionParam + "=" + url.QueryEscape(connToken)
	if token != "" {
		u += "&" + hub.TokenParam + "=" + url.QueryEscape(token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, u, nil) //nolint:bodyclose // a WebSocket handshake response has no body to close
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &srClient{t: t, ws: ws}, resp, nil
}

// srConnect negotiates, opens and shakes hands.
func srConnect(t *testing.T, addr, token string) *srClient {
	t.Helper()
	n := mustNegotiate(t, addr, token)
	c, resp, err := srOpen(t, addr, n.ConnectionToken, token) //nolint:bodyclose // a WebSocket handshake response has no body to close
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("open: %v (HTTP %d)", err, status)
	}
	c.send(`{"protocol":"json","version":1}`)
	if r := c.next(5 * time.Second); r.raw != "{}" {
		t.Fatalf("handshake answer %q, want {}", r.raw)
	}
	return c
}

func (c *srClient) send(msg string) {
	c.t.Helper()
	if err := c.ws.Write(context.Background(), websocket.MessageText, append([]byte(msg), 0x1e)); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next record within d.
func (c *srClient) read(d time.Duration) (srRecord, error) {
	if len(c.pending) == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return srRecord{}, err
		}
		if len(data) == 0 || data[len(data)-1] != 0x1e {
			c.t.Fatalf("frame %q does not end with the record separator", data)
		}
		for _, rec := range bytes.Split(data[:len(data)-1], []byte{0x1e}) {
			r := srRecord{raw: string(rec)}
			if err := json.Unmarshal(rec, &r); err != nil {
				c.t.Fatalf("record %q is not JSON: %v", rec, err)
			}
			c.pending = append(c.pending, r)
		}
	}
	r := c.pending[0]
	c.pending = c.pending[1:]
	return r, nil
}

func (c *srClient) next(d time.Duration) srRecord {
	c.t.Helper()
	r, err := c.read(d)
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	return r
}

// expect reads until an invocation of target (pings skipped).
func (c *srClient) expect(target string, d time.Duration) srRecord {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := c.next(time.Until(deadline))
		if r.Type == 6 {
			continue
		}
		if r.Type == 1 && r.Target == target {
			return r
		}
		c.t.Fatalf("got %s while waiting for %q", r.raw, target)
	}
}

// closed reads until the socket ends and returns the close message seen
// before (nil without one).
func (c *srClient) closed(d time.Duration) *srRecord {
	c.t.Helper()
	deadline := time.Now().Add(d)
	var last *srRecord
	for {
		r, err := c.read(time.Until(deadline))
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				c.t.Fatalf("socket still open after %v", d)
			}
			return last
		}
		if r.Type == 7 {
			last = &r
		}
	}
}

func TestSignalR(t *testing.T) {
	keepAlive := 300 * time.Millisecond
	k := kerneltest.StartWith(t, kerneltest.Options{Host: func(o *host.Options) { o.RealtimeKeepAlive = keepAlive }})
	addr := serve(t, k)
	admin := k.Admin()
	aliceID := k.User("alice", "Al1ce#Passw0rd")
	k.User("bob", "B0b#Passw0rd1")
	login := func(account, pw string) string { return k.Login(account, pw).AccessToken }
	var connTokens []string

	t.Run("negotiate", func(t *testing.T) {
		tok := login("alice", "Al1ce#Passw0rd")
		for _, header := range []bool{true, false} {
			status, body := negotiate(t, addr, tok, header)
			if status != 200 {
				t.Fatalf("negotiate (header %v) = HTTP %d %s", header, status, body)
			}
			var shape map[string]json.RawMessage
			if err := json.Unmarshal(body, &shape); err != nil {
				t.Fatal(err)
			}
			if len(shape) != 4 || shape["connectionId"] == nil || shape["connectionToken"] == nil {
				t.Fatalf("negotiate body %s: want exactly connectionId, connectionToken, negotiateVersion, availableTransports", body)
			}
			var n negotiated
			_ = json.Unmarshal(body, &n)
			if n.NegotiateVersion != 1 || len(n.ConnectionToken) < 32 || n.ConnectionID == "" || n.ConnectionID == n.ConnectionToken ||
				len(n.AvailableTransports) != 1 || n.AvailableTransports[0].Transport != "WebSockets" ||
				len(n.AvailableTransports[0].TransferFormats) != 1 || n.AvailableTransports[0].TransferFormats[0] != "Text" {
				t.Fatalf("negotiate body %s", body)
			}
			connTokens = append(connTokens, n.ConnectionToken)
		}
		for _, bad := range []string{"", "not-a-token"} {
			status, body := negotiate(t, addr, bad, true)
			var env struct {
				Code int `json:"code"`
			}
			_ = json.Unmarshal(body, &env)
			if status != 401 || env.Code != 40006 {
				t.Fatalf("negotiate with token %q = HTTP %d %s, want 401 / 40006", bad, status, body)
			}
		}
	})

	t.Run("the socket needs a live connection token of the same session", func(t *testing.T) {
		alice := login("alice", "Al1ce#Passw0rd")
		bob := login("bob", "B0b#Passw0rd1")
		expect := func(what, connToken, token string, want int) {
			t.Helper()
			_, resp, err := srOpen(t, addr, connToken, token) //nolint:bodyclose // a WebSocket handshake response has no body to close
			if err == nil || resp == nil || resp.StatusCode != want {
				t.Fatalf("%s: err %v, resp %+v; want HTTP %d", what, err, resp, want)
			}
		}
		expect("unknown id", "no-such-connection-token-0123456789abcdef", alice, 404)
		n := mustNegotiate(t, addr, alice)
		expect("bad access token", n.ConnectionToken, "not-a-token", 401)
		expect("no access token", n.ConnectionToken, "", 401)
		expect("another session's token", n.ConnectionToken, bob, 404)
		expect("spent by the try above", n.ConnectionToken, alice, 404)
		n = mustNegotiate(t, addr, alice)
		if _, _, err := srOpen(t, addr, n.ConnectionToken, alice); err != nil { //nolint:bodyclose // a WebSocket handshake response has no body to close
			t.Fatal(err)
		}
		expect("used once already", n.ConnectionToken, alice, 404)
	})

	t.Run("bad handshake", func(t *testing.T) {
		tok := login("alice", "Al1ce#Passw0rd")
		for _, hs := range []string{`{"protocol":"messagepack","version":1}`, `{"protocol":"json","version":2}`, `{"nope":1}`} {
			n := mustNegotiate(t, addr, tok)
			c, _, err := srOpen(t, addr, n.ConnectionToken, tok) //nolint:bodyclose // a WebSocket handshake response has no body to close
			if err != nil {
				t.Fatal(err)
			}
			c.send(hs)
			r := c.next(5 * time.Second)
			if r.Error == "" || r.Type != 0 {
				t.Fatalf("handshake %s answered %s, want {error}", hs, r.raw)
			}
			if _, err := c.read(5 * time.Second); err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("handshake %s: the socket is still open (%v)", hs, err)
			}
		}
	})

	t.Run("pings every keep-alive interval", func(t *testing.T) {
		c := srConnect(t, addr, login("alice", "Al1ce#Passw0rd"))
		start := time.Now()
		var at []time.Duration
		for len(at) < 4 {
			r := c.next(5 * time.Second)
			if r.Type != 6 {
				t.Fatalf("idle connection got %s, want pings", r.raw)
			}
			at = append(at, time.Since(start))
			c.send(`{"type":6}`)
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i] - at[i-1]; gap < keepAlive/2 || gap > 4*keepAlive {
				t.Fatalf("pings at %v: gap %v, want about %v", at, gap, keepAlive)
			}
		}
		t.Logf("pings at %v", at)
	})

	t.Run("notice-changed and module pushes reach both protocols", func(t *testing.T) {
		tok := login("alice", "Al1ce#Passw0rd")
		sr := srConnect(t, addr, tok)
		plain := mustDial(t, addr, tok)
		plain.expect(hub.TypeUnreadCount, 5*time.Second)
		id := publishAll(t, k, admin, "for the signalr client")
		r := sr.expect(hub.TargetNoticeChanged, 5*time.Second)
		var arg struct {
			Reason string `json:"reason"`
			Notice struct {
				ID int64 `json:"id"`
			} `json:"notice"`
		}
		if len(r.Arguments) != 1 || json.Unmarshal(r.Arguments[0], &arg) != nil || arg.Reason != "published" || arg.Notice.ID != id {
			t.Fatalf("notice-changed %s, want the notice %d", r.raw, id)
		}
		plain.expect(hub.TypeNotice, 5*time.Second)

		if err := k.Hub().Push(context.Background(), aliceID, "order-shipped", map[string]any{"orderId": 7}, "second"); err != nil {
			t.Fatal(err)
		}
		r = sr.expect("order-shipped", 5*time.Second)
		if len(r.Arguments) != 2 || string(r.Arguments[0]) != `{"orderId":7}` || string(r.Arguments[1]) != `"second"` {
			t.Fatalf("pushed %s", r.raw)
		}
		m := plain.expect("order-shipped", 5*time.Second)
		if string(m.Data) != `[{"orderId":7},"second"]` {
			t.Fatalf("plain push data %s", m.Data)
		}
		if err := k.Hub().Push(context.Background(), aliceID, "order-paid", 42); err != nil {
			t.Fatal(err)
		}
		sr.expect("order-paid", 5*time.Second)
		if m := plain.expect("order-paid", 5*time.Second); string(m.Data) != "42" {
			t.Fatalf("plain push data %s", m.Data)
		}
		for _, target := range []string{hub.TargetForceLogout, hub.TargetNoticeChanged, hub.TypeUnreadCount, "", "has space", strings.Repeat("x", 65)} {
			if err := k.Hub().Push(context.Background(), aliceID, target); !errors.Is(err, hub.ErrPush) {
				t.Fatalf("push to %q: %v, want ErrPush", target, err)
			}
		}
		if err := k.Hub().Push(context.Background(), aliceID, "big", strings.Repeat("x", hub.MaxPushBytes)); !errors.Is(err, hub.ErrPush) {
			t.Fatalf("oversized push: %v", err)
		}
		// Reading on the plain connection's side updates the SignalR one.
		k.Do("PUT", "/api/v1/sys/notice/read-all", tok, nil).Expect(t, "read-all", 200, 0)
		r = sr.expect(hub.TargetNoticeChanged, 5*time.Second)
		if !strings.Contains(r.raw, `"reason":"read"`) || !strings.Contains(r.raw, `"unreadCount":0`) {
			t.Fatalf("notice-changed after read-all: %s", r.raw)
		}
	})

	t.Run("force-logout then a close without reconnect", func(t *testing.T) {
		tok := login("bob", "B0b#Passw0rd1")
		c := srConnect(t, addr, tok)
		start := time.Now()
		k.Do("POST", "/api/v1/auth/logout", tok, nil).Expect(t, "logout", 200, 0)
		r := c.expect(hub.TargetForceLogout, 5*time.Second)
		if len(r.Arguments) != 1 || !strings.Contains(string(r.Arguments[0]), "reason") {
			t.Fatalf("force-logout %s", r.raw)
		}
		cl := c.closed(5 * time.Second)
		if cl == nil || cl.Error == "" || cl.AllowReconnect == nil || *cl.AllowReconnect {
			t.Fatalf("close message %+v, want an error and allowReconnect false", cl)
		}
		t.Logf("force-logout and close after %v", time.Since(start))
		if status, _ := negotiate(t, addr, tok, true); status != 401 {
			t.Fatalf("an ended session negotiates: HTTP %d", status)
		}
	})

	t.Run("no token reaches the log", func(t *testing.T) {
		tok := login("alice", "Al1ce#Passw0rd")
		n := mustNegotiate(t, addr, tok)
		if _, _, err := srOpen(t, addr, n.ConnectionToken, tok); err != nil { //nolint:bodyclose // a WebSocket handshake response has no body to close
			t.Fatal(err)
		}
		status, _ := negotiate(t, addr, tok, false)
		if status != 200 {
			t.Fatalf("negotiate with the query parameter: HTTP %d", status)
		}
		log := k.Log()
		for _, s := range append(connTokens, tok, n.ConnectionToken) {
			if strings.Contains(log, s) {
				t.Fatalf("a token was logged: %q", s)
			}
		}
	})
}

// TestSignalRClientTimeout: a SignalR client that sends nothing (no pings)
// for ClientTimeout is closed with a close message that allows a
// reconnect; until then it gets pings.
func TestSignalRClientTimeout(t *testing.T) {
	sessions := &sessionSwitch{}
	sessions.active.Store(true)
	h := hub.New(hub.Options{Sessions: sessions, KeepAlive: 50 * time.Millisecond, ClientTimeout: 400 * time.Millisecond})
	defer h.Close()
	p := hub.Principal{UserID: 1, SessionID: "s"}
	raw, err := h.Negotiate(context.Background(), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	var neg negotiated
	_ = json.Unmarshal(raw, &neg)
	if ok, err := h.Claim(context.Background(), hub.Principal{UserID: 1, SessionID: "other"}, neg.ConnectionToken); ok || err != nil {
		t.Fatalf("another session claimed the token: %v %v", ok, err)
	}
	raw, _ = h.Negotiate(context.Background(), p, 1)
	_ = json.Unmarshal(raw, &neg)
	if ok, err := h.Claim(context.Background(), p, neg.ConnectionToken); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if ok, _ := h.Claim(context.Background(), p, neg.ConnectionToken); ok {
		t.Fatal("a connection token was claimed twice")
	}
	srv := httptest.NewServer(h.SignalRHandler(p))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil) //nolint:bodyclose // a WebSocket handshake response has no body to close
	if err != nil {
		t.Fatal(err)
	}
	c := &srClient{t: t, ws: ws}
	defer func() { _ = ws.CloseNow() }()
	c.send(`{"protocol":"json","version":1}`)
	if r := c.next(5 * time.Second); r.raw != "{}" {
		t.Fatalf("handshake answer %q", r.raw)
	}
	start := time.Now()
	pings := 0
	for {
		r, err := c.read(5 * time.Second)
		if err != nil {
			t.Fatalf("closed without a close message after %d pings: %v", pings, err)
		}
		if r.Type == 6 {
			pings++
			continue
		}
		if r.Type != 7 || r.AllowReconnect == nil || !*r.AllowReconnect {
			t.Fatalf("got %s, want a close message allowing a reconnect", r.raw)
		}
		break
	}
	if took := time.Since(start); pings < 2 || took < 300*time.Millisecond {
		t.Fatalf("closed after %v and %d pings", took, pings)
	}
}
