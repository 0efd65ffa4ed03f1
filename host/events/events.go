// Package events is the kernel's change-event channel: one Bus per kernel,
// created by the kernel and handed to the services that publish (the
// runtime settings, the dictionaries, the permission resolver) and to the
// cross-replica relay (host/bus), which is today its only subscriber.
//
// An event tells that cached data was invalidated in this process; the
// invalidation has already happened when the event is published, so a
// subscriber only relays it (to other replicas) or drops a local copy.
// Events are typed: a publisher states what changed, nothing is inferred
// from cache keys.
package events

import (
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Event is one of ConfigChanged, DictChanged, PermissionsChanged,
// NoticePublished, NoticeRead, SessionsEnded, JobKillRequested,
// UserPushed.
type Event interface{ event() }

// ConfigChanged (the spec's ConfigChangedEvent): the cached value of a
// config key, and the site info built from it, were dropped. Key "" means
// every key.
type ConfigChanged struct{ Key string }

// DictChanged (the spec's DictChangedEvent): the cached items of a
// dictionary type were dropped. TypeCode "" means every type.
type DictChanged struct{ TypeCode string }

// PermissionsChanged: the cached permission set of a user was dropped.
// UserID 0 means every user.
type PermissionsChanged struct{ UserID int64 }

// NoticePublished: a notice was published (committed). The realtime hub
// pushes it to the connected receivers. ID 0 (a resync) means "a notice
// may have been missed": nothing is pushed, clients still poll.
type NoticePublished struct{ ID int64 }

// NoticeRead: a user read notices (one or all); the hub pushes the user's
// unread count to the user's other connections. UserID 0 means anyone.
type NoticeRead struct{ UserID int64 }

// SessionsEnded: the sessions were revoked (logout, force-logout, password
// change, disabled account, idle). The hub closes their connections with a
// force-logout message. No ids (a resync, or every session ended) means
// "re-check every connection's session".
type SessionsEnded struct{ SessionIDs []string }

// JobKillRequested: an operator asked to kill the run (sys_job_log id)
// LogID. Unlike the other events it invalidates nothing: the replica
// running the run cancels its context (host/job). The request is also
// recorded in the database, which the runner polls, so a lost message only
// delays the kill.
type JobKillRequested struct{ LogID int64 }

func (JobKillRequested) event() {}

// UserPushed: a message for every realtime connection of a user, on every
// replica (host/hub Push). Like JobKillRequested it invalidates nothing.
// Args are the JSON of the arguments.
type UserPushed struct {
	UserID int64
	Target string
	Args   []json.RawMessage
}

func (UserPushed) event() {}

func (ConfigChanged) event()      {}
func (DictChanged) event()        {}
func (PermissionsChanged) event() {}
func (NoticePublished) event()    {}
func (NoticeRead) event()         {}
func (SessionsEnded) event()      {}

// subscriberBuffer is how many events a slow subscriber may fall behind
// before further events to it are dropped (and counted).
const subscriberBuffer = 1024

type subscriber struct {
	ch        chan Event
	done      chan struct{}
	localOnly bool
}

// Bus delivers events to its subscribers. The zero value is not usable:
// use New. A nil *Bus publishes nothing, so a service built without one
// (tests, tools) simply has no subscribers.
type Bus struct {
	mu      sync.RWMutex
	subs    map[uint64]*subscriber
	nextID  uint64
	dropped atomic.Uint64
}

// New returns a Bus without subscribers.
func New() *Bus { return &Bus{subs: map[uint64]*subscriber{}} }

// Subscribe registers fn for every event of the Bus, published here or
// relayed in from another replica, and returns the function that
// unregisters it. fn runs on its own goroutine, in publication order: a
// slow subscriber never blocks a publisher (past its buffer of 1024
// events, further events to it are dropped and counted by Dropped).
func (b *Bus) Subscribe(fn func(Event)) (cancel func()) { return b.subscribe(fn, false) }

// SubscribeLocal is Subscribe for the events published by Publish only,
// not those relayed in by Relay: what a relay forwards to other replicas.
func (b *Bus) SubscribeLocal(fn func(Event)) (cancel func()) { return b.subscribe(fn, true) }

func (b *Bus) subscribe(fn func(Event), localOnly bool) func() {
	sub := &subscriber{ch: make(chan Event, subscriberBuffer), done: make(chan struct{}), localOnly: localOnly}
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.subs[id] = sub
	b.mu.Unlock()
	go func() {
		for {
			select {
			case e := <-sub.ch:
				deliver(fn, e)
			case <-sub.done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, id)
			b.mu.Unlock()
			close(sub.done)
		})
	}
}

// Publish hands e, a change made in this process, to every subscriber
// without waiting for any of them. A panicking subscriber is recovered and
// skipped: the change behind an event is already committed.
func (b *Bus) Publish(e Event) { b.publish(e, false) }

// Relay hands e, a change made by another replica, to the subscribers of
// every event (not to those of SubscribeLocal, so it is not sent back out).
func (b *Bus) Relay(e Event) { b.publish(e, true) }

func (b *Bus) publish(e Event, remote bool) {
	if b == nil || e == nil {
		return
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, sub := range b.subs {
		if remote && sub.localOnly {
			continue
		}
		select {
		case sub.ch <- e:
		default:
			b.dropped.Add(1)
		}
	}
}

// Dropped counts events not delivered because a subscriber fell behind.
func (b *Bus) Dropped() uint64 {
	if b == nil {
		return 0
	}
	return b.dropped.Load()
}

func deliver(fn func(Event), e Event) {
	defer func() { _ = recover() }()
	fn(e)
}
