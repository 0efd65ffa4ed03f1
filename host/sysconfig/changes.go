package sysconfig

import (
	"context"
	"strings"

	"github.com/adminkernel/kernel/host/events"
)

// Keys that feed the site info besides the sys.site.* keys (wire contract
// §6 item 1).
const (
	KeyCaptchaEnabled  = "sys.security.captcha.enabled"
	KeySmsLoginEnabled = "sys.security.smsLogin.enabled"
	// KeyPasskeyPasswordless is passkey.KeyPasswordless (the login page
	// offers the passwordless login).
	KeyPasskeyPasswordless = "sys.security.passkey.passwordless" //nolint:gosec // G101: a setting name that contains "password", not a credential
	// SitePrefix is the prefix of the site keys (title, subtitle, ...).
	SitePrefix = "sys.site."
)

// SiteKey is the cache key of the site info built from the site keys. It
// lives under KeyPrefix, so InvalidateAll drops it too, and it cannot clash
// with a config key ("@" is not allowed in one).
const SiteKey = KeyPrefix + "@site"

// AffectsSite reports whether a config key feeds the site info.
func AffectsSite(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	return strings.HasPrefix(k, strings.ToLower(SitePrefix)) ||
		k == strings.ToLower(KeyCaptchaEnabled) || k == strings.ToLower(KeySmsLoginEnabled) ||
		k == strings.ToLower(KeyPasskeyPasswordless)
}

// Changed is the config service's InvalidateAsync: it drops the cached
// keys and, when any of them feeds the site info, the site entry, then
// publishes one ConfigChanged event per key. Call it after a change to the
// sys_config rows has been committed; the next read goes to the database.
func (s *Service) Changed(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	ck := make([]string, 0, len(keys)+1)
	site := false
	for _, k := range keys {
		ck = append(ck, KeyPrefix+k)
		site = site || AffectsSite(k)
	}
	if site {
		ck = append(ck, SiteKey)
	}
	if err := s.store.Delete(ctx, ck...); err != nil {
		return err
	}
	for _, k := range keys {
		s.events.Publish(events.ConfigChanged{Key: k})
	}
	return nil
}

// ChangedAll drops every cached config entry (site info included), publishes
// one ConfigChanged event with an empty key and returns how many entries were
// dropped: the configuration cache-clearing action.
func (s *Service) ChangedAll(ctx context.Context) (int, error) {
	n, err := s.InvalidateAll(ctx)
	if err != nil {
		return n, err
	}
	s.events.Publish(events.ConfigChanged{})
	return n, nil
}
