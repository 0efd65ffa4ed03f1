package host

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

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

// next returns the next id.
func (r *requestIDs) next() string {
	var buf [40]byte
	b := append(buf[:0], r.prefix...)
	return string(strconv.AppendUint(b, r.n.Add(1), 36))
}
