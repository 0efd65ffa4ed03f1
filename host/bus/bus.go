// Package bus carries the kernel's change events between replicas over
// Redis pub/sub.
//
// A change event (sysconfig.Event) tells that cached data derived from a
// config key, a dictionary type, a user's permissions or data scope, or a
// session was invalidated. Events are published in process by
// sysconfig.Publish after the change is committed and the shared cache
// entry is dropped. A Relay subscribes to them and publishes each one on a
// Redis channel; every other replica's Relay receives it and publishes it
// again in its own process, so a subscriber there (a replica-local cache)
// drops its copy before the next request. The kernel keeps no replica-local
// state today: with Redis every cached entry is already shared, and the
// relay is the hook later local caches subscribe through.
//
// Delivery is at most once (Redis pub/sub keeps nothing for a disconnected
// subscriber). To stay safe anyway a Relay publishes, locally, one event
// with an empty key for every kind ("everything of this kind changed")
// after its subscription is restored, and asks the other replicas to do the
// same (a resync message) after it could not publish or had to drop events.
//
// Loops are avoided in two ways: a replica ignores the messages it sent
// itself (each Relay has a random origin id), and an event a Relay
// re-publishes locally is not sent out again. Several Relays in one process
// (tests) share one forwarding subscription, so the rule holds for them too.
package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/sysconfig"
)

// Kinds of events besides sysconfig.KindConfig and sysconfig.KindDict. The
// key is a user id (decimal) or a session id; "" means all of them.
const (
	// KindPermission: a user's cached permission set was dropped.
	KindPermission = "permission"
	// KindScope: a user's cached data scope was dropped.
	KindScope = "scope"
	// KindSession: a session's cached active mark was dropped (logout,
	// force-logout, disabled account, password change).
	KindSession = "session"
)

// Kinds lists every kind a Relay carries; a resync publishes one
// all-keys event of each.
var Kinds = []string{sysconfig.KindConfig, sysconfig.KindDict, KindPermission, KindScope, KindSession}

// DefaultChannel is the channel name after the key prefix. Pub/sub channels
// are global to a Redis server (SELECT does not separate them): the key
// prefix is what keeps two deployments on one server apart.
const DefaultChannel = "events"

const (
	defaultQueue   = 1024
	receiveTimeout = 15 * time.Second
	publishTimeout = 3 * time.Second
	retryEvery     = time.Second
	startTimeout   = 5 * time.Second
	// resyncKind is the wire kind of a resync request.
	resyncKind = "*"
)

// Options configures a Relay.
type Options struct {
	// Channel is the Redis channel (required; the kernel uses
	// Service:Cache:Redis:KeyPrefix + DefaultChannel).
	Channel string
	// Origin identifies this Relay on the wire (default: 16 random hex
	// digits). Messages carrying it are ignored on receipt.
	Origin string
	// Queue bounds the events waiting to be published (default 1024). When
	// it is full the event is dropped and a resync is sent instead.
	Queue int
	// Log receives connection trouble (warnings) and relayed events
	// (debug). Nil discards.
	Log hclog.Logger
}

// message is the wire form of an event.
type message struct {
	Origin string `json:"o"`
	Kind   string `json:"k"`
	Key    string `json:"v,omitempty"`
}

// Relay forwards this process's change events to Redis and Redis's to this
// process. It is safe for concurrent use.
type Relay struct {
	client  *redis.Client
	ps      *redis.PubSub
	channel string
	origin  string
	log     hclog.Logger

	queue     chan sysconfig.Event
	resync    atomic.Bool // a resync message is owed to the other replicas
	seenDrops uint64      // sysconfig.Dropped() last seen (publisher goroutine)
	stop      chan struct{}
	// recv bounds the subscription (cancelled first at Close); pub bounds
	// publishing (cancelled once the queue is drained).
	recv, pub             context.Context
	stopRecv, stopPublish context.CancelFunc
	wg                    sync.WaitGroup
	closeOnce             sync.Once

	sent, received, relayed, dropped atomic.Int64
}

