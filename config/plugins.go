package config

import (
	"encoding/hex"
	"sort"
	"strings"
)

// vendorSections names the own section of each vendor code.
var vendorSections = map[string]string{
	"enterprise_chat": "EnterpriseChat",
	"team_chat":       "TeamChat",
	"code_host":       "CodeHost",
	"social_chat":     "SocialChat",
}

// ProviderSection returns the settings section of a plugin provider code:
// for the four vendor codes their own section (enterprise_chat:
// EnterpriseChat, ...) when it is set, otherwise Plugins:{code} (the code
// matched exactly, else ignoring case, like every settings key), or nil.
func (e *ExternalAuth) ProviderSection(code string) VendorSettings {
	own := e.ownSection(code)
	if len(own) > 0 {
		return own
	}
	if s, ok := e.Plugins[code]; ok {
		return s
	}
	for k, s := range e.Plugins {
		if strings.EqualFold(k, code) {
			return s
		}
	}
	return own
}

// ownSection is the own section of a vendor code, nil for other codes.
func (e *ExternalAuth) ownSection(code string) VendorSettings {
	switch code {
	case "enterprise_chat":
		return e.EnterpriseChat
	case "team_chat":
		return e.TeamChat
	case "code_host":
		return e.CodeHost
	case "social_chat":
		return e.SocialChat
	}
	return nil
}

// maxProviderCode is the longest provider code the registry accepts.
const maxProviderCode = 32

// validatePlugins checks Service:ExternalAuth:Plugins: every key is a
// provider code (letters, digits, underscores, at most 32), a code has one
// section only (two keys differing in case only are refused; JSON files
// merge them already, environment variables may not), and a vendor code
// does not also have its own section set.
func (c *Config) validatePlugins(p *problems) {
	ea := &c.Service.ExternalAuth
	c.validatePins(p)
	codes := make([]string, 0, len(ea.Plugins))
	for code := range ea.Plugins {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	seen := map[string]string{}
	for _, code := range codes {
		key := "Service:ExternalAuth:Plugins:" + code
		if !providerCode.MatchString(code) || len(code) > maxProviderCode {
			p.add("%s: %q is not a provider code (letters, digits and underscores, at most %d)", key, code, maxProviderCode)
			continue
		}
		lower := strings.ToLower(code)
		if first, dup := seen[lower]; dup {
			p.add("%s: the same code as Service:ExternalAuth:Plugins:%s (keys are case-insensitive); keep one", key, first)
			continue
		}
		seen[lower] = code
		section, vendor := vendorSections[lower]
		if !vendor || len(ea.Plugins[code]) == 0 {
			continue
		}
		if len(ea.ownSection(lower)) > 0 {
			p.add("%s and Service:ExternalAuth:%s are both set; give the settings of %s in one of them", key, section, lower)
		}
	}
}

// Configured reports whether a plugin's settings section configures it:
// at least one value that is not blank. A plugin whose section is empty
// (or holds only blank values) is not configured: the plugin host does not
// start it and lists it as unconfigured.
func (s VendorSettings) Configured() bool {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// PluginConfigured reports whether the settings section of a plugin code
// (ProviderSection) configures it.
func (e *ExternalAuth) PluginConfigured(code string) bool {
	return e.ProviderSection(code).Configured()
}

// ConfiguredPlugins lists, sorted, the plugin provider codes whose settings
// section configures them: the vendor codes with a configured own section
// or Plugins entry, and every other configured Plugins entry (under the
// code as written). The plugin host expects a binary for each.
func (e *ExternalAuth) ConfiguredPlugins() []string {
	seen := map[string]bool{}
	var out []string
	add := func(code string) {
		if !seen[strings.ToLower(code)] {
			seen[strings.ToLower(code)] = true
			out = append(out, code)
		}
	}
	for _, code := range VendorCodes {
		if e.PluginConfigured(code) {
			add(code)
		}
	}
	for code, s := range e.Plugins {
		if s.Configured() {
			if _, vendor := vendorSections[strings.ToLower(code)]; vendor {
				add(strings.ToLower(code))
				continue
			}
			add(code)
		}
	}
	sort.Strings(out)
	return out
}

// SectionKey names where the settings of a plugin code are given, for
// messages: "Service:ExternalAuth:EnterpriseChat (or
// Service:ExternalAuth:Plugins:enterprise_chat)" for a vendor code,
// "Service:ExternalAuth:Plugins:<code>" for any other.
func (e *ExternalAuth) SectionKey(code string) string {
	const prefix = "Service:ExternalAuth:"
	if section, vendor := vendorSections[code]; vendor {
		return prefix + section + " (or " + prefix + "Plugins:" + code + ")"
	}
	return prefix + "Plugins:" + code
}

// ValidateProviders checks only what listing the external login providers
// needs (adminkernel providers): the OIDC entries (applying their
// defaults), the plugin sections, CallbackBaseUrl and the log levels. It
// needs neither the signing key nor a database, unlike Validate.
func (c *Config) ValidateProviders() error {
	var p problems
	c.validateCallback(&p)
	c.validateOIDC(&p)
	c.validatePlugins(&p)
	c.validateLogging(&p)
	return p.err()
}

// validatePins checks Service:ExternalAuth:PluginSha256: every key is a
// provider code and every pin the hex SHA-256 of a binary (64 hexadecimal
// digits, case and surrounding space ignored, as the plugin host reads it).
// A malformed pin would keep its plugin from launching; it is refused here.
func (c *Config) validatePins(p *problems) {
	pins := c.Service.ExternalAuth.PluginSHA256
	codes := make([]string, 0, len(pins))
	for code := range pins {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		key := "Service:ExternalAuth:PluginSha256:" + code
		if !providerCode.MatchString(code) || len(code) > maxProviderCode {
			p.add("%s: %q is not a provider code (letters, digits and underscores, at most %d)", key, code, maxProviderCode)
			continue
		}
		if sum, err := hex.DecodeString(strings.TrimSpace(pins[code])); err != nil || len(sum) != 32 {
			p.add("%s %q is not a SHA-256 pin: want 64 hexadecimal digits (sha256sum of the plugin binary)", key, pins[code])
		}
	}
}
