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
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

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
	reg    *Registry
	log    hclog.Logger
	// warned holds the last invalid value logged per key (one WARN each);
	// only stored rows' keys get there.
	warnMu       sync.Mutex
	warned       map[string]string
	unregistered atomic.Int64
}

// maxUnregisteredWarnings bounds the WARNs about reads of unregistered keys.
const maxUnregisteredWarnings = 100

// New returns the service; ttl is Service:Cache:PermissionMinutes, reg the
// registry of the keys that are read (their defaults and ranges), log
// receives the WARN of an invalid stored value (nil: discarded).
func New(client *ent.Client, store cache.Store, ttl time.Duration, ev *events.Bus, reg *Registry, log hclog.Logger) *Service {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Service{client: client, store: store, ttl: ttl, events: ev, reg: reg, log: log, warned: map[string]string{}}
}

// Registry returns the registry of the keys that are read.
func (s *Service) Registry() *Registry { return s.reg }

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

// String returns the effective value of a registered key: the stored value
// when it is valid for the key's entry (an enum value in any letter case
// reads as the registered spelling), else the entry's default (missing,
// NULL, blank for a non-text kind) or, for an invalid value, its OnInvalid
// fallback (the default unless set) with one WARN.
func (s *Service) String(ctx context.Context, key string) (string, error) {
	e := s.entry(key)
	b, err := s.raw(ctx, key)
	if err != nil {
		return e.Default, err
	}
	return s.text(e, b), nil
}

func (s *Service) text(e Entry, enc []byte) string {
	if enc[0] != '1' {
		return e.Default
	}
	v := string(enc[1:])
	switch e.Kind {
	case KindString, KindURL:
		if e.Valid(v) {
			return v
		}
	case KindEnum:
		t := strings.TrimSpace(v)
		if t == "" {
			return e.Default
		}
		for _, ev := range e.Values {
			if strings.EqualFold(ev, t) {
				return ev
			}
		}
	case KindIDList:
		if _, ok := parseIDList(v); ok {
			return v
		}
	case KindBool:
		return strconv.FormatBool(s.boolOf(e, enc))
	case KindInt:
		return strconv.Itoa(s.intOf(e, enc))
	}
	s.invalid(e, enc[1:])
	return e.fallback()
}

// IDs reads a KindIDList key (the default, with one WARN, when invalid).
func (s *Service) IDs(ctx context.Context, key string) ([]int64, error) {
	v, err := s.String(ctx, key)
	ids, _ := parseIDList(v)
	return ids, err
}

// Bool reads a boolean key: "true"/"1" (any case, surrounding space
// ignored) is true, "false"/"0" false; missing or blank is the registered
// default, anything else the fallback (OnInvalid, else the default) with one WARN.
func (s *Service) Bool(ctx context.Context, key string) (bool, error) {
	e := s.entry(key)
	b, err := s.raw(ctx, key)
	if err != nil {
		return ParseBool(e.Default, false), err
	}
	return s.boolOf(e, b), nil
}

// Switch returns a reader of one boolean key for settings read on every
// request (the rate limiter's switch): Bool with the entry and the cache
// key looked up once, so a cached read allocates nothing. A read error
// gives the default.
func (s *Service) Switch(key string) func(context.Context) bool {
	e := s.entry(key)
	ck := KeyPrefix + key
	def := ParseBool(e.Default, false)
	return func(ctx context.Context) bool {
		b, err := s.rawCached(ctx, key, ck)
		if err != nil {
			return def
		}
		return s.boolOf(e, b)
	}
}

// Number is Switch for an integer key: Int with the entry and the cache key
// looked up once and the value parsed in place. A read error gives the
// default.
func (s *Service) Number(key string) func(context.Context) int {
	e := s.entry(key)
	ck := KeyPrefix + key
	def := parseInt(e.Default, 0)
	return func(ctx context.Context) int {
		b, err := s.rawCached(ctx, key, ck)
		if err != nil {
			return def
		}
		return s.intOf(e, b)
	}
}

// Int reads an integer key: a missing or blank value is the registered
// default, a malformed or out-of-range one the fallback (OnInvalid, else the default) with one WARN.
func (s *Service) Int(ctx context.Context, key string) (int, error) {
	e := s.entry(key)
	b, err := s.raw(ctx, key)
	if err != nil {
		return parseInt(e.Default, 0), err
	}
	return s.intOf(e, b), nil
}

// boolOf reads the cached encoding of a boolean key (see raw).
func (s *Service) boolOf(e Entry, enc []byte) bool {
	def := ParseBool(e.Default, false)
	if enc[0] != '1' || len(bytes.TrimSpace(enc[1:])) == 0 {
		return def
	}
	v := bytes.TrimSpace(enc[1:])
	switch {
	case bytes.EqualFold(v, []byte("true")), string(v) == "1":
		return true
	case bytes.EqualFold(v, []byte("false")), string(v) == "0":
		return false
	}
	s.invalid(e, enc[1:])
	return ParseBool(e.fallback(), def)
}

// intOf reads the cached encoding of an integer key without allocating
// (unless the value is invalid).
func (s *Service) intOf(e Entry, enc []byte) int {
	def := parseInt(e.Default, 0)
	if enc[0] != '1' {
		return def
	}
	v := bytes.TrimSpace(enc[1:])
	if len(v) == 0 {
		return def
	}
	n, err := strconv.ParseInt(string(v), 10, 64) // the conversion does not escape
	if err != nil || (e.Kind == KindInt && (n < e.Min || n > e.Max)) || int64(int(n)) != n {
		s.invalid(e, enc[1:])
		return parseInt(e.fallback(), def)
	}
	return int(n)
}

// entry returns the registered entry of a key read by the kernel. A key no
// entry names (a reader that was not registered: registry_test.go catches
// the kernel's) reads as an empty text with one WARN.
func (s *Service) entry(key string) Entry {
	if e, ok := s.reg.Lookup(key); ok {
		if e.IsFamily() {
			e.Key = key
		}
		return e
	}
	// Counted, not remembered per key: a key built from request input
	// must not grow the map.
	if s.unregistered.Add(1) <= maxUnregisteredWarnings {
		s.log.Warn("a config key is read that no registry entry names; it reads as blank", "key", key)
	}
	return Entry{Key: key}
}

// invalid logs, once per key and value, that a stored value is not valid
// for its entry (written by hand, or by an older release) and that the
// default is used instead.
func (s *Service) invalid(e Entry, raw []byte) {
	s.warnMu.Lock()
	prev, seen := s.warned[e.Key]
	if seen && prev == string(raw) { // compared without allocating
		s.warnMu.Unlock()
		return
	}
	v := string(raw)
	s.warned[e.Key] = v
	s.warnMu.Unlock()
	s.log.Warn("a config value is invalid; it reads as the fallback", "key", e.Key, "value", textclip(v), "expected", e.Expected(), "fallback", e.fallback())
}

// textclip shortens a logged value.
func textclip(v string) string {
	if r := []rune(v); len(r) > 64 {
		return string(r[:64]) + "..."
	}
	return v
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

// parseInt reads a decimal integer, surrounding space ignored; anything
// else is def.
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

// Set writes a value of an existing or new key and invalidates it, without
// the registry's validation: for the kernel's own writes and for tests that
// store what an older release or a hand-written SQL statement could have
// stored. Administrators' writes go through the config center
// (host/configcenter), which validates every value against the registry.
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
