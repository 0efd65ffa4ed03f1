package hub

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"

	"github.com/coder/websocket"
	"github.com/valyala/fasthttp"
)

// connBuffer is the read and write buffer size of a hub connection: an
// idle socket keeps them for its lifetime, and the hub's messages are
// small.
const connBuffer = 512

// Upgrade serves a WebSocket upgrade on the kernel's fasthttp server
// without the net/http adaptor, for p (already authenticated) or for the
// first message when p is nil.
//
// The handshake is checked by coder/websocket while the request is still
// fasthttp's (a refusal is an ordinary answer: 400, 403, 426...). The
// connection is then hijacked and the hijack handler returns at once,
// handing the socket to one goroutine of the hub: the server must run with
// KeepHijackedConns, so fasthttp neither closes the socket nor keeps its
// request context, read buffer and goroutine for the socket's lifetime
// (what the adaptor did).
func (h *Hub) Upgrade(fc *fasthttp.RequestCtx, p *Principal) {
	h.upgrade(fc, p, protoPlain)
}

// UpgradeSignalR is Upgrade for a SignalR connection of p (authenticated,
// its connection token claimed: Claim): the socket speaks the SignalR JSON
// hub protocol (signalr.go).
func (h *Hub) UpgradeSignalR(fc *fasthttp.RequestCtx, p Principal) {
	h.upgrade(fc, &p, protoSignalR)
}

func (h *Hub) upgrade(fc *fasthttp.RequestCtx, p *Principal, proto uint8) {
	r := netRequest(fc)
	opts := &websocket.AcceptOptions{OriginPatterns: h.opts.OriginPatterns}
	check := &checkWriter{header: http.Header{}}
	_, _ = websocket.Accept(check, r, opts) // stops at Hijack: a dry run of the checks
	if !check.hijackAsked {
		h.log.Debug("websocket upgrade refused", "status", check.status)
		for k := range check.header {
			fc.Response.Header.Set(k, check.header.Get(k))
		}
		fc.SetStatusCode(check.status)
		fc.SetBody(check.body.Bytes())
		return
	}
	fc.HijackSetNoResponse(true)
	fc.Hijack(func(nc net.Conn) {
		// The raw connection: fasthttp's wrapper reads through its pooled
		// reader, which it takes back when this handler returns (nothing
		// is buffered in it: a client waits for the 101 before sending).
		if u, ok := nc.(interface{ UnsafeConn() net.Conn }); ok {
			nc = u.UnsafeConn()
		}
		go h.accept(nc, r, p, opts, proto)
	})
}

// accept completes the handshake on the hijacked connection and serves it.
func (h *Hub) accept(nc net.Conn, r *http.Request, p *Principal, opts *websocket.AcceptOptions, proto uint8) {
	ws, err := websocket.Accept(&rawWriter{conn: nc, header: http.Header{}}, r, opts)
	if err != nil {
		h.log.Debug("websocket upgrade failed", "error", err)
		_ = nc.Close()
		return
	}
	h.serve(ws, p, proto)
	_ = nc.Close()
}

// netRequest is the part of a fasthttp request the WebSocket handshake
// reads, copied (the request context is reused once the handler returns).
func netRequest(fc *fasthttp.RequestCtx) *http.Request {
	r := &http.Request{
		Method:     string(fc.Method()),
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Host:       string(fc.Host()),
		Header:     http.Header{},
	}
	if !fc.Request.Header.IsHTTP11() {
		r.Proto, r.ProtoMinor = "HTTP/1.0", 0
	}
	for _, k := range []string{"Connection", "Upgrade", "Origin", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Extensions", "Sec-WebSocket-Protocol"} {
		if v := fc.Request.Header.Peek(k); len(v) > 0 {
			r.Header.Set(k, string(v))
		}
	}
	return r
}

// checkWriter records what websocket.Accept answers; its Hijack refuses,
// so Accept goes no further than its checks.
type checkWriter struct {
	header      http.Header
	status      int
	body        bytes.Buffer
	hijackAsked bool
}

var errDryRun = errors.New("hub: handshake checked")

func (w *checkWriter) Header() http.Header { return w.header }
func (w *checkWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

func (w *checkWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *checkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijackAsked = w.status == http.StatusSwitchingProtocols
	return nil, nil, errDryRun
}

// rawWriter answers the handshake on the hijacked connection: Hijack
// writes the 101 status line and headers Accept set, and hands over
// connBuffer-sized buffers.
type rawWriter struct {
	conn   net.Conn
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *rawWriter) Header() http.Header         { return w.header }
func (w *rawWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *rawWriter) WriteHeader(code int)        { w.status = code }

func (w *rawWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.status != http.StatusSwitchingProtocols {
		return nil, nil, errors.New("hub: no upgrade to hijack for")
	}
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	if err := w.header.Write(&b); err != nil {
		return nil, nil, err
	}
	b.WriteString("\r\n")
	if _, err := w.conn.Write(b.Bytes()); err != nil {
		return nil, nil, err
	}
	return w.conn, bufio.NewReadWriter(bufio.NewReaderSize(w.conn, connBuffer), bufio.NewWriterSize(w.conn, connBuffer)), nil
}
