//go:build !unit

package bus_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/cache/rediscache/redistest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/sysconfig"
)

func redisAddr() string {
	if a := os.Getenv("ADMINKERNEL_TEST_REDIS"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

func client(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("bus tests need a Redis at %s (ADMINKERNEL_TEST_REDIS): %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func channel() string { return "aktest:" + strings.ToLower(rand.Text()[:12]) + ":events" }

func start(t *testing.T, c *redis.Client, ch, origin string) *bus.Relay {
	t.Helper()
	r, err := bus.Start(context.Background(), c, bus.Options{Channel: ch, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// recorder collects the events published in this process whose key starts
// with a test-unique marker, or whose key is empty (all keys).
type recorder struct {
	mu     sync.Mutex
	events []sysconfig.Event
}

func record(t *testing.T, marker string) *recorder {
	rec := &recorder{}
	cancel := sysconfig.Subscribe(func(e sysconfig.Event) {
		if strings.HasPrefix(e.Key, marker) || e.Key == "" {
			rec.mu.Lock()
			rec.events = append(rec.events, e)
			rec.mu.Unlock()
		}
	})
	t.Cleanup(cancel)
	return rec
}

func (r *recorder) count(e sysconfig.Event) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.events {
		if x == e {
			n++
		}
	}
	return n
}

// wire is a plain subscriber of the channel: what every replica receives.
type wire struct {
	mu   sync.Mutex
	msgs []map[string]string
}

func listen(t *testing.T, c *redis.Client, ch string) *wire {
	t.Helper()
	ps := c.Subscribe(context.Background(), ch)
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := &wire{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			var v map[string]string
			_ = json.Unmarshal([]byte(m.Payload), &v)
			w.mu.Lock()
			w.msgs = append(w.msgs, v)
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = ps.Close(); <-done })
	return w
}

func (w *wire) snapshot() []map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// settle waits a little so that anything still in flight would arrive.
func settle() { time.Sleep(300 * time.Millisecond) }

func TestLocalEventIsPublished(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	w := listen(t, c, ch)
	r := start(t, c, ch, "replica-a")
	marker := rand.Text()
	for _, e := range []sysconfig.Event{
		{Kind: sysconfig.KindConfig, Key: marker + "sys.site.title"},
		{Kind: sysconfig.KindDict, Key: marker + "gender"},
		{Kind: bus.KindPermission, Key: marker + "42"},
		{Kind: bus.KindSession, Key: marker + "sid"},
	} {
		sysconfig.Publish(e)
		poll.Until(t, 10*time.Second, "the event on the wire", func() bool {
			for _, m := range w.snapshot() {
				if m["o"] == r.Origin() && m["k"] == e.Kind && m["v"] == e.Key {
					return true
				}
			}
			return false
		})
	}
	settle()
	if n := len(w.snapshot()); n != 4 {
		t.Fatalf("%d messages on the wire, want 4: %v", n, w.snapshot())
	}
}

func TestRemoteEventIsRelayedOnceAndNotEchoed(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	w := listen(t, c, ch)
	r := start(t, c, ch, "replica-b")
	marker := rand.Text()
	rec := record(t, marker)
	e := sysconfig.Event{Kind: bus.KindPermission, Key: marker + "7"}
	raw, _ := json.Marshal(map[string]string{"o": "replica-a", "k": e.Kind, "v": e.Key})
	if err := c.Publish(context.Background(), ch, raw).Err(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the relayed event", func() bool { return rec.count(e) == 1 })
	// A message of its own origin is ignored.
	own, _ := json.Marshal(map[string]string{"o": r.Origin(), "k": e.Kind, "v": e.Key})
	if err := c.Publish(context.Background(), ch, own).Err(); err != nil {
		t.Fatal(err)
	}
	settle()
	if n := rec.count(e); n != 1 {
		t.Fatalf("event delivered %d times in process, want 1", n)
	}
	if got := w.snapshot(); len(got) != 2 {
		t.Fatalf("wire = %v: want only the two test messages (the relayed event must not be sent back)", got)
	}
	if s := r.Stats(); s.Received != 1 || s.Relayed != 1 || s.Sent != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// Two relays on one channel, as two replicas: an event published on A's
// side reaches B, and nothing loops.
func TestTwoReplicasNoLoop(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	w := listen(t, c, ch)
	a := start(t, c, ch, "replica-a")
	b := start(t, c, ch, "replica-b")
	marker := rand.Text()
	rec := record(t, marker)
	e := sysconfig.Event{Kind: sysconfig.KindConfig, Key: marker + "sys.security.captcha.enabled"}
	sysconfig.Publish(e)
	// Both relays live in this process, so both forward the local event;
	// each relays the other's message once: 1 local + 2 relayed deliveries.
	poll.Until(t, 10*time.Second, "the relayed events", func() bool { return rec.count(e) == 3 })
	settle()
	if n := rec.count(e); n != 3 {
		t.Fatalf("event delivered %d times in process, want 3 (a loop?)", n)
	}
	if got := w.snapshot(); len(got) != 2 {
		t.Fatalf("wire = %v, want one message per relay", got)
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Received != 1 || sb.Received != 1 || sa.Sent != 1 || sb.Sent != 1 {
		t.Fatalf("stats a=%+v b=%+v", sa, sb)
	}
}

func TestMalformedMessagesAreIgnored(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	r := start(t, c, ch, "replica-b")
	for _, p := range []string{"", "not json", `{"o":"x"}`, `[1,2]`} {
		if err := c.Publish(context.Background(), ch, p).Err(); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	if s := r.Stats(); s.Received != 0 || s.Relayed != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// Redis goes away and comes back: the relay resubscribes on its own, drops
// local state (an all-keys event per kind), tells the other replicas to do
// the same for the events it could not send, and relays again.
func TestRecoversAfterRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	ch := channel()
	r := start(t, c, ch, "replica-b")
	marker := rand.Text()
	rec := record(t, marker)

	srv.Stop()
	sysconfig.Publish(sysconfig.Event{Kind: sysconfig.KindDict, Key: marker + "lost"})
	poll.Until(t, 10*time.Second, "the failed publish", func() bool { return r.Stats().Dropped == 1 })
	srv.Restart()

	for _, k := range bus.Kinds {
		poll.Until(t, 10*time.Second, "the local resync of "+k, func() bool { return rec.count(sysconfig.Event{Kind: k}) >= 1 })
	}
	other := client(t, srv.Addr)
	w := listen(t, other, ch)
	poll.Until(t, 10*time.Second, "the resync request on the wire", func() bool {
		for _, m := range w.snapshot() {
			if m["o"] == r.Origin() && m["k"] == "*" {
				return true
			}
		}
		// The request may have gone out before the listener subscribed.
		return r.Stats().Sent >= 1
	})
	e := sysconfig.Event{Kind: bus.KindScope, Key: marker + "9"}
	raw, _ := json.Marshal(map[string]string{"o": "replica-a", "k": e.Kind, "v": e.Key})
	poll.Until(t, 10*time.Second, "relaying after the restart", func() bool {
		_ = other.Publish(context.Background(), ch, raw).Err()
		time.Sleep(50 * time.Millisecond)
		return rec.count(e) >= 1
	})
}
