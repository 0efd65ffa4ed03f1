package events_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// A subscriber that blocks must not block the publisher; past its buffer
// its events are dropped and counted.
func TestSlowSubscriberDoesNotBlockPublisher(t *testing.T) {
	b := events.New()
	release := make(chan struct{})
	var seen atomic.Int64
	cancel := b.Subscribe(func(events.Event) {
		<-release
		seen.Add(1)
	})
	defer cancel()
	done := make(chan struct{})
	go func() {
		for range 5000 {
			b.Publish(events.ConfigChanged{Key: "slow.test"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a stuck subscriber")
	}
	if b.Dropped() == 0 {
		t.Fatal("no event was counted as dropped although the subscriber was stuck")
	}
	close(release)
	poll.Until(t, 5*time.Second, "the buffered events", func() bool { return seen.Load() > 0 })
}

// Relayed events reach Subscribe but not SubscribeLocal; two buses share
// nothing; a nil bus publishes nothing.
func TestLocalAndRelayed(t *testing.T) {
	a, other := events.New(), events.New()
	var all, local, foreign atomic.Int64
	defer a.Subscribe(func(events.Event) { all.Add(1) })()
	defer a.SubscribeLocal(func(events.Event) { local.Add(1) })()
	defer other.Subscribe(func(events.Event) { foreign.Add(1) })()
	a.Publish(events.DictChanged{TypeCode: "gender"})
	a.Relay(events.PermissionsChanged{UserID: 7})
	poll.Until(t, 5*time.Second, "both events", func() bool { return all.Load() == 2 && local.Load() == 1 })
	// The sentinel: published after the relayed one, seen by the local
	// subscriber right after the first, so the relayed one was skipped.
	a.Publish(events.ConfigChanged{})
	poll.Until(t, 5*time.Second, "the sentinel", func() bool { return local.Load() == 2 && all.Load() == 3 })
	if foreign.Load() != 0 {
		t.Fatalf("another bus saw %d events", foreign.Load())
	}
	var none *events.Bus
	none.Publish(events.ConfigChanged{})
	if none.Dropped() != 0 {
		t.Fatal("a nil bus counted drops")
	}
}
