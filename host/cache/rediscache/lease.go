package rediscache

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Leases are keys held by one owner for a while and renewed by it (the
// snowflake worker ids of the replicas). They share the prefixed keyspace;
// callers give them their own key names.

// renewScript extends a lease only while owner holds it. KEYS[1] lease;
// ARGV[1] owner; ARGV[2] ttl in ms.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// releaseScript deletes a lease only while owner holds it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0`)

// TryLease takes key for owner for ttl when nobody holds it (SET NX PX) and
// reports whether it did.
func (c *Cache) TryLease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("rediscache: lease %q: ttl %s must be positive", key, ttl)
	}
	if err := ctx.Err(); err != nil {
		return false, wrap("lease", err)
	}
	op := c.track.Begin()
	ok, err := c.client.SetNX(ctx, c.key(key), owner, ttl).Result()
	if err = c.done(op, "lease", err); err != nil {
		return false, err
	}
	return ok, nil
}

// RenewLease extends key to ttl from now when owner still holds it, and
// reports whether it does (false: the lease expired or another owner took
// it).
func (c *Cache) RenewLease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("rediscache: renew lease %q: ttl %s must be positive", key, ttl)
	}
	if err := ctx.Err(); err != nil {
		return false, wrap("renew lease", err)
	}
	op := c.track.Begin()
	n, err := renewScript.Run(ctx, c.client, []string{c.key(key)}, owner, max(ttl.Milliseconds(), 1)).Int64()
	if err = c.done(op, "renew lease", err); err != nil {
		return false, err
	}
	return n == 1, nil
}

// ReleaseLease deletes key when owner holds it (another owner's lease is
// left alone).
func (c *Cache) ReleaseLease(ctx context.Context, key, owner string) error {
	if err := ctx.Err(); err != nil {
		return wrap("release lease", err)
	}
	op := c.track.Begin()
	return c.done(op, "release lease", releaseScript.Run(ctx, c.client, []string{c.key(key)}, owner).Err())
}

// Prefix returns the key prefix (Service:Cache:Redis:KeyPrefix); the
// change-event channel is named after it.
func (c *Cache) Prefix() string { return c.prefix }
