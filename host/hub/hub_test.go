//go:build !unit

package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/hub"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/session"
)

// serve runs the kernel on a real listener and returns its base address.
func serve(t *testing.T, k *kerneltest.Kernel) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = k.ServeListener(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the kernel did not stop within 20 s")
		}
	})
	return ln.Addr().String()
}

type msg struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, addr, token string) (*client, *http.Response, error) {
	t.Helper()
	u := "ws://" + addr + hub.Path
	if token != "" {
		u += "?" + hub.TokenParam + "=" + token
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, u, nil) //nolint:bodyclose // a WebSocket handshake response has no body to close
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &client{t: t, ws: ws}, resp, nil
}

func mustDial(t *testing.T, addr, token string) *client {
	t.Helper()
	c, resp, err := dial(t, addr, token) //nolint:bodyclose // a WebSocket handshake response has no body to close
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (HTTP %d)", err, status)
	}
	return c
}

// next reads the next message within d.
func (c *client) next(d time.Duration) (msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		return msg{}, err
	}
	var m msg
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("message %q is not JSON: %v", data, err)
	}
	return m, nil
}

// expect reads messages until one of type typ arrives (others of the
// types in skip are ignored) and returns it.
func (c *client) expect(typ string, d time.Duration, skip ...string) msg {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		m, err := c.next(time.Until(deadline))
		if err != nil {
			c.t.Fatalf("waiting for %q: %v", typ, err)
		}
		if m.Type == typ {
			return m
		}
		ok := false
		for _, s := range skip {
			ok = ok || s == m.Type
		}
		if !ok {
			c.t.Fatalf("got %s %s while waiting for %q", m.Type, m.Data, typ)
		}
	}
}

// closedWith reads until the socket closes and returns the close code.
func (c *client) closedWith(d time.Duration) websocket.StatusCode {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, err := c.next(time.Until(deadline))
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				c.t.Fatalf("socket still open after %v", d)
			}
			return websocket.CloseStatus(err)
		}
	}
}

func publishAll(t *testing.T, k *kerneltest.Kernel, admin, title string) int64 {
	t.Helper()
	var id int64
	k.Do("POST", "/api/v1/sys/notice", admin, map[string]any{"title": title, "type": 1, "receiverType": 0}).
		Expect(t, "publish", 200, 0).Decode(t, &id)
	return id
}

