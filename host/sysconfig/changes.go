package sysconfig

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
)

// Keys that feed the site info besides the sys.site.* keys (wire contract
// §6 item 1).
const (
	KeyCaptchaEnabled  = "sys.security.captcha.enabled"
	KeySmsLoginEnabled = "sys.security.smsLogin.enabled"
	// SitePrefix is the prefix of the site keys (title, subtitle, ...).
	SitePrefix = "sys.site."
)

// SiteKey is the cache key of the site info built from the site keys. It
// lives under KeyPrefix, so InvalidateAll drops it too, and it cannot clash
// with a config key ("@" is not allowed in one).
const SiteKey = KeyPrefix + "@site"

// AffectsSite reports whether a config key feeds the site info.
func AffectsSite(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	return strings.HasPrefix(k, strings.ToLower(SitePrefix)) ||
		k == strings.ToLower(KeyCaptchaEnabled) || k == strings.ToLower(KeySmsLoginEnabled)
}

// Changed is the config service's InvalidateAsync: it drops the cached
// keys and, when any of them feeds the site info, the site entry, then
// publishes one KindConfig event per key. Call it after a change to the
// sys_config rows has been committed; the next read goes to the database.
func (s *Service) Changed(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	ck := make([]string, 0, len(keys)+1)
	site := false
	for _, k := range keys {
		ck = append(ck, KeyPrefix+k)
		site = site || AffectsSite(k)
	}
	if site {
		ck = append(ck, SiteKey)
	}
	if err := s.store.Delete(ctx, ck...); err != nil {
		return err
	}
	for _, k := range keys {
		Publish(Event{Kind: KindConfig, Key: k})
	}
	return nil
}

// ChangedAll drops every cached config entry (site info included), publishes
// one KindConfig event with an empty key and returns how many entries were
// dropped: the configuration cache-clearing action.
func (s *Service) ChangedAll(ctx context.Context) (int, error) {
	n, err := s.InvalidateAll(ctx)
	if err != nil {
		return n, err
	}
	Publish(Event{Kind: KindConfig})
	return n, nil
}

// Event kinds.
const (
	// KindConfig: a config key changed (ConfigChangedEvent); Key is the
	// config key, "" for all of them.
	KindConfig = "config"
	// KindDict: a dictionary changed (DictChangedEvent); Key is the type
	// code, "" for all of them.
	KindDict = "dict"
)

// Event tells that cached data derived from a config key or a dictionary
// type was invalidated in this process. The invalidation has already
// happened when the event is published; subscribers only relay it (for
// example to other replicas over Redis when the cache is in-process).
type Event struct {
	Kind string
	Key  string
}

// subscriberBuffer is how many events a slow subscriber may fall behind
// before further events to it are dropped (and counted).
const subscriberBuffer = 1024

type subscriber struct {
	ch   chan Event
	done chan struct{}
}

var (
	subsMu  sync.RWMutex
	subs    = map[uint64]*subscriber{}
	nextID  uint64
	dropped atomic.Uint64
)

// Subscribe registers fn for every event published in this process and
// returns the function that unregisters it. fn runs on its own goroutine,
// in publication order: a slow subscriber never blocks a publisher (past
// its buffer of 1024 events, further events to it are dropped and counted
// by Dropped). Events are process-wide: with several kernels in one process
// (tests) a subscriber sees the events of all of them.
func Subscribe(fn func(Event)) (cancel func()) {
	sub := &subscriber{ch: make(chan Event, subscriberBuffer), done: make(chan struct{})}
	subsMu.Lock()
	nextID++
	id := nextID
	subs[id] = sub
	subsMu.Unlock()
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
			subsMu.Lock()
			delete(subs, id)
			subsMu.Unlock()
			close(sub.done)
		})
	}
}

// Publish hands e to every subscriber without waiting for any of them. The
// change behind an event is already committed, so a panicking subscriber is
// recovered and skipped: it never turns a successful change into a failed
// request.
func Publish(e Event) {
	subsMu.RLock()
	defer subsMu.RUnlock()
	for _, sub := range subs {
		select {
		case sub.ch <- e:
		default:
			dropped.Add(1)
		}
	}
}

// Dropped counts events not delivered because a subscriber fell behind.
func Dropped() uint64 { return dropped.Load() }

func deliver(fn func(Event), e Event) {
	defer func() { _ = recover() }()
	fn(e)
}
