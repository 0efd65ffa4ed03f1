package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/ent"
	entconfig "github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/configcenter"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// configGetCmd is `adminkernel config get <key>`: the stored value of a
// sys_config key, what the kernel reads from it, and its registry entry.
func configGetCmd(load loader) *cobra.Command {
	return &cobra.Command{
		Use:   "get <key>",
		Short: "Print a runtime setting (sys_config) with its type, range and default",
		Long: "get prints the value stored for the key in the configured database, the value the kernel\n" +
			"reads from it (the registry's default when it is unset or invalid) and the key's registry\n" +
			"entry (type and range, default, area). It needs neither the signing key nor a running service.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := args[0]
			s, err := openSettings(cmd, load)
			if err != nil {
				return err
			}
			defer s.close()
			ctx := cmd.Context()
			row, err := s.st.db.Client.SysConfig.Query().
				Where(entconfig.ConfigKey(key), entconfig.IsDelete(false)).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return err
			}
			out := cmd.OutOrStdout()
			stored := "(no row)"
			if row != nil {
				stored = "(NULL)"
				if row.ConfigValue != nil {
					stored = fmt.Sprintf("%q", *row.ConfigValue)
				}
			}
			e, known := s.settings.Registry().Lookup(key)
			switch {
			case !known && !sysconfig.IsSys(key):
				return write(out, "%s = %s\n  not registered: the consumer's free string\n", key, stored)
			case !known:
				return write(out, "%s = %s\n  unknown: no registry entry names this sys.* key, nothing reads it\n", key, stored)
			}
			effective, err := s.settings.String(ctx, key)
			if err != nil {
				return err
			}
			return write(out, "%s = %s\n  reads as: %q\n  %s\n  type:     %s\n  default:  %q\n  area:     %s\n",
				key, stored, effective, e.Description, e.Expected(), e.Default, e.Area)
		},
	}
}

// configSetCmd is `adminkernel config set <key> <value>`: the config
// center's own write path (configcenter.Service.SetValues: the registry's
// validation, one transaction, the cache invalidation).
func configSetCmd(load loader) *cobra.Command {
	return &cobra.Command{
		Use:   "set <sys key> <value>",
		Short: "Change a runtime setting (sys_config) with the config center's validation",
		Long: "set validates the value as PUT /api/v1/sys/config/batch does (43012 for an invalid value,\n" +
			"43013 for a sys.* key the kernel does not read), writes it to the configured database and\n" +
			"drops the cached value. With Service:Cache:Provider=Redis the running replicas read the new\n" +
			"value on their next request (their near copies are dropped too). With the in-process cache\n" +
			"the running service keeps its cached value until the entry expires\n" +
			"(Service:Cache:PermissionMinutes, bounded by MaxEntryMinutes) or it restarts; set says when.\n" +
			"Only sys.* keys: a consumer module's keys are validated by its own registry entries, which\n" +
			"this command does not know; change them through the API.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, value := args[0], args[1]
			if !sysconfig.IsSys(key) {
				return fmt.Errorf("%s is not a sys.* key: change a consumer key through the API (PUT /api/v1/sys/config/batch)", key)
			}
			s, err := openSettings(cmd, load)
			if err != nil {
				return err
			}
			defer s.close()
			ctx := cmd.Context()
			if err := s.settings.Registry().Check(key, &value); err != nil {
				return explain(err)
			}
			// The command has no id source (the service's snowflake worker
			// ids are leased by the running replicas): it changes rows, it
			// does not create them.
			live, err := s.st.db.Client.SysConfig.Query().
				Where(entconfig.ConfigKey(key), entconfig.IsDelete(false)).Exist(ctx)
			if err != nil {
				return err
			}
			if !live {
				return fmt.Errorf("%s has no row in sys_config (deleted, or a per-provider key never set): "+
					"create it through the API (POST or PUT /api/v1/sys/config/batch), then change it here", key)
			}
			svc := configcenter.NewService(s.st.db.Client, s.store, s.settings, s.st.cfg)
			changed, err := svc.SetValues(ctx, 0, []configcenter.BatchItem{{ConfigKey: key, ConfigValue: &value}})
			if err != nil {
				return explain(err)
			}
			out := cmd.OutOrStdout()
			if len(changed) == 0 {
				return write(out, "%s already is %q: nothing changed\n", key, value)
			}
			if s.relay != nil {
				s.flushEvents(len(changed))
			}
			if s.st.shared != nil {
				return write(out, "%s = %q: written, and the cached value dropped in Redis; running replicas read it on their next request\n", key, value)
			}
			return write(out, "%s = %q: written to the database. The running service caches config values in its own memory: "+
				"it reads the new value within %s (Service:Cache:PermissionMinutes%s), or at its next start\n",
				key, value, s.inProcessDelay(), s.maxAgeNote())
		},
	}
}

