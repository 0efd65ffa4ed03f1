package externalauth

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/oncecap"
)

// DefaultMaxPendingStates is the cap on pending authorize states when
// Options.MaxPendingStates is 0 (Service:ExternalAuth:MaxPendingStates).
const DefaultMaxPendingStates = 100000

// stateCountPrefix names the counters of issued, not yet taken states, one
// per time bucket (counter space of cache.Store: exempt from eviction, each
// with its own TTL).
const stateCountPrefix = "extauth:statecount:"

// stateSlots bounds the authorize states waiting for their callback (see
// oncecap.Cap). Authorize acquires a slot before it calls the provider and
// stores it in the state record (stateRecord.Slot); taking the state
// (callback, or the burn of a failed callback) releases it. A callback is
// never refused by the cap. With Redis the counters are shared, so the cap
// counts every replica's states.
type stateSlots struct{ cap *oncecap.Cap }

func newStateSlots(store cache.Store, maxStates int, log hclog.Logger) *stateSlots {
	if maxStates <= 0 {
		maxStates = DefaultMaxPendingStates
	}
	return &stateSlots{cap: oncecap.New(store, oncecap.Kind{
		Prefix:  stateCountPrefix,
		Values:  "pending authorize states",
		Request: "external login authorize",
		Setting: "Service:ExternalAuth:MaxPendingStates",
	}, maxStates, StateTTL, log)}
}

// acquire reserves a slot for a new state and returns it to store with
// the state; at the cap it answers 429 / 40008 with retryAfterSeconds, and
// a cache error fails closed.
func (l *stateSlots) acquire(ctx context.Context) (int64, error) {
	slot, err := l.cap.Acquire(ctx)
	return int64(slot), err
}

// release frees the slot of a taken state (0: a record without a slot).
func (l *stateSlots) release(ctx context.Context, slot int64) {
	l.cap.Release(ctx, oncecap.Slot(slot))
}
