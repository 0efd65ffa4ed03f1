package config

import (
	"math"
	"net/url"
	"strings"
)

// MinMetricsTokenLen is the shortest Service:Telemetry:MetricsBearerToken
// accepted: the token guards operational data, so it must not be guessable.
const MinMetricsTokenLen = 32

// Telemetry is `Service:Telemetry` (host/telemetry, docs/operators/operations.md):
// where the Prometheus metrics are served and whether requests are logged.
type Telemetry struct {
	// MetricsAddress is a separate listener for GET /metrics (host:port or
	// http://host:port; bind it to a private interface). Empty: no separate
	// listener.
	MetricsAddress string `koanf:"MetricsAddress"`
	// MetricsOnMainAddress serves /metrics on Service:Http:ListenAddress
	// too; allowed only when MetricsAddress is empty and
	// MetricsBearerToken is set. Default false: /metrics answers 404 there.
	MetricsOnMainAddress bool `koanf:"MetricsOnMainAddress"`
	// MetricsBearerToken, when set, is required as
	// "Authorization: Bearer <token>" on /metrics (on either listener); at
	// least MinMetricsTokenLen characters.
	MetricsBearerToken Secret `koanf:"MetricsBearerToken"`
	// AccessLog writes one line per request under the category
	// AdminKernel.Access: method, route template, HTTP status, envelope
	// code (a business failure is HTTP 200 with its code), duration,
	// client address (through Service:Http:TrustedProxies), user agent,
	// request id, trace id when traced, and the user's id and account when
	// signed in; never the path's values or the query string. Default
	// false.
	AccessLog bool `koanf:"AccessLog"`
	// ObserveProbes traces and access-logs the health probes (/health,
	// /health/ready) like any request. Default false: a probe is counted
	// in the metrics but neither traced nor access-logged (a load
	// balancer's probes would otherwise be most of both).
	ObserveProbes bool `koanf:"ObserveProbes"`
	// Tracing exports OpenTelemetry spans (off unless Endpoint is set).
	Tracing Tracing `koanf:"Tracing"`
}

// MetricsHostPort is MetricsAddress as host:port ("" when none is set).
func (t Telemetry) MetricsHostPort() string {
	if t.MetricsAddress == "" {
		return ""
	}
	hp, err := listenHostPort(t.MetricsAddress)
	if err != nil {
		return t.MetricsAddress
	}
	return hp
}

func (c *Config) validateTelemetry(p *problems) {
	c.validateTracing(p)
	t := c.Service.Telemetry
	if t.MetricsAddress != "" {
		if _, err := listenHostPort(t.MetricsAddress); err != nil {
			p.add("Service:Telemetry:MetricsAddress %q: %v", t.MetricsAddress, err)
		}
		if t.MetricsOnMainAddress {
			p.add("Service:Telemetry:MetricsOnMainAddress must be false when Service:Telemetry:MetricsAddress is set (the metrics have their own listener)")
		}
	}
	if t.MetricsOnMainAddress && !t.MetricsBearerToken.IsSet() {
		p.add("Service:Telemetry:MetricsOnMainAddress needs Service:Telemetry:MetricsBearerToken: metrics on the public address are never served without a token")
	}
	if t.MetricsBearerToken.IsSet() && len(t.MetricsBearerToken.Reveal()) < MinMetricsTokenLen {
		p.add("Service:Telemetry:MetricsBearerToken must be at least %d characters", MinMetricsTokenLen)
	}
}

// Tracing is `Service:Telemetry:Tracing` (host/tracing,
// docs/operators/operations.md "Tracing"): OpenTelemetry spans exported over OTLP.
// Off (the default) when Endpoint is empty: then nothing is traced and the
// request path pays nothing.
type Tracing struct {
	// Endpoint is the collector's base URL: http://host:4318 (OTLP/HTTP,
	// spans posted to <Endpoint>/v1/traces) or http://host:4317 (OTLP/gRPC).
	// The scheme decides TLS: https uses it, http sends in clear (a
	// collector on the loopback or a private network).
	Endpoint string `koanf:"Endpoint"`
	// Protocol is "http" (OTLP/HTTP protobuf, the default) or "grpc".
	Protocol string `koanf:"Protocol"`
	// SampleRatio is the share of new traces recorded (0–1, default 1);
	// a request that arrives with a W3C traceparent follows its caller's
	// decision instead (parent-based sampling).
	SampleRatio *float64 `koanf:"SampleRatio"`
	// Headers are sent with every export (an API key of a hosted
	// collector): secrets, printed as *** by `adminkernel config`.
	Headers map[string]Secret `koanf:"Headers"`
	// ServiceName is the service.name resource attribute (default
	// "adminkernel"); a plugin process is "<ServiceName>-provider-<code>".
	ServiceName string `koanf:"ServiceName"`
}

// Enabled reports whether spans are exported.
func (t Tracing) Enabled() bool { return t.Endpoint != "" }

// Ratio is SampleRatio with its default (1).
func (t Tracing) Ratio() float64 {
	if t.SampleRatio == nil {
		return 1
	}
	return *t.SampleRatio
}

// IsGRPC reports Protocol "grpc".
func (t Tracing) IsGRPC() bool { return strings.EqualFold(t.Protocol, "grpc") }

// Service is ServiceName with its default.
func (t Tracing) Service() string {
	if t.ServiceName == "" {
		return "adminkernel"
	}
	return t.ServiceName
}

func (c *Config) validateTracing(p *problems) {
	t := c.Service.Telemetry.Tracing
	if t.Endpoint == "" {
		return
	}
	u, err := url.Parse(t.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		p.add("Service:Telemetry:Tracing:Endpoint %q must be an http:// or https:// URL without credentials or query", t.Endpoint)
	}
	switch strings.ToLower(t.Protocol) {
	case "", "http", "grpc":
	default:
		p.add("Service:Telemetry:Tracing:Protocol %q must be http or grpc", t.Protocol)
	}
	if r := t.Ratio(); math.IsNaN(r) || r < 0 || r > 1 {
		p.add("Service:Telemetry:Tracing:SampleRatio must be between 0 and 1")
	}
	for name := range t.Headers {
		if name == "" || strings.ContainsAny(name, "=,\r\n :") {
			p.add("Service:Telemetry:Tracing:Headers: %q is no header name", name)
		}
	}
	for _, r := range t.ServiceName {
		if r < 0x21 || r > 0x7e {
			p.add("Service:Telemetry:Tracing:ServiceName must be visible ASCII without spaces")
			break
		}
	}
}
