package config

import (
	"maps"
	"slices"
)

// Clone returns a deep copy, so a component may normalise its settings
// (Validate does) without touching the caller's tree.
func (c *Config) Clone() *Config {
	out := *c
	s := &out.Service
	s.HTTP.TrustedProxies = slices.Clone(c.Service.HTTP.TrustedProxies)
	s.Job.HTTPAllowedHosts = slices.Clone(c.Service.Job.HTTPAllowedHosts)
	s.Outbound.AllowedRanges = slices.Clone(c.Service.Outbound.AllowedRanges)
	s.Cache.Redis.SentinelAddresses = slices.Clone(c.Service.Cache.Redis.SentinelAddresses)
	s.Cache.Redis.ClusterAddresses = slices.Clone(c.Service.Cache.Redis.ClusterAddresses)
	if c.Service.Shutdown.ReadyDrainDelaySeconds != nil {
		v := *c.Service.Shutdown.ReadyDrainDelaySeconds
		s.Shutdown.ReadyDrainDelaySeconds = &v
	}
	if c.Service.Database.SQLLog.Color != nil {
		v := *c.Service.Database.SQLLog.Color
		s.Database.SQLLog.Color = &v
	}
	s.Telemetry.Tracing.Headers = maps.Clone(c.Service.Telemetry.Tracing.Headers)
	if c.Service.Telemetry.Tracing.SampleRatio != nil {
		v := *c.Service.Telemetry.Tracing.SampleRatio
		s.Telemetry.Tracing.SampleRatio = &v
	}
	s.Security.Jwt.SigningKeys = slices.Clone(c.Service.Security.Jwt.SigningKeys)
	s.Security.Totp.EncryptionKeys = slices.Clone(c.Service.Security.Totp.EncryptionKeys)
	s.Upload.SigningKeys = slices.Clone(c.Service.Upload.SigningKeys)
	s.ExternalAuth.PluginSHA256 = maps.Clone(c.Service.ExternalAuth.PluginSHA256)
	s.ExternalAuth.Oidc = slices.Clone(c.Service.ExternalAuth.Oidc)
	for i, p := range s.ExternalAuth.Oidc {
		if p.UsePkce != nil {
			v := *p.UsePkce
			s.ExternalAuth.Oidc[i].UsePkce = &v
		}
	}
	s.ExternalAuth.EnterpriseChat = maps.Clone(c.Service.ExternalAuth.EnterpriseChat)
	s.ExternalAuth.TeamChat = maps.Clone(c.Service.ExternalAuth.TeamChat)
	s.ExternalAuth.CodeHost = maps.Clone(c.Service.ExternalAuth.CodeHost)
	s.ExternalAuth.SocialChat = maps.Clone(c.Service.ExternalAuth.SocialChat)
	if c.Service.ExternalAuth.Plugins != nil {
		s.ExternalAuth.Plugins = make(map[string]VendorSettings, len(c.Service.ExternalAuth.Plugins))
		for code, v := range c.Service.ExternalAuth.Plugins {
			s.ExternalAuth.Plugins[code] = maps.Clone(v)
		}
	}
	out.API.DisabledModules = slices.Clone(c.API.DisabledModules)
	out.API.Cors.AllowedOrigins = slices.Clone(c.API.Cors.AllowedOrigins)
	out.Logging.LogLevel = maps.Clone(c.Logging.LogLevel)
	out.unknown = slices.Clone(c.unknown)
	return &out
}
