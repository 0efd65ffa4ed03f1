// Package vendorfake holds faithful fakes of the four vendors of the
// bundled plugins, written from reference/vendor-protocols.md §6: WeCom
// (enterprise_chat), DingTalk (team_chat), GitHub (code_host) and the
// WeChat website app (social_chat). Each fake is one httptest.Server that
// plays the vendor's authorization page (the "user" logs in and is sent
// back with a fresh code and the state) and its API, with the vendor's real
// error codes and shapes, single-use codes that expire on the fake's own
// clock, and hooks to make it misbehave.
//
// The plugins' own tests and the end-to-end tests through the kernel use
// them; only tests import this package.
//
// Fields of a fake are guarded by its Lock: set them before the first
// request, or between Lock and Unlock.
package vendorfake

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Misbehaviour is a way a vendor (or a proxy in front of it) breaks, and
// the text the provider's ExchangeFailed message must contain.
type Misbehaviour struct {
	Name string
	Want string
}

// Misbehaviours are the broken answers every plugin must turn into an
// ExchangeFailed failure ("slow" is separate: it is transport trouble).
var Misbehaviours = []Misbehaviour{
	{"5xx", "HTTP 502"},
	{"garbage", "not a JSON object"},
	{"huge", "exceeds"},
	{"redirect", "redirect not followed"},
}

// StolenPath is where the "redirect" misbehaviour points; a provider that
// follows it makes the fake count a request there.
const StolenPath = "/steal"

// DefaultHugeBytes is the size of the "huge" answers unless Core.HugeBytes
// says otherwise.
const DefaultHugeBytes = 4 << 20

// maxSlow bounds how long a "slow" answer waits for the client to give up.
const maxSlow = 60 * time.Second

// Core is what every fake shares: the server, the lock, the clock, the
// request log, the misbehaviour hooks and holds.
type Core struct {
	srv *httptest.Server
	mu  sync.Mutex

	// Clock is the fake's time: codes and tokens expire on it. Advance
	// moves it.
	Clock time.Time
	// Misbehave makes the vendor's API paths answer the way it names:
	// "5xx", "garbage", "huge" (HugeBytes, chunked, no Content-Length),
	// "huge-declared" (Content-Length HugeBytes), "redirect" (302 to
	// StolenPath) or "slow" (no answer until the client gives up).
	// MisbehaveOnly restricts it to one path. The authorization pages
	// always behave.
	Misbehave     string
	MisbehaveOnly string
	// HugeBytes is the size of the "huge" answers (DefaultHugeBytes when 0).
	HugeBytes int64

	calls    map[string]int
	requests []*http.Request
	issued   []string
	holds    map[string]*Hold
	// hugeWritten counts the bytes of "huge" answers the clients took.
	hugeWritten atomic.Int64
}

func (c *Core) start(t testing.TB, h http.HandlerFunc) {
	t.Helper()
	c.calls = map[string]int{}
	c.holds = map[string]*Hold{}
	c.srv = httptest.NewServer(h)
	t.Cleanup(func() {
		c.mu.Lock()
		for _, h := range c.holds {
			h.Release()
		}
		c.mu.Unlock()
		c.srv.Close()
	})
}

// URL is the base URL of the fake (every vendor host at once).
func (c *Core) URL() string { return c.srv.URL }

// Lock guards the fake's fields.
func (c *Core) Lock() { c.mu.Lock() }

// Unlock releases Lock.
func (c *Core) Unlock() { c.mu.Unlock() }

// Count is how many requests reached path.
func (c *Core) Count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[path]
}

// Calls returns a copy of the request count per path.
func (c *Core) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// Requests returns clones of every request received, in order.
func (c *Core) Requests() []*http.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// Issued returns every code and token the fake handed out: values that
// must never appear in a log or an error message.
func (c *Core) Issued() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.issued)
}

// Now is the fake's clock.
func (c *Core) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Clock
}

