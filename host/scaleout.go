package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/cache/nearcache"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/dict"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/snowflake"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// scaleOut is what a kernel runs only with the shared (Redis) cache, for
// running several replicas: the snowflake worker lease and the relay of
// the kernel's change events (Kernel.Events) between replicas.
type scaleOut struct {
	lease *snowflake.Lease
	relay *bus.Relay
}

// NearPrefixes are the cache entries every replica keeps a near copy of
// (host/cache/nearcache): the ones read on every request (session marks,
// permission sets, data scopes, config values) and dictionaries.
var NearPrefixes = []string{session.KeyPrefix, authz.KeyPrefix, datascope.KeyPrefix, sysconfig.KeyPrefix, dict.KeyPrefix, reauth.ListPrefix}

// openShared opens the configured cache and, with Redis, leases the
// snowflake worker id and starts the event relay. It runs before the
// database is seeded, so every id the kernel generates carries the leased
// worker id.
//
// Worker ids with Redis: Service:Snowflake:WorkerId 0 (the default) means
// "lease one": the lowest id no other replica holds (SET NX
// <KeyPrefix>snowflake:worker:<n> with a one-minute TTL, renewed every 20
// s, deleted at shutdown); startup fails when all 64 are held. An id of 1
// to 63 is used as configured and reserved in Redis so that leasing
// replicas skip it; when another live replica holds it, Production refuses
// to start (naming the holder: host name, process id and a random tag, the
// lease's value) and the other environments log a warning. Without Redis
// the configured id is used as is (one replica).
func (k *Kernel) openShared(ctx context.Context) error {
	store, err := openCache(ctx, k.cfg, rediscache.WithTracker(k.outages.cache), rediscache.WithHook(k.tracer.RedisHook()))
	if err != nil {
		return err
	}
	rc, shared := store.(*rediscache.Cache)
	if shared {
		// go-redis' own lines through this kernel's log (JSON stays JSON).
		rediscache.RouteLibraryLog(k.logs.For("AdminKernel.Redis"))
	}
	if secs := k.cfg.Service.Cache.NearCacheSeconds; secs > 0 {
		opts := nearcache.Options{
			Prefixes:   NearPrefixes,
			TTL:        time.Duration(secs) * time.Second,
			MaxEntries: nearcache.DefaultMaxEntries,
			Log:        k.logs.For("AdminKernel.NearCache"),
			Lag:        func(sent time.Time) { k.metrics.InvalidationLag("near_cache", sent) },
		}
		if limit := k.cfg.Service.Cache.MemoryEntryLimit; limit > 0 {
			opts.MaxEntries = min(opts.MaxEntries, limit)
		}
		var client redis.UniversalClient // in process: local only
		if shared {
			client, opts.Channel = rc.Client(), rc.Prefix()+nearcache.ChannelSuffix
		}
		near, err := nearcache.New(ctx, store, client, opts)
		if err != nil {
			_ = store.Close()
			return err
		}
		store = near
	}
	k.store = k.metrics.CountCache(store)
	if !shared {
		return nil
	}
	k.scale = &scaleOut{}
	log := k.logs.For("AdminKernel.Snowflake")
	configured := k.cfg.Service.Snowflake.WorkerID
	owner, err := leaseOwner()
	if err != nil {
		return err
	}
	lease, err := snowflake.AcquireLease(ctx, rc, snowflake.LeaseOptions{
		Owner: owner, Fixed: configured != 0, Worker: configured, Generator: k.ids,
		Warn: log.Warn, Info: log.Info,
	})
	switch {
	case err == nil:
		k.scale.lease = lease
		log.Info("snowflake worker id leased", "worker", lease.Worker(), "configured", configured != 0, "owner", owner)
	case errors.Is(err, snowflake.ErrWorkerTaken):
		holder := workerHolder(ctx, rc, configured)
		if k.cfg.IsProduction() {
			// Two replicas on one worker id can issue the same id in the
			// same millisecond: in Production that is refused.
			return fmt.Errorf("Service:Snowflake:WorkerId %d is leased by another live replica (%s): give every replica its own id, "+
				"or leave it 0 to lease a free one; a replica that crashed frees its id within %s", configured, holder, snowflake.DefaultLeaseTTL)
		}
		log.Warn("Service:Snowflake:WorkerId is leased by another replica: give every replica its own id, or leave it 0 to lease one "+
			"(a replica restarted within a minute of a crash may still hold it); refused in Production", "worker", configured, "holder", holder)
	default:
		return fmt.Errorf("snowflake worker id: %w", err)
	}
	relay, err := bus.Start(ctx, k.events, rc.Client(), bus.Options{
		Channel: rc.Prefix() + bus.DefaultChannel,
		Log:     k.logs.For("AdminKernel.Bus"),
		Lag:     func(sent time.Time) { k.metrics.InvalidationLag("event", sent) },
	})
	if err != nil {
		return err
	}
	k.scale.relay = relay
	return nil
}

// close stops the relay and releases the lease (before the cache closes).
func (s *scaleOut) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	if s.relay != nil {
		errs = append(errs, s.relay.Close())
	}
	if s.lease != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		errs = append(errs, s.lease.Release(ctx))
		cancel()
	}
	return errors.Join(errs...)
}

// Relay returns the cross-replica event relay (nil without Redis).
func (k *Kernel) Relay() *bus.Relay {
	if k.scale == nil {
		return nil
	}
	return k.scale.relay
}

// WorkerLease returns the snowflake worker lease (nil without Redis, or
// when a configured id could not be reserved).
func (k *Kernel) WorkerLease() *snowflake.Lease {
	if k.scale == nil {
		return nil
	}
	return k.scale.lease
}

// leaseOwner is the value this kernel writes into its worker lease: host
// name, process id and a random tag (two kernels of one process differ),
// so that a replica refused an id can name the one holding it.
func leaseOwner() (string, error) {
	var tag [4]byte
	if _, err := rand.Read(tag[:]); err != nil {
		return "", fmt.Errorf("snowflake lease owner: %w", err)
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "unknown-host"
	}
	return fmt.Sprintf("%s pid %d #%s", name, os.Getpid(), hex.EncodeToString(tag[:])), nil
}

// workerHolder reads who holds the lease of worker ("unknown" when it
// cannot be read, or expired meanwhile).
func workerHolder(ctx context.Context, rc *rediscache.Cache, worker int) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := rc.Client().Get(ctx, rc.Prefix()+snowflake.LeaseKeyPrefix+strconv.Itoa(worker)).Result()
	if err != nil || v == "" {
		return "holder unknown"
	}
	return "held by " + v
}
