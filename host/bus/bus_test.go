//go:build !unit

package bus_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/cache/rediscache/redistest"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
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

func start(t *testing.T, ev *events.Bus, c *redis.Client, ch, origin string) *bus.Relay {
	t.Helper()
	r, err := bus.Start(context.Background(), ev, c, bus.Options{Channel: ch, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// recorder collects every event of a Bus.
type recorder struct {
	mu     sync.Mutex
	events []events.Event
}

func record(t *testing.T, ev *events.Bus) *recorder {
	rec := &recorder{}
	cancel := ev.Subscribe(func(e events.Event) {
		rec.mu.Lock()
		rec.events = append(rec.events, e)
		rec.mu.Unlock()
	})
	t.Cleanup(cancel)
	return rec
}

func (r *recorder) count(e events.Event) int {
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
	ev := events.New()
	r := start(t, ev, c, ch, "replica-a")
	for _, tc := range []struct {
		e         events.Event
		kind, key string
	}{
		{events.ConfigChanged{Key: "sys.site.title"}, bus.KindConfig, "sys.site.title"},
		{events.DictChanged{TypeCode: "gender"}, bus.KindDict, "gender"},
		{events.PermissionsChanged{UserID: 42}, bus.KindPermission, "42"},
		{events.PermissionsChanged{}, bus.KindPermission, ""},
		{events.JobKillRequested{LogID: 77}, bus.KindJobKill, "77"},
	} {
		ev.Publish(tc.e)
		poll.Until(t, 10*time.Second, "the event on the wire", func() bool {
			for _, m := range w.snapshot() {
				if m["o"] == r.Origin() && m["k"] == tc.kind && m["v"] == tc.key {
					return true
				}
			}
			return false
		})
	}
	settle()
	if n := len(w.snapshot()); n != 5 {
		t.Fatalf("%d messages on the wire, want 5: %v", n, w.snapshot())
	}
}

func TestRemoteEventIsRelayedOnceAndNotEchoed(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	w := listen(t, c, ch)
	ev := events.New()
	r := start(t, ev, c, ch, "replica-b")
	rec := record(t, ev)
	e := events.PermissionsChanged{UserID: 7}
	raw, _ := json.Marshal(map[string]string{"o": "replica-a", "k": bus.KindPermission, "v": "7"})
	if err := c.Publish(context.Background(), ch, raw).Err(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the relayed event", func() bool { return rec.count(e) == 1 })
	// A message of its own origin is ignored.
	own, _ := json.Marshal(map[string]string{"o": r.Origin(), "k": bus.KindPermission, "v": "7"})
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

// Two relays on one channel, as two replicas (each with its own Bus): an
// event published on A's side reaches B once, and nothing loops.
func TestTwoReplicasNoLoop(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	w := listen(t, c, ch)
	evA, evB := events.New(), events.New()
	a := start(t, evA, c, ch, "replica-a")
	b := start(t, evB, c, ch, "replica-b")
	recA, recB := record(t, evA), record(t, evB)
	e := events.ConfigChanged{Key: "sys.security.captcha.enabled"}
	evA.Publish(e)
	poll.Until(t, 10*time.Second, "the relayed event", func() bool { return recB.count(e) == 1 })
	settle()
	if na, nb := recA.count(e), recB.count(e); na != 1 || nb != 1 {
		t.Fatalf("event delivered %d times on A, %d on B, want 1 and 1 (a loop?)", na, nb)
	}
	if got := w.snapshot(); len(got) != 1 {
		t.Fatalf("wire = %v, want A's message only", got)
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Received != 0 || sb.Received != 1 || sa.Sent != 1 || sb.Sent != 0 || sb.Relayed != 1 {
		t.Fatalf("stats a=%+v b=%+v", sa, sb)
	}
}

func TestMalformedMessagesAreIgnored(t *testing.T) {
	c := client(t, redisAddr())
	ch := channel()
	r := start(t, events.New(), c, ch, "replica-b")
	for _, p := range []string{"", "not json", `{"o":"x"}`, `[1,2]`, `{"o":"x","k":"scope","v":"1"}`, `{"o":"x","k":"permission","v":"x"}`} {
		if err := c.Publish(context.Background(), ch, p).Err(); err != nil {
			t.Fatal(err)
		}
	}
	settle()
	// The last two parse: they are received, not relayed.
	if s := r.Stats(); s.Received != 2 || s.Relayed != 0 {
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
	ev := events.New()
	r := start(t, ev, c, ch, "replica-b")
	rec := record(t, ev)

	srv.Stop()
	ev.Publish(events.DictChanged{TypeCode: "lost"})
	poll.Until(t, 10*time.Second, "the failed publish", func() bool { return r.Stats().Dropped == 1 })
	srv.Restart()

	for _, e := range []events.Event{events.ConfigChanged{}, events.DictChanged{}, events.PermissionsChanged{}} {
		poll.Until(t, 10*time.Second, fmt.Sprintf("the local resync of %T", e), func() bool { return rec.count(e) >= 1 })
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
	e := events.PermissionsChanged{UserID: 9}
	raw, _ := json.Marshal(map[string]string{"o": "replica-a", "k": bus.KindPermission, "v": "9"})
	poll.Until(t, 10*time.Second, "relaying after the restart", func() bool {
		_ = other.Publish(context.Background(), ch, raw).Err()
		time.Sleep(50 * time.Millisecond)
		return rec.count(e) >= 1
	})
}