// Advance moves the fake's clock.
func (c *Core) Advance(d time.Duration) {
	c.mu.Lock()
	c.Clock = c.Clock.Add(d)
	c.mu.Unlock()
}

// HugeWritten is how many bytes of "huge" answers the clients accepted
// before they hung up (or the whole answers).
func (c *Core) HugeWritten() int64 { return c.hugeWritten.Load() }

// issueLocked records a code or token handed out.
func (c *Core) issueLocked(v string) string {
	c.issued = append(c.issued, v)
	return v
}

// Hold makes requests to path wait, before they are answered, until
// Release (or until their client hangs up: then they get no answer).
// Calling Hold again for the same path returns the same hold.
func (c *Core) Hold(path string) *Hold {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.holds[path]; ok {
		return h
	}
	h := &Hold{arrived: make(chan struct{}), release: make(chan struct{})}
	c.holds[path] = h
	return h
}

// Hold is a gate in front of one path of a fake.
type Hold struct {
	arrived     chan struct{}
	arrivedOnce sync.Once
	release     chan struct{}
	releaseOnce sync.Once
	n           atomic.Int32
}

// Arrived is closed when the first request reaches the hold.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Held is how many requests reached the hold.
func (h *Hold) Held() int { return int(h.n.Load()) }

// Release lets the held requests (and every later one) through.
func (h *Hold) Release() { h.releaseOnce.Do(func() { close(h.release) }) }

// wait blocks r until the release; it reports false when the client hung
// up first.
func (h *Hold) wait(r *http.Request) bool {
	h.n.Add(1)
	h.arrivedOnce.Do(func() { close(h.arrived) })
	select {
	case <-h.release:
		return true
	case <-r.Context().Done():
		return false
	}
}

// begin records r and applies the hooks; it reports whether the request
// has been answered (or must not be). api says whether r is a vendor API
// call (subject to Misbehave); contentType is used for the JSON-looking
// misbehaving answers.
func (c *Core) begin(w http.ResponseWriter, r *http.Request, api bool, contentType string) bool {
	c.mu.Lock()
	c.calls[r.URL.Path]++
	c.requests = append(c.requests, r.Clone(r.Context()))
	mis, only, size := c.Misbehave, c.MisbehaveOnly, c.HugeBytes
	hold := c.holds[r.URL.Path]
	c.mu.Unlock()
	if hold != nil && !hold.wait(r) {
		return true
	}
	if !api || mis == "" || (only != "" && only != r.URL.Path) {
		return false
	}
	if size <= 0 {
		size = DefaultHugeBytes
	}
	c.misbehave(w, r, mis, contentType, size)
	return true
}

func (c *Core) misbehave(w http.ResponseWriter, r *http.Request, how, contentType string, size int64) {
	switch how {
	case "5xx":
		http.Error(w, "<html>502 Bad Gateway</html>", http.StatusBadGateway)
	case "garbage":
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte("<html>not json{"))
	case "huge", "huge-declared":
		w.Header().Set("Content-Type", contentType)
		if how == "huge-declared" {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		chunk := []byte(strings.Repeat("A", 64<<10))
		head := []byte(`{"x":"`)
		n, _ := w.Write(head)
		c.hugeWritten.Add(int64(n))
		for written := int64(len(head)); written < size; {
			part := chunk[:min(int64(len(chunk)), size-written)]
			n, err := w.Write(part)
			c.hugeWritten.Add(int64(n))
			if err != nil {
				return
			}
			written += int64(n)
		}
	case "redirect":
		http.Redirect(w, r, StolenPath+"?"+r.URL.RawQuery, http.StatusFound) //nolint:gosec // a fake vendor redirecting to itself
	case "slow":
		// Drain the body so the server notices the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(maxSlow):
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(`{}`))
	default:
		http.Error(w, "unknown misbehaviour "+how, http.StatusTeapot)
	}
}
