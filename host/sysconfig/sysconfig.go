// Package sysconfig reads the runtime settings of the sys_config table
// through the cache. Every feature that reads a runtime switch (security
// policy, external-login switches, site info) goes through this one service,
// so a change made through it, or an Invalidate call, takes effect on the
// next request.
package sysconfig

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/events"
)

// KeyPrefix namespaces config entries in the cache.
const KeyPrefix = "cfg:"

// Service reads config values.
type Service struct {
	client *ent.Client
	store  cache.Store
	ttl    time.Duration
	events *events.Bus
}

// New returns the service; ttl is Service:Cache:PermissionMinutes.
func New(client *ent.Client, store cache.Store, ttl time.Duration, ev *events.Bus) *Service {
	return &Service{client: client, store: store, ttl: ttl, events: ev}
}

// Value returns the value of a live key; ok is false when the key is
// missing, deleted or has a NULL value. Misses are cached too.
func (s *Service) Value(ctx context.Context, key string) (string, bool, error) {
	b, err := s.raw(ctx, key)
	if err != nil {
		return "", false, err
	}
	return string(b[1:]), b[0] == '1', nil
}

// raw returns the cached encoding of a key ('1' + value, or '0' when the key
// is missing), reading the database on a miss. On a hit the slice is the
// cache's own (cache.Peek): read it, never keep or change it.
func (s *Service) raw(ctx context.Context, key string) ([]byte, error) {
	return s.rawCached(ctx, key, KeyPrefix+key)
}

// rawCached is raw with the cache key (KeyPrefix+key) already built.
func (s *Service) rawCached(ctx context.Context, key, ck string) ([]byte, error) {
	if b, hit, err := cache.Peek(ctx, s.store, ck); err == nil && hit && len(b) > 0 {
		return b, nil
	}
	row, err := s.client.SysConfig.Query().
		Where(sysconfig.ConfigKey(key), sysconfig.IsDelete(false)).
		Select(sysconfig.FieldConfigValue).
		Only(ctx)
	var val string
	ok := false
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return nil, err
	case row.ConfigValue != nil:
		val, ok = *row.ConfigValue, true
	}
	enc := make([]byte, 0, len(val)+1)
	if ok {
		enc = append(enc, '1')
	} else {
		enc = append(enc, '0')
	}
	enc = append(enc, val...)
	// A cache write failure only costs a database read next time.
	_ = s.store.Set(ctx, ck, enc, s.ttl)
	return enc, nil
}

// String returns the value, or def when the key is missing or empty.
func (s *Service) String(ctx context.Context, key, def string) (string, error) {
	v, ok, err := s.Value(ctx, key)
	if err != nil || !ok || strings.TrimSpace(v) == "" {
		return def, err
	}
	return v, nil
}

// Bool reads "true"/"1" (case-insensitive) as true and "false"/"0" as false;
// anything else, or a missing key, is def.
func (s *Service) Bool(ctx context.Context, key string, def bool) (bool, error) {
	b, err := s.raw(ctx, key)
	if err != nil {
		return def, err
	}
	return boolOf(b, def), nil
}

// Switch returns a reader of one boolean key for settings read on every
// request (the rate limiter's switch): Bool with the cache key built once,
// so a cached read allocates nothing. A read error gives def.
func (s *Service) Switch(key string, def bool) func(context.Context) bool {
	ck := KeyPrefix + key
	return func(ctx context.Context) bool {
		b, err := s.rawCached(ctx, key, ck)
		if err != nil {
			return def
		}
		return boolOf(b, def)
	}
}

// Number is Switch for an integer key: Int with the cache key built once
// and the value parsed in place. A read error gives def.
func (s *Service) Number(key string, def int) func(context.Context) int {
	ck := KeyPrefix + key
	return func(ctx context.Context) int {
		b, err := s.rawCached(ctx, key, ck)
		if err != nil || b[0] != '1' {
			return def
		}
		return parseInt(string(b[1:]), def) // the conversion does not escape: no allocation
	}
}

// boolOf reads the cached encoding of a boolean key (see raw).
func boolOf(enc []byte, def bool) bool {
	if enc[0] != '1' {
		return def
	}
	return parseBool(enc[1:], def)
}

// ParseBool is the kernel's reading of a boolean config value.
func ParseBool(v string, def bool) bool {
	return parseBool([]byte(v), def)
}

// parseBool reads "true"/"1" (any case, surrounding space ignored) as true
// and "false"/"0" as false, without allocating.
func parseBool(v []byte, def bool) bool {
	v = bytes.TrimSpace(v)
	switch {
	case bytes.EqualFold(v, []byte("true")), string(v) == "1":
		return true
	case bytes.EqualFold(v, []byte("false")), string(v) == "0":
		return false
	}
	return def
}

// Int reads an integer; a missing or malformed value is def.
func (s *Service) Int(ctx context.Context, key string, def int) (int, error) {
	v, ok, err := s.Value(ctx, key)
	if err != nil || !ok {
		return def, err
	}
	return parseInt(v, def), nil
}

// parseInt reads a decimal integer, surrounding space ignored; anything
// else is def: a malformed setting reads as the default, not as an error.
func parseInt(v string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return def
	}
	return n
}

// Invalidate drops cached keys (and the site info when a key feeds it) and
// publishes the change: the spec's InvalidateAsync(key). It is Changed.
func (s *Service) Invalidate(ctx context.Context, keys ...string) error {
	return s.Changed(ctx, keys...)
}

// InvalidateAll drops every cached config entry and returns how many.
func (s *Service) InvalidateAll(ctx context.Context) (int, error) {
	return s.store.DeletePrefix(ctx, KeyPrefix)
}

// Set writes a value of an existing or new key through the service and
// invalidates it (used by the kernel and by tests; the config center uses it
// too).
func (s *Service) Set(ctx context.Context, key, value string) error {
	n, err := s.client.SysConfig.Update().
		Where(sysconfig.ConfigKey(key), sysconfig.IsDelete(false)).
		SetConfigValue(value).
		Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		if err := s.client.SysConfig.Create().SetConfigKey(key).SetConfigValue(value).SetName(key).SetGroupCode(group(key)).Exec(ctx); err != nil {
			return err
		}
	}
	return s.Invalidate(ctx, key)
}

// group derives a config group from a key: sys.security.x → security.
func group(key string) string {
	parts := strings.Split(key, ".")
	if len(parts) >= 3 && parts[0] == "sys" {
		if parts[1] == "site" {
			return "sys"
		}
		return parts[1]
	}
	return "other"
}
