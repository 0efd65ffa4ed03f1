package rediscache

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The kernel's pub/sub channels (change events, near-cache invalidations)
// go through Subscribe and Publish so that they reach every replica on
// every topology:
//
//   - a single server or Sentinel: SUBSCRIBE / PUBLISH on the master (the
//     failover client resubscribes on the new master after a failover);
//   - a cluster: sharded pub/sub, SSUBSCRIBE / SPUBLISH (Redis 7). Every
//     subscriber of a channel is connected to the master owning the
//     channel's slot, so SPUBLISH's answer counts all of them — the near
//     cache waits for that many acknowledgements. A classic PUBLISH on a
//     cluster is broadcast over the cluster bus to every node and would
//     reach every replica too, but its answer counts only the receivers
//     on the node it was sent to, and it costs every node's bandwidth.

// Subscribe subscribes client to channel (SSUBSCRIBE on a cluster).
func Subscribe(ctx context.Context, client redis.UniversalClient, channel string) *redis.PubSub {
	if cc, ok := client.(*redis.ClusterClient); ok {
		return cc.SSubscribe(ctx, channel)
	}
	return client.Subscribe(ctx, channel)
}

// Publish publishes msg on channel (SPUBLISH on a cluster) and returns the
// number of subscribers that received it.
func Publish(ctx context.Context, client redis.UniversalClient, channel string, msg any) *redis.IntCmd {
	if cc, ok := client.(*redis.ClusterClient); ok {
		return cc.SPublish(ctx, channel, msg)
	}
	return client.Publish(ctx, channel, msg)
}

// Subscribed reports whether a subscription message confirms a
// (re)subscription: "subscribe", or "ssubscribe" on a cluster.
func Subscribed(m *redis.Subscription) bool {
	return m.Kind == "subscribe" || m.Kind == "ssubscribe"
}
