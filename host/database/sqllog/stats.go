package sqllog

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/logging"
)

// NPlusOneThreshold is the statement count from which Summary adds a
// suspected N+1 note.
const NPlusOneThreshold = 20

// Stats counts the statements run with one context. It is safe for
// concurrent use.
type Stats struct {
	count atomic.Int64
	nanos atomic.Int64
}

// Count returns the number of statements recorded.
func (s *Stats) Count() int {
	if s == nil {
		return 0
	}
	return int(s.count.Load())
}

// Total returns the summed duration of the statements recorded.
func (s *Stats) Total() time.Duration {
	if s == nil {
		return 0
	}
	return time.Duration(s.nanos.Load())
}

func (s *Stats) add(d time.Duration) {
	s.count.Add(1)
	s.nanos.Add(int64(d))
}

type statsKey struct{}

// requestIDHeader is X-Request-ID in fasthttp's canonical form (the
// request-id middleware sets it on the response before this one runs).
var requestIDHeader = []byte("X-Request-Id")

// WithStats returns a context carrying a new collector, and the collector.
// Statements run through a Wrap driver with that context (or a context
// derived from it, or in a transaction begun with it) are counted.
func WithStats(ctx context.Context) (context.Context, *Stats) {
	sc := &statsCtx{Context: ctx}
	return sc, &sc.stats
}

// statsCtx is the context WithStats returns: the collector and the context
// that carries it in one allocation (it is made for every request).
type statsCtx struct {
	context.Context
	stats Stats
	// id is the request's X-Request-ID (logging.RequestIDKey), kept in
	// the same allocation when it fits (generated ids and UUIDs do); a
	// string is made only when a line is logged. A longer caller id is
	// copied into idLong.
	id     [inlineRequestID]byte
	idN    int
	idLong string
}

// inlineRequestID is the longest request id kept inline: a generated id
// (17-character prefix and a base-36 counter) or a UUID.
const inlineRequestID = 48

func (c *statsCtx) setRequestID(id []byte) {
	if len(id) <= len(c.id) {
		c.idN = copy(c.id[:], id)
		return
	}
	c.idLong = string(id)
}

func (c *statsCtx) Value(key any) any {
	switch key.(type) {
	case statsKey:
		return &c.stats
	case logging.RequestIDKey:
		if c.idN > 0 {
			return string(c.id[:c.idN])
		}
		if c.idLong != "" {
			return c.idLong
		}
	}
	return c.Context.Value(key)
}

// StatsFrom returns the collector of ctx, or nil.
func StatsFrom(ctx context.Context) *Stats {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(statsKey{}).(*Stats)
	return s
}

// Summary returns the end-of-request line "SQL: N statements, T ms", with
// " — suspected N+1 (N statements)" appended from NPlusOneThreshold
// statements on; ok is false when no statement ran.
func Summary(s *Stats) (line string, ok bool) {
	n := s.Count()
	if n == 0 {
		return "", false
	}
	noun := "statements"
	if n == 1 {
		noun = "statement"
	}
	ms := float64(s.Total()) / float64(time.Millisecond)
	line = "SQL: " + strconv.Itoa(n) + " " + noun + ", " + strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	if n >= NPlusOneThreshold {
		line += " — suspected N+1 (" + strconv.Itoa(n) + " statements)"
	}
	return line, true
}

// Middleware installs a Stats collector on every request's context
// (c.SetContext, and as a local so that handlers passing the fiber.Ctx
// itself as the context are counted too) and, when requestSummary is true,
// logs Summary at Info with the method and path after the rest of the chain
// ran, for requests that ran at least one statement. Pass
// SqlLog:Enabled && SqlLog:RequestSummary; log is the Category logger (nil
// discards).
func Middleware(log hclog.Logger, requestSummary bool) fiber.Handler {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return func(c fiber.Ctx) error {
		ctx, s := WithStats(c.Context())
		if sc, ok := ctx.(*statsCtx); ok {
			// The request id, for the lines logged with this context.
			sc.setRequestID(c.RequestCtx().Response.Header.PeekBytes(requestIDHeader))
		}
		c.SetContext(ctx)
		// The collector is also a user value, for handlers that pass the
		// fiber.Ctx itself as their context (its Value reads user values);
		// set directly, which spares Locals' variadic allocation.
		c.RequestCtx().SetUserValue(statsKey{}, s)
		err := c.Next()
		if requestSummary {
			if line, ok := Summary(s); ok && log.IsInfo() {
				logging.Ctx(ctx, log).Info(line, "method", strings.Clone(c.Method()), "path", strings.Clone(c.Path()))
			}
		}
		return err
	}
}
