package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/events"
)

func TestStartNeedsRedis(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	ev := events.New()
	if _, err := bus.Start(context.Background(), ev, c, bus.Options{Channel: "x"}); err == nil {
		t.Fatal("Start without Redis: err = nil")
	}
	if _, err := bus.Start(context.Background(), ev, c, bus.Options{}); err == nil {
		t.Fatal("Start without a channel: err = nil")
	}
	if _, err := bus.Start(context.Background(), nil, c, bus.Options{Channel: "x"}); err == nil {
		t.Fatal("Start without an events bus: err = nil")
	}
}
