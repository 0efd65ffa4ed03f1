package host

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gofiber/fiber/v3"
)

// MaxRequestIDLen bounds an X-Request-ID taken from the caller: a longer
// one is replaced by a generated id (it ends up in logs and the exception
// log).
const MaxRequestIDLen = 128

// requestIDs makes the X-Request-ID of requests that arrive without one: a
// random per-process prefix and a counter ("3f9c1a7be2d04c55-1a"). The ids
// are unique (64 random bits tell processes apart) and cost an atomic add
// instead of 32 bytes from crypto/rand per request; they are correlation
// ids, not secrets, and nothing trusts them.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("host: crypto/rand failed: " + err.Error()) // crypto/rand does not fail on supported platforms
	}
	return &requestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

// appendNext appends the next id to b.
func (r *requestIDs) appendNext(b []byte) []byte {
	return strconv.AppendUint(append(b, r.prefix...), r.n.Add(1), 36)
}

// middleware answers every request with an X-Request-ID: the caller's own
// when it is 1–MaxRequestIDLen visible ASCII characters, otherwise a new
// one. The id lives in the response header only (envelope.TraceID reads it
// back for logs); nothing is stored per request, so a request costs no
// allocation here.
func (r *requestIDs) middleware() fiber.Handler {
	key := []byte("X-Request-Id") // fiber.HeaderXRequestID in fasthttp's canonical form
	return func(c fiber.Ctx) error {
		h := &c.RequestCtx().Response.Header
		if in := c.RequestCtx().Request.Header.PeekBytes(key); validRequestID(in) {
			h.SetCanonical(key, in)
		} else {
			// fasthttp copies the value, but escape analysis cannot see
			// that: a pooled buffer keeps the id off the heap.
			buf := idBuffers.Get().(*[40]byte)
			h.SetCanonical(key, r.appendNext(buf[:0]))
			idBuffers.Put(buf)
		}
		return c.Next()
	}
}

// idBuffers holds the buffers the middleware builds ids in; 40 bytes fit
// the 17-byte prefix and any counter.
var idBuffers = sync.Pool{New: func() any { return new([40]byte) }}

// validRequestID reports whether id is 1–MaxRequestIDLen characters of
// visible ASCII (0x20–0x7E).
func validRequestID(id []byte) bool {
	if len(id) == 0 || len(id) > MaxRequestIDLen {
		return false
	}
	for _, ch := range id {
		if ch < 0x20 || ch > 0x7e {
			return false
		}
	}
	return true
}
