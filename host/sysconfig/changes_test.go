package sysconfig_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/sysconfig"
)

// A subscriber that blocks must not block the publisher; past its buffer
// its events are dropped and counted.
func TestSlowSubscriberDoesNotBlockPublisher(t *testing.T) {
	release := make(chan struct{})
	var seen atomic.Int64
	cancel := sysconfig.Subscribe(func(sysconfig.Event) {
		<-release
		seen.Add(1)
	})
	defer cancel()
	before := sysconfig.Dropped()
	done := make(chan struct{})
	go func() {
		for range 5000 {
			sysconfig.Publish(sysconfig.Event{Kind: sysconfig.KindConfig, Key: "slow.test"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a stuck subscriber")
	}
	if sysconfig.Dropped() == before {
		t.Fatal("no event was counted as dropped although the subscriber was stuck")
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for seen.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if seen.Load() == 0 {
		t.Fatal("the subscriber never received the buffered events")
	}
}