// settingsStores are the stores of `config get/set` and the settings
// service on them.
type settingsStores struct {
	st       *stores
	store    cache.Store // stores.cache(): the shared cache (near-cache wrapped) or a throw-away in-process one
	settings *sysconfig.Service
	events   *events.Bus
	relay    *bus.Relay
	closers  []func()
}

// openSettings opens the database and, with Redis, the shared cache as the
// running replicas see it: config values behind the near cache (whose
// invalidation reaches every replica's copies) and the change-event relay
// (which carries the ConfigChanged events to the replicas' subscribers).
// With the in-process cache the service's cache is out of reach; a fresh
// one stands in.
func openSettings(cmd *cobra.Command, load loader) (*settingsStores, error) {
	st, err := openStores(cmd, load, false)
	if err != nil {
		return nil, err
	}
	s := &settingsStores{st: st, events: events.New()}
	s.closers = append(s.closers, st.close)
	fail := func(err error) (*settingsStores, error) {
		s.close()
		return nil, err
	}
	log := st.logs.For("AdminKernel.Config")
	// With Redis: the shared cache behind the replicas' near copies, and
	// the relay that carries the ConfigChanged events to their subscribers;
	// otherwise a private in-process cache stands in.
	if s.store, err = st.cache(); err != nil {
		return fail(err)
	}
	if rc := st.redis; rc != nil {
		relay, err := bus.Start(cmd.Context(), s.events, rc.Client(), bus.Options{
			Channel: rc.Prefix() + bus.DefaultChannel,
			Log:     st.logs.For("AdminKernel.Bus"),
		})
		if err != nil {
			return fail(err)
		}
		s.relay = relay
		s.closers = append(s.closers, func() { _ = relay.Close() })
	}
	reg, err := sysconfig.NewRegistry()
	if err != nil {
		return fail(err)
	}
	ttl := time.Duration(st.cfg.Service.Cache.PermissionMinutes) * time.Minute
	s.settings = sysconfig.New(st.db.Client, s.store, ttl, s.events, reg, log)
	return s, nil
}

// close releases everything, the last opened first.
func (s *settingsStores) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// flushEvents waits (up to 3 s) until the relay has published the change
// events of n keys; Close then ends it. The events are what a consumer's
// subscriber on a replica hears; the cache invalidation does not depend on
// them.
func (s *settingsStores) flushEvents(n int) {
	deadline := time.Now().Add(3 * time.Second)
	for s.relay.Stats().Sent < int64(n) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// inProcessDelay is how long the running service may keep a cached config
// value of the in-process cache: PermissionMinutes, cut by MaxEntryMinutes.
func (s *settingsStores) inProcessDelay() time.Duration {
	c := s.st.cfg.Service.Cache
	d := time.Duration(c.PermissionMinutes) * time.Minute
	if c.MaxEntryMinutes > 0 {
		d = min(d, time.Duration(c.MaxEntryMinutes)*time.Minute)
	}
	return d
}

func (s *settingsStores) maxAgeNote() string {
	c := s.st.cfg.Service.Cache
	if c.MaxEntryMinutes > 0 && c.MaxEntryMinutes < c.PermissionMinutes {
		return ", cut by Service:Cache:MaxEntryMinutes"
	}
	return ""
}

func write(w io.Writer, format string, a ...any) error {
	_, err := fmt.Fprintf(w, format, a...)
	return err
}
