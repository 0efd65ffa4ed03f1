// Package bus carries a kernel's change events between replicas over
// Redis pub/sub.
//
// A change event (host/events) tells that cached data derived from a
// config key, a dictionary type or a user's permissions was invalidated.
// Events are published on the kernel's events.Bus after the change is
// committed and the shared cache entry is dropped. A Relay subscribes to
// the events published on its Bus and publishes each one on a Redis
// channel; every other replica's Relay receives it and relays it into its
// own Bus (events.Bus.Relay), so a subscriber there (a replica-local
// cache) drops its copy before the next request. The kernel keeps no
// replica-local state today: with Redis every cached entry is already
// shared, and the relay is the hook later local caches subscribe through.
//
// Delivery is at most once (Redis pub/sub keeps nothing for a disconnected
// subscriber). To stay safe anyway a Relay relays, locally, one event
// with an empty key for every kind ("everything of this kind changed")
// after its subscription is restored, and asks the other replicas to do the
// same (a resync message) after it could not publish or had to drop events.
//
// Loops are avoided in two ways: a replica ignores the messages it sent
// itself (each Relay has a random origin id), and an event a Relay relays
// into its Bus is not sent out again (the Relay subscribes to the events
// published on the Bus only, events.Bus.SubscribeLocal).
package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/events"
)

// Wire kinds of the events; the key ("v") is the config key, the type
// code or the user id (decimal), absent for all of them.
const (
	// KindConfig: events.ConfigChanged.
	KindConfig = "config"
	// KindDict: events.DictChanged.
	KindDict = "dict"
	// KindPermission: events.PermissionsChanged.
	KindPermission = "permission"
	// KindNotice: events.NoticePublished (key: the notice id).
	KindNotice = "notice"
	// KindNoticeRead: events.NoticeRead (key: the user id).
	KindNoticeRead = "notice-read"
	// KindSession: events.SessionsEnded (key: the session ids, comma
	// separated; absent: re-check every connection).
	KindSession = "session"

	// KindJobKill: events.JobKillRequested (the sys_job_log id). It is not
	// in Kinds: it invalidates nothing, so a resync has nothing to relay
	// for it (the scheduler's database poll covers a lost message).
	KindJobKill = "jobkill"
	// KindPush: events.UserPushed (key: {"u":user id,"t":target,"a":[args]}
	// in JSON). Not in Kinds either: a lost push is not recovered.
	KindPush = "push"
)

// Kinds lists every kind a Relay carries; a resync relays one all-keys
// event of each.
var Kinds = []string{KindConfig, KindDict, KindPermission, KindNotice, KindNoticeRead, KindSession}

// encode is the wire form of an event (ok false for an event the wire does
// not carry).
func encode(e events.Event) (kind, key string, ok bool) {
	switch e := e.(type) {
	case events.ConfigChanged:
		return KindConfig, e.Key, true
	case events.DictChanged:
		return KindDict, e.TypeCode, true
	case events.PermissionsChanged:
		if e.UserID == 0 {
			return KindPermission, "", true
		}
		return KindPermission, strconv.FormatInt(e.UserID, 10), true
	case events.NoticePublished:
		return KindNotice, idKey(e.ID), true
	case events.NoticeRead:
		return KindNoticeRead, idKey(e.UserID), true
	case events.SessionsEnded:
		return KindSession, strings.Join(e.SessionIDs, ","), true

	case events.UserPushed:
		if e.UserID <= 0 || e.Target == "" {
			return "", "", false
		}
		raw, err := json.Marshal(pushKey{UserID: e.UserID, Target: e.Target, Args: e.Args})
		if err != nil {
			return "", "", false
		}
		return KindPush, string(raw), true
	case events.JobKillRequested:
		if e.LogID <= 0 {
			return "", "", false
		}
		return KindJobKill, strconv.FormatInt(e.LogID, 10), true
	}
	return "", "", false
}

// decode is the event of a wire kind and key (ok false for a kind or key
// this version does not know, e.g. from a newer replica).
func decode(kind, key string) (events.Event, bool) {
	switch kind {
	case KindConfig:
		return events.ConfigChanged{Key: key}, true
	case KindDict:
		return events.DictChanged{TypeCode: key}, true
	case KindPermission:
		if key == "" {
			return events.PermissionsChanged{}, true
		}
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil || id == 0 {
			return nil, false
		}
		return events.PermissionsChanged{UserID: id}, true
	case KindNotice, KindNoticeRead:
		var id int64
		if key != "" {
			var err error
			if id, err = strconv.ParseInt(key, 10, 64); err != nil || id <= 0 {
				return nil, false
			}
		}
		if kind == KindNotice {
			return events.NoticePublished{ID: id}, true
		}
		return events.NoticeRead{UserID: id}, true
	case KindSession:
		if key == "" {
			return events.SessionsEnded{}, true
		}
		return events.SessionsEnded{SessionIDs: strings.Split(key, ",")}, true

	case KindPush:
		var p pushKey
		if json.Unmarshal([]byte(key), &p) != nil || p.UserID <= 0 || p.Target == "" {
			return nil, false
		}
		return events.UserPushed{UserID: p.UserID, Target: p.Target, Args: p.Args}, true
	case KindJobKill:
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil || id <= 0 {
			return nil, false
		}
		return events.JobKillRequested{LogID: id}, true
	}
	return nil, false
}