func TestHub(t *testing.T) {
	k := kerneltest.Start(t, nil)
	addr := serve(t, k)
	admin := k.Admin()
	aliceID := k.User("alice", "Al1ce#Passw0rd")
	bobID := k.User("bob", "B0b#Passw0rd1")
	login := func(account, pw string) string { return k.Login(account, pw).AccessToken }

	t.Run("authentication", func(t *testing.T) {
		if _, resp, err := dial(t, addr, "not-a-token"); err == nil || resp == nil || resp.StatusCode != 401 { //nolint:bodyclose // a WebSocket handshake response has no body to close
			t.Fatalf("bad query token: err %v, resp %+v; want HTTP 401", err, resp)
		}
		// First-message authentication.
		c := mustDial(t, addr, "")
		tok := login("alice", "Al1ce#Passw0rd")
		if err := c.ws.Write(context.Background(), websocket.MessageText, []byte(`{"type":"auth","token":"`+tok+`"}`)); err != nil {
			t.Fatal(err)
		}
		m := c.expect(hub.TypeUnreadCount, 5*time.Second)
		if string(m.Data) != "0" {
			t.Fatalf("unread-count = %s, want 0", m.Data)
		}
		// A wrong first message closes with 4401.
		bad := mustDial(t, addr, "")
		_ = bad.ws.Write(context.Background(), websocket.MessageText, []byte(`{"type":"auth","token":"nope"}`))
		if code := bad.closedWith(5 * time.Second); code != hub.CloseUnauthorized {
			t.Fatalf("bad first message closed with %d, want %d", code, hub.CloseUnauthorized)
		}
		// Plain GET is not an upgrade: the central error path answers.
		r := k.Do("GET", hub.Path, "", nil)
		if r.Status != 400 || r.Code != 48002 {
			t.Fatalf("plain GET = %d %d", r.Status, r.Code)
		}
		// The token never reaches a log line.
		if strings.Contains(k.Log(), tok) {
			t.Fatal("the access token was logged")
		}
	})

	t.Run("a refused handshake is an ordinary answer and the server goes on", func(t *testing.T) {
		tok := login("alice", "Al1ce#Passw0rd")
		cases := []struct {
			name   string
			header http.Header
			status int
		}{
			{"another site's origin", http.Header{"Origin": {"http://evil.example"}}, http.StatusForbidden},
			{"an unsupported protocol version", http.Header{"Sec-WebSocket-Version": {"8"}}, http.StatusBadRequest},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				req, err := http.NewRequest("GET", "http://"+addr+hub.Path+"?"+hub.TokenParam+"="+tok, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "websocket")
				req.Header.Set("Sec-WebSocket-Version", "13")
				req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
				for k, v := range tc.header {
					req.Header[k] = v
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.status)
				}
			})
		}
		// The same server still upgrades.
		mustDial(t, addr, tok).expect(hub.TypeUnreadCount, 5*time.Second)
	})

	t.Run("notices reach their receivers only", func(t *testing.T) {
		alice := mustDial(t, addr, login("alice", "Al1ce#Passw0rd"))
		bob := mustDial(t, addr, login("bob", "B0b#Passw0rd1"))
		alice.expect(hub.TypeUnreadCount, 5*time.Second)
		bob.expect(hub.TypeUnreadCount, 5*time.Second)

		var toBob int64
		k.Do("POST", "/api/v1/sys/notice", admin, map[string]any{"title": "for bob", "type": 3, "receiverType": 2, "receiverIds": []int64{bobID}}).
			Expect(t, "publish to bob", 200, 0).Decode(t, &toBob)
		all := publishAll(t, k, admin, "for everyone")

		var got struct {
			ID    int64  `json:"id"`
			Title string `json:"title"`
		}
		m := bob.expect(hub.TypeNotice, 5*time.Second)
		_ = json.Unmarshal(m.Data, &got)
		if got.ID != toBob {
			t.Fatalf("bob's first notice = %s, want %d", m.Data, toBob)
		}
		m = alice.expect(hub.TypeNotice, 5*time.Second)
		_ = json.Unmarshal(m.Data, &got)
		if got.ID != all || got.Title != "for everyone" {
			t.Fatalf("alice's first notice = %s, want only the broadcast %d", m.Data, all)
		}

		// Reading on one tab updates the count on the other.
		alice2 := mustDial(t, addr, login("alice", "Al1ce#Passw0rd"))
		alice2.expect(hub.TypeUnreadCount, 5*time.Second)
		k.Do("PUT", fmt.Sprintf("/api/v1/sys/notice/%d/read", all), login("alice", "Al1ce#Passw0rd"), nil).Expect(t, "read", 200, 0)
		if m := alice2.expect(hub.TypeUnreadCount, 5*time.Second); string(m.Data) != "0" {
			t.Fatalf("unread after read = %s", m.Data)
		}

		// permissions-changed after a change to alice's permissions.
		if err := k.Permissions().Invalidate(context.Background(), aliceID); err != nil {
			t.Fatal(err)
		}
		alice.expect(hub.TypePermissionsChanged, 5*time.Second, hub.TypeUnreadCount)
	})

	t.Run("force-logout closes the socket", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			end  func(tok string)
		}{
			{"logout", func(tok string) {
				k.Do("POST", "/api/v1/auth/logout", tok, nil).Expect(t, "logout", 200, 0)
			}},
			{"kick", func(tok string) {
				var list struct {
					Items []struct {
						SessionID string `json:"sessionId"`
						Account   string `json:"account"`
					} `json:"items"`
				}
				k.Do("GET", "/api/v1/sys/session/online?Size=100", admin, nil).Expect(t, "online", 200, 0).Decode(t, &list)
				n := 0
				for _, s := range list.Items {
					if s.Account == "bob" {
						k.Do("DELETE", "/api/v1/sys/session/"+s.SessionID, admin, nil).Expect(t, "kick", 200, 0)
						n++
					}
				}
				if n == 0 {
					t.Fatal("no session of bob listed")
				}
			}},
			{"disable", func(string) {
				k.Do("PUT", fmt.Sprintf("/api/v1/sys/user/%d/enabled", bobID), admin, map[string]any{"enabled": false}).Expect(t, "disable", 200, 0)
				t.Cleanup(func() {
					k.Do("PUT", fmt.Sprintf("/api/v1/sys/user/%d/enabled", bobID), admin, map[string]any{"enabled": true}).Expect(t, "enable", 200, 0)
				})
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tok := login("bob", "B0b#Passw0rd1")
				c := mustDial(t, addr, tok)
				c.expect(hub.TypeUnreadCount, 5*time.Second)
				start := time.Now()
				tc.end(tok)
				m := c.expect(hub.TypeForceLogout, 5*time.Second, hub.TypeUnreadCount, hub.TypePermissionsChanged)
				if !strings.Contains(string(m.Data), "reason") {
					t.Fatalf("force-logout data = %s", m.Data)
				}
				if code := c.closedWith(5 * time.Second); code != hub.CloseSessionEnded {
					t.Fatalf("closed with %d, want %d", code, hub.CloseSessionEnded)
				}
				t.Logf("%s: force-logout and close after %v", tc.name, time.Since(start))
				// The token no longer opens a socket.
				if _, resp, err := dial(t, addr, tok); err == nil || resp == nil || resp.StatusCode != 401 { //nolint:bodyclose // a WebSocket handshake response has no body to close
					t.Fatalf("ended session reconnects: %v", err)
				}
			})
		}
	})

	t.Run("per-user cap closes the oldest", func(t *testing.T) {
		if err := k.Settings().Set(context.Background(), hub.MaxConnectionsKey, "2"); err != nil {
			t.Fatal(err)
		}
		tok := login("alice", "Al1ce#Passw0rd")
		first := mustDial(t, addr, tok)
		first.expect(hub.TypeUnreadCount, 5*time.Second)
		second := mustDial(t, addr, tok)
		second.expect(hub.TypeUnreadCount, 5*time.Second)
		third := mustDial(t, addr, tok)
		third.expect(hub.TypeUnreadCount, 5*time.Second)
		if code := first.closedWith(5 * time.Second); code != hub.CloseReplaced {
			t.Fatalf("oldest closed with %d, want %d", code, hub.CloseReplaced)
		}
		publishAll(t, k, admin, "after the cap")
		second.expect(hub.TypeNotice, 5*time.Second, hub.TypeUnreadCount)
		third.expect(hub.TypeNotice, 5*time.Second, hub.TypeUnreadCount)
	})
}

