package config

// MinMetricsTokenLen is the shortest Service:Telemetry:MetricsBearerToken
// accepted: the token guards operational data, so it must not be guessable.
const MinMetricsTokenLen = 32

// Telemetry is `Service:Telemetry` (host/telemetry, docs/operations.md):
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
	// AdminKernel.Access (method, route template, status, duration,
	// request id, user id; never the query string). Default false.
	AccessLog bool `koanf:"AccessLog"`
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
