package host

import (
	"context"
	"strings"

	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// eventStore is the kernel's cache as its services see it: the configured
// store, plus a change event (sysconfig.Publish) after every successful
// removal of a permission set, a data scope or a session mark. Config and
// dictionary changes publish their own events (sysconfig.Changed,
// dict.Invalidate); these three kinds are dropped by authz, datascope and
// session through the store only, so the store is where their invalidation
// is seen. With Redis the bus relays the events to the other replicas.
type eventStore struct {
	cache.Store
}

// observed maps key prefixes to event kinds.
var observed = []struct{ prefix, kind string }{
	{authz.KeyPrefix, bus.KindPermission},
	{datascope.KeyPrefix, bus.KindScope},
	{session.KeyPrefix, bus.KindSession},
}

func withChangeEvents(s cache.Store) cache.Store { return eventStore{s} }

// Peek passes the copy-free read through (cache.Peeker).
func (s eventStore) Peek(ctx context.Context, key string) ([]byte, bool, error) {
	return cache.Peek(ctx, s.Store, key)
}

// Delete removes entries, then publishes one event per observed key.
func (s eventStore) Delete(ctx context.Context, keys ...string) error {
	if err := s.Store.Delete(ctx, keys...); err != nil {
		return err
	}
	for _, k := range keys {
		for _, o := range observed {
			if id, ok := strings.CutPrefix(k, o.prefix); ok && id != "" {
				sysconfig.Publish(sysconfig.Event{Kind: o.kind, Key: id})
				break
			}
		}
	}
	return nil
}

// DeletePrefix removes entries, then publishes an all-keys event for every
// observed kind whose keys the prefix reaches (a prefix inside one kind
// counts as all of that kind: over-reporting is safe, missing is not).
func (s eventStore) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	n, err := s.Store.DeletePrefix(ctx, prefix)
	if err != nil {
		return n, err
	}
	for _, o := range observed {
		if strings.HasPrefix(o.prefix, prefix) || strings.HasPrefix(prefix, o.prefix) {
			sysconfig.Publish(sysconfig.Event{Kind: o.kind})
		}
	}
	return n, nil
}
