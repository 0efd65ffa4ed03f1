package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/logging"
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
	shared cache.Store
}

// errNoSharedCache is returned by openStores(needShared=true) when the
// cache is the in-process one.
var errNoSharedCache = errors.New("Service:Cache:Provider is not Redis: the cache lives inside the running service")

// openStores loads and checks the settings, opens the logs, the database and
// (with Redis) the shared cache. needShared makes an in-process cache an
// error (errNoSharedCache, wrapped by the caller with what to do instead).
func openStores(cmd *cobra.Command, load loader, needShared bool) (*stores, error) {
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
	s := &stores{cfg: cfg, logs: logs}
	if s.db, err = database.Open(cmd.Context(), cfg, logs.For("AdminKernel.Database")); err != nil {
		s.close()
		return nil, err
	}
	if redis {
		rc, err := rediscache.New(cmd.Context(), cfg.Service.Cache.Redis)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("cache: %w", err)
		}
		s.shared = rc
	}
	return s, nil
}

// close releases what openStores opened.
func (s *stores) close() {
	if s.shared != nil {
		if c, ok := s.shared.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
	if s.db != nil {
		_ = s.db.Close()
	}
	_ = s.logs.Close()
}