// Start subscribes to the channel, waits (up to 5 s) until Redis confirms
// the subscription, and starts relaying. The client stays the caller's.
func Start(ctx context.Context, client *redis.Client, opts Options) (*Relay, error) {
	if client == nil || opts.Channel == "" {
		return nil, errors.New("bus: a client and a channel are required")
	}
	if opts.Origin == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("bus: origin: %w", err)
		}
		opts.Origin = hex.EncodeToString(b[:])
	}
	if opts.Queue <= 0 {
		opts.Queue = defaultQueue
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	r := &Relay{
		client: client, channel: opts.Channel, origin: opts.Origin, log: opts.Log,
		queue: make(chan sysconfig.Event, opts.Queue), stop: make(chan struct{}),
	}
	r.recv, r.stopRecv = context.WithCancel(context.Background())
	r.pub, r.stopPublish = context.WithCancel(context.Background())
	r.seenDrops = sysconfig.Dropped()
	sctx, scancel := context.WithTimeout(ctx, startTimeout)
	defer scancel()
	ps := client.Subscribe(sctx, opts.Channel)
	// The first reply is the subscription confirmation.
	if _, err := ps.ReceiveTimeout(sctx, startTimeout); err != nil {
		_ = ps.Close()
		r.stopRecv()
		r.stopPublish()
		return nil, fmt.Errorf("bus: subscribe to %q: %w", opts.Channel, err)
	}
	r.ps = ps
	register(r)
	r.wg.Add(2)
	go r.receive(ps)
	go r.publish()
	return r, nil
}

// Origin returns the id this Relay puts on its messages.
func (r *Relay) Origin() string { return r.origin }

// Stats are counters of a Relay.
type Stats struct {
	// Sent: events published to Redis. Received: messages from other
	// replicas. Relayed: events re-published in this process. Dropped:
	// events not sent (queue full or Redis unavailable).
	Sent, Received, Relayed, Dropped int64
}

// Stats returns the counters.
func (r *Relay) Stats() Stats {
	return Stats{Sent: r.sent.Load(), Received: r.received.Load(), Relayed: r.relayed.Load(), Dropped: r.dropped.Load()}
}

// Close stops relaying: the subscription ends, events still queued are
// published (bounded by a few seconds), and the goroutines exit.
func (r *Relay) Close() error {
	r.closeOnce.Do(func() {
		unregister(r)
		close(r.stop)
		r.stopRecv()
		_ = r.ps.Close() // unblocks the subscription read
		r.wg.Wait()
		r.stopPublish()
	})
	return nil
}

// enqueue hands an event to the publisher without blocking.
func (r *Relay) enqueue(e sysconfig.Event) {
	select {
	case r.queue <- e:
	default:
		r.dropped.Add(1)
		r.resync.Store(true)
	}
}

// publish sends queued events; after a failure it owes the other replicas a
// resync and retries that every second until Redis takes it.
func (r *Relay) publish() {
	defer r.wg.Done()
	tick := time.NewTicker(retryEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			r.drain()
			return
		case e := <-r.queue:
			r.checkDrops()
			r.flushResync()
			r.send(message{Origin: r.origin, Kind: e.Kind, Key: e.Key})
		case <-tick.C:
			r.checkDrops()
			r.flushResync()
		}
	}
}

// drain publishes what is queued at Close, within publishTimeout overall.
func (r *Relay) drain() {
	deadline := time.Now().Add(publishTimeout)
	for time.Now().Before(deadline) {
		select {
		case e := <-r.queue:
			r.send(message{Origin: r.origin, Kind: e.Kind, Key: e.Key})
		default:
			return
		}
	}
}

// checkDrops owes the other replicas a resync when this process dropped
// change events (a subscriber, maybe the forwarding one, fell more than
// sysconfig's buffer behind): what was lost is unknown. Echo marks are
// cleared too, since the echo they wait for may be among the lost.
func (r *Relay) checkDrops() {
	if d := sysconfig.Dropped(); d != r.seenDrops {
		r.seenDrops = d
		r.resync.Store(true)
		hub.mu.Lock()
		clear(hub.echo)
		hub.mu.Unlock()
		r.log.Warn("change events were dropped in this process; asking the other replicas to resync")
	}
}

func (r *Relay) flushResync() {
	if r.resync.Swap(false) {
		r.send(message{Origin: r.origin, Kind: resyncKind})
	}
}