// smallBuffers makes the server's socket send buffer small, so a client
// that does not read blocks the server's writes quickly.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestSlowReader: a client that stops reading is disconnected once its
// queue overflows or a write times out, while a reading client of the
// same broadcasts keeps receiving and the publisher never waits.
func TestSlowReader(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ev := events.New()
	h := hub.New(hub.Options{Tokens: k.Tokens(), Sessions: k.Sessions(), Events: ev, Queue: 8,
		WriteTimeout: 300 * time.Millisecond, Heartbeat: time.Hour})
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/slow", h.Handler(&hub.Principal{UserID: 1, SessionID: "slow"}))
	mux.Handle("/fast", h.Handler(&hub.Principal{UserID: 2, SessionID: "fast"}))
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()
	base := "ws" + strings.TrimPrefix(srv.URL, "http")

	dialer := func(path string, readBuf int) *websocket.Conn {
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok && readBuf > 0 {
				_ = tc.SetReadBuffer(readBuf)
			}
			return c, err
		}}}
		ws, _, err := websocket.Dial(context.Background(), base+path, &websocket.DialOptions{HTTPClient: hc}) //nolint:bodyclose // a WebSocket handshake response has no body to close
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ws.CloseNow() })
		return ws
	}
	slow := dialer("/slow", 4096)
	fast := dialer("/fast", 0)
	var got atomic.Int64
	go func() {
		for {
			if _, _, err := fast.Read(context.Background()); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	for h.Stats().Connections < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	var longest time.Duration
	sent := 0
	for ; sent < 50000 && h.Stats().Slow == 0; sent++ {
		t0 := time.Now()
		ev.Publish(events.PermissionsChanged{UserID: 0})
		longest = max(longest, time.Since(t0))
		if sent%2 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if h.Stats().Slow == 0 {
		t.Fatalf("the non-reading client was not disconnected (stats %+v)", h.Stats())
	}
	t.Logf("slow reader disconnected after %v and %d broadcasts; longest publish %v; the reading client got %d", time.Since(start), sent, longest, got.Load())
	if longest > 100*time.Millisecond {
		t.Errorf("a publish waited %v: a slow reader must never hold the publisher", longest)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.Stats().Connections != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c := h.Stats().Connections; c != 1 {
		t.Fatalf("%d connections open, want 1 (the reading one)", c)
	}
	// The reading client is still served.
	before := got.Load()
	ev.Publish(events.PermissionsChanged{UserID: 2})
	for got.Load() == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got.Load() == before {
		t.Fatal("the reading client got nothing after the slow one was dropped")
	}
	_ = slow
}

// sessionSwitch is a Sessions whose one answer the test flips.
type sessionSwitch struct{ active atomic.Bool }

func (s *sessionSwitch) State(context.Context, string) (session.State, error) {
	if s.active.Load() {
		return session.Active, nil
	}
	return session.Inactive, nil
}

// TestHeartbeat: the heartbeat (a timer per connection, no goroutine
// while idle) keeps pinging an idle socket whose session is active, and
// closes one whose session ended without any event (force-logout, 4001).
func TestHeartbeat(t *testing.T) {
	sessions := &sessionSwitch{}
	sessions.active.Store(true)
	var pongs atomic.Int64
	h := hub.New(hub.Options{Sessions: sessions, Heartbeat: 50 * time.Millisecond, WriteTimeout: 2 * time.Second})
	defer h.Close()
	srv := httptest.NewServer(h.Handler(&hub.Principal{UserID: 1, SessionID: "s"}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{ //nolint:bodyclose // a WebSocket handshake response has no body to close
		OnPingReceived: func(context.Context, []byte) bool { pongs.Add(1); return true },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	got := make(chan []byte, 4)
	closed := make(chan error, 1)
	go func() {
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				closed <- err
				return
			}
			got <- data
		}
	}()
	for pongs.Load() < 5 {
		select {
		case err := <-closed:
			t.Fatalf("an active session's socket closed after %d heartbeats: %v", pongs.Load(), err)
		case <-ctx.Done():
			t.Fatalf("only %d pings", pongs.Load())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if n := h.Stats().Connections; n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
	sessions.active.Store(false)
	select {
	case data := <-got:
		if !strings.Contains(string(data), `"type":"force-logout"`) {
			t.Fatalf("message %s, want force-logout", data)
		}
	case err := <-closed:
		t.Fatalf("closed without force-logout: %v", err)
	case <-ctx.Done():
		t.Fatal("the heartbeat did not notice the ended session")
	}
	if code := websocket.CloseStatus(<-closed); code != hub.CloseSessionEnded {
		t.Fatalf("closed with %d, want %d", code, hub.CloseSessionEnded)
	}
}
