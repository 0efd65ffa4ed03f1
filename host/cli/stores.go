package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/cache/nearcache"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/logging"
	"github.com/adminkernel/kernel/host/snowflake"
)

// stores is what the maintenance commands (user, session, config get/set)
// act on: the configured database and, when Service:Cache:Provider is
// Redis, the shared cache the running replicas read. They need neither the
// signing key nor the rest of the service's settings (config.ValidateStores).
type stores struct {
	cfg  *config.Config
	logs *logging.Logs
	db   *database.DB
	// shared is the Redis cache, or nil with the in-process cache (whose
	// entries live inside the running service, out of a command's reach).
	// When the replicas keep near copies (Service:Cache:NearCacheSeconds >
	// 0) it is a near cache on the replicas' invalidation channel, so that a
	// Delete here drops their copies too before it returns, exactly as a
	// change made through the API does.
	shared cache.Store
	// redis is the Redis cache below shared (nil without Redis): its client
	// carries the change-event relay. Closing shared closes it.
	redis *rediscache.Cache
	// local stands in for the cache when there is no shared one: a private
	// in-process store (see cache).
	local cache.Store
	// lease holds the snowflake worker id of a command that creates rows
	// (withIDs) on Redis; nil otherwise.
	lease *snowflake.Lease
	// worker is the snowflake worker id of withIDs (-1 without it).
	worker int
}

// errNoSharedCache is returned by openStores(needShared=true) when the
// cache is the in-process one.
var errNoSharedCache = errors.New("Service:Cache:Provider is not Redis: the cache lives inside the running service")

// storeOptions are the optional parts of openStores.
type storeOptions struct {
	ids bool
}

// storeOption selects an optional part of openStores.
type storeOption func(*storeOptions)

// withIDs gives the database an id source, for commands that create rows.
// The ids come from a snowflake generator whose worker id does not collide
// with the running replicas' (see offlineWorker and leaseWorker).
func withIDs(o *storeOptions) { o.ids = true }

// offlineWorker is the worker id of a command that creates rows without
// Redis: without Redis one instance of the service runs, with the configured
// Service:Snowflake:WorkerId, so the command takes the highest id, 63, or 62
// when the service is configured with 63. (With Redis the command leases a
// free id like a replica does.)
func offlineWorker(configured int) int {
	if configured == snowflake.MaxWorker {
		return snowflake.MaxWorker - 1
	}
	return snowflake.MaxWorker
}

// openStores loads and checks the settings, opens the logs, the database and
// (with Redis) the shared cache. needShared makes an in-process cache an
// error (errNoSharedCache, wrapped by the caller with what to do instead).
func openStores(cmd *cobra.Command, load loader, needShared bool, options ...storeOption) (*stores, error) {
	var o storeOptions
	for _, opt := range options {
		opt(&o)
	}
	cfg, err := load()
	if err != nil {
		return nil, err
	}
	if err := cfg.ValidateStores(); err != nil {
		return nil, err
	}
	redis := cfg.Service.Cache.Provider == config.CacheRedis
	if needShared && !redis {
		return nil, errNoSharedCache
	}
	logs, err := logging.New(cfg.Logging, cfg.ContentRoot, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	logWarnings(logs, cfg)
	s := &stores{cfg: cfg, logs: logs, worker: -1}
	var dbOpts []database.Option
	var ids *snowflake.Generator
	if o.ids {
		// Worker 0 for now: with Redis the lease below sets the leased id
		// before any row is created; without Redis offlineWorker's.
		worker := 0
		if !redis {
			worker = offlineWorker(cfg.Service.Snowflake.WorkerID)
		}
		if ids, err = snowflake.New(worker); err != nil {
			s.close()
			return nil, err
		}
		s.worker = worker
		dbOpts = append(dbOpts, database.WithIDs(ids.Next))
	}
	if s.db, err = database.Open(cmd.Context(), cfg, logs.For("AdminKernel.Database"), dbOpts...); err != nil {
		s.close()
		return nil, err
	}
	if redis {
		rc, err := rediscache.New(cmd.Context(), cfg.Service.Cache.Redis)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("cache: %w", err)
		}
		s.shared, s.redis = rc, rc
		if o.ids {
			log := logs.For("AdminKernel.Snowflake")
			if s.lease, err = snowflake.AcquireLease(cmd.Context(), rc, snowflake.LeaseOptions{
				Generator: ids, Warn: log.Warn, Info: log.Info,
			}); err != nil {
				s.close()
				return nil, fmt.Errorf("snowflake worker id: %w", err)
			}
			s.worker = s.lease.Worker()
		}
		if secs := cfg.Service.Cache.NearCacheSeconds; secs > 0 {
			near, err := nearcache.New(cmd.Context(), rc, rc.Client(), nearcache.Options{
				Channel:  rc.Prefix() + nearcache.ChannelSuffix,
				Prefixes: host.NearPrefixes,
				TTL:      time.Duration(secs) * time.Second,
				Log:      logs.For("AdminKernel.NearCache"),
			})
			if err != nil {
				s.close()
				return nil, err
			}
			s.shared = near
		}
	}
	return s, nil
}

// cache is the store the services of a command work on: the shared cache
// with Redis; otherwise a private in-process store, so that the services
// read the database (nothing is cached yet) and whatever they write there
// is lost when the command ends.
func (s *stores) cache() (cache.Store, error) {
	if s.shared != nil {
		return s.shared, nil
	}
	if s.local == nil {
		local, err := memcache.New(memcache.Options{})
		if err != nil {
			return nil, err
		}
		s.local = local
	}
	return s.local, nil
}

// close releases what openStores opened: the worker lease first (before the
// cache it lives in closes).
func (s *stores) close() {
	if s.lease != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_ = s.lease.Release(ctx)
		cancel()
	}
	for _, c := range []cache.Store{s.local, s.shared} {
		if c != nil {
			_ = c.Close()
		}
	}
	if s.db != nil {
		_ = s.db.Close()
	}
	_ = s.logs.Close()
}