// pushKey is the wire key of a UserPushed event.
type pushKey struct {
	UserID int64             `json:"u"`
	Target string            `json:"t"`
	Args   []json.RawMessage `json:"a,omitempty"`
}

// idKey is the wire key of an id: absent for 0 (all).
func idKey(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

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
	// Lag, when not nil, receives the publication time of every event
	// received from another replica (the kernel's
	// adminkernel_cache_invalidation_lag_seconds).
	Lag func(sent time.Time)
}

// message is the wire form of an event.
type message struct {
	Origin string `json:"o"`
	Kind   string `json:"k"`
	Key    string `json:"v,omitempty"`
	// Sent is the publication time (Unix nanoseconds), for Options.Lag;
	// 0 from a replica that does not send it.
	Sent int64 `json:"s,omitempty"`
}

// Relay forwards the change events published on its Bus to Redis and
// Redis's into its Bus. It is safe for concurrent use.
type Relay struct {
	lag     func(sent time.Time)
	events  *events.Bus
	cancel  func()
	client  redis.UniversalClient
	ps      *redis.PubSub
	channel string
	origin  string
	log     hclog.Logger

	queue     chan message
	resync    atomic.Bool // a resync message is owed to the other replicas
	seenDrops uint64      // events.Dropped() last seen (publisher goroutine)
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
// the subscription, and starts relaying between ev and the channel. The
// client and the Bus stay the caller's.
func Start(ctx context.Context, ev *events.Bus, client redis.UniversalClient, opts Options) (*Relay, error) {
	if ev == nil || client == nil || opts.Channel == "" {
		return nil, errors.New("bus: an events bus, a client and a channel are required")
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
		lag:    opts.Lag,
		events: ev, client: client, channel: opts.Channel, origin: opts.Origin, log: opts.Log,
		queue: make(chan message, opts.Queue), stop: make(chan struct{}),
	}
	r.recv, r.stopRecv = context.WithCancel(context.Background())
	r.pub, r.stopPublish = context.WithCancel(context.Background())
	r.seenDrops = ev.Dropped()
	sctx, scancel := context.WithTimeout(ctx, startTimeout)
	defer scancel()
	ps := rediscache.Subscribe(sctx, client, opts.Channel)
	// The first reply is the subscription confirmation.
	if _, err := ps.ReceiveTimeout(sctx, startTimeout); err != nil {
		_ = ps.Close()
		r.stopRecv()
		r.stopPublish()
		return nil, fmt.Errorf("bus: subscribe to %q: %w", opts.Channel, err)
	}
	r.ps = ps
	r.cancel = ev.SubscribeLocal(r.enqueue)
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
		r.cancel()
		close(r.stop)
		r.stopRecv()
		_ = r.ps.Close() // unblocks the subscription read
		r.wg.Wait()
		r.stopPublish()
	})
	return nil
}

// enqueue hands an event published on the Bus to the publisher without
// blocking.
func (r *Relay) enqueue(e events.Event) {
	kind, key, ok := encode(e)
	if !ok {
		return
	}
	select {
	case r.queue <- message{Origin: r.origin, Kind: kind, Key: key}:
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
		case m := <-r.queue:
			r.checkDrops()
			r.flushResync()
			r.send(m)
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
		case m := <-r.queue:
			r.send(m)
		default:
			return
		}
	}
}

// checkDrops owes the other replicas a resync when the Bus dropped change
// events (a subscriber, maybe this Relay, fell more than the Bus's buffer
// behind): what was lost is unknown.
func (r *Relay) checkDrops() {
	if d := r.events.Dropped(); d != r.seenDrops {
		r.seenDrops = d
		r.resync.Store(true)
		r.log.Warn("change events were dropped in this process; asking the other replicas to resync")
	}
}

func (r *Relay) flushResync() {
	if r.resync.Swap(false) {
		r.send(message{Origin: r.origin, Kind: resyncKind})
	}
}

func (r *Relay) send(m message) {
	m.Sent = time.Now().UnixNano()
	raw, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(r.pub, publishTimeout)
	defer cancel()
	if err := rediscache.Publish(ctx, r.client, r.channel, raw).Err(); err != nil {
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
			if rediscache.Subscribed(m) && broken {
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
	if r.lag != nil && m.Sent > 0 {
		r.lag(time.Unix(0, m.Sent))
	}
	if m.Kind == resyncKind {
		r.log.Debug("another replica asked for a resync", "origin", m.Origin)
		r.resyncLocal()
		return
	}
	e, ok := decode(m.Kind, m.Key)
	if !ok {
		r.log.Debug("ignoring a change event of an unknown kind", "kind", m.Kind, "origin", m.Origin)
		return
	}
	key := m.Key
	if m.Kind == KindPush {
		key = "" // a module's payload stays out of the log
	}
	r.log.Debug("relaying a change event from another replica", "kind", m.Kind, "key", key, "origin", m.Origin)
	r.events.Relay(e)
	r.relayed.Add(1)
}

// resyncLocal relays one all-keys event of every kind into the Bus.
func (r *Relay) resyncLocal() {
	for _, k := range Kinds {
		e, _ := decode(k, "")
		r.events.Relay(e)
		r.relayed.Add(1)
	}
}