func (r *Relay) send(m message) {
	raw, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(r.pub, publishTimeout)
	defer cancel()
	if err := r.client.Publish(ctx, r.channel, raw).Err(); err != nil {
		if !r.resync.Swap(true) {
			r.log.Warn("cannot publish change events to the other replicas; a resync follows when Redis answers", "error", err)
		}
		if m.Kind != resyncKind {
			r.dropped.Add(1)
		}
		return
	}
	if m.Kind == resyncKind {
		r.log.Info("asked the other replicas to drop their local state (resync)")
	}
	r.sent.Add(1)
}

// receive reads the subscription until Close. go-redis reconnects and
// resubscribes on the next read after a connection error; each restored
// subscription is followed by a local resync.
func (r *Relay) receive(ps *redis.PubSub) {
	defer r.wg.Done()
	broken := false
	for {
		msg, err := ps.ReceiveTimeout(r.recv, receiveTimeout)
		if r.recv.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Quiet channel: check the connection (a dead one is
				// replaced, and resubscribed, on the next read).
				if err := ps.Ping(r.recv); err != nil {
					broken = true
				}
				continue
			}
			if !broken {
				r.log.Warn("lost the change-event subscription; retrying", "error", err)
				broken = true
			}
			select {
			case <-time.After(retryEvery):
			case <-r.recv.Done():
				return
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && broken {
				broken = false
				r.log.Info("change-event subscription restored; dropping local state (resync)")
				r.resyncLocal()
			}
		case *redis.Message:
			r.handle(m.Payload)
		}
	}
}

func (r *Relay) handle(payload string) {
	var m message
	if err := json.Unmarshal([]byte(payload), &m); err != nil || m.Kind == "" {
		r.log.Debug("ignoring a malformed change event", "payload_len", len(payload))
		return
	}
	if m.Origin == r.origin {
		return
	}
	r.received.Add(1)
	if m.Kind == resyncKind {
		r.log.Debug("another replica asked for a resync", "origin", m.Origin)
		r.resyncLocal()
		return
	}
	r.log.Debug("relaying a change event from another replica", "kind", m.Kind, "key", m.Key, "origin", m.Origin)
	relayLocal(sysconfig.Event{Kind: m.Kind, Key: m.Key})
	r.relayed.Add(1)
}

// resyncLocal publishes one all-keys event of every kind in this process.
func (r *Relay) resyncLocal() {
	for _, k := range Kinds {
		relayLocal(sysconfig.Event{Kind: k})
		r.relayed.Add(1)
	}
}

// hub is the process-wide forwarding subscription shared by every Relay of
// the process, and the events being re-published locally (echo), which the
// subscription must not send out again.
var hub struct {
	mu     sync.Mutex
	relays map[*Relay]struct{}
	cancel func()
	echo   map[sysconfig.Event]int
}

func register(r *Relay) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.relays == nil {
		hub.relays = map[*Relay]struct{}{}
		hub.echo = map[sysconfig.Event]int{}
	}
	if len(hub.relays) == 0 {
		hub.cancel = sysconfig.Subscribe(forward)
	}
	hub.relays[r] = struct{}{}
}

func unregister(r *Relay) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if _, ok := hub.relays[r]; !ok {
		return
	}
	delete(hub.relays, r)
	if len(hub.relays) == 0 {
		hub.cancel()
		hub.cancel = nil
		clear(hub.echo)
	}
}

// forward is the subscription (sysconfig calls it on its own goroutine, in
// publication order): an event published in this process goes to every
// Relay's queue, unless it is the echo of an event being relayed in. When a
// local change and a relayed one are identical and concurrent, one of the
// two is forwarded (never none), and never before the local change was
// published.
func forward(e sysconfig.Event) {
	hub.mu.Lock()
	if n := hub.echo[e]; n > 0 {
		if n == 1 {
			delete(hub.echo, e)
		} else {
			hub.echo[e] = n - 1
		}
		hub.mu.Unlock()
		return
	}
	relays := make([]*Relay, 0, len(hub.relays))
	for r := range hub.relays {
		relays = append(relays, r)
	}
	hub.mu.Unlock()
	for _, r := range relays {
		r.enqueue(e)
	}
}

// relayLocal publishes an event received from another replica in this
// process, marking it so that forward does not send it back out (the mark
// is taken by the first identical event forward sees from now on).
func relayLocal(e sysconfig.Event) {
	hub.mu.Lock()
	if len(hub.relays) == 0 {
		hub.mu.Unlock()
		return
	}
	hub.echo[e]++
	hub.mu.Unlock()
	sysconfig.Publish(e)
}
