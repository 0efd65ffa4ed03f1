package config

import (
	"strings"
	"testing"
)

func TestValidateTelemetry(t *testing.T) {
	token := Secret(strings.Repeat("t", MinMetricsTokenLen))
	tests := []struct {
		name string
		tel  Telemetry
		want []string // substrings of the problems; none means valid
	}{
		{name: "off by default"},
		{name: "separate listener", tel: Telemetry{MetricsAddress: "127.0.0.1:9464"}},
		{name: "separate listener as a URL with a token", tel: Telemetry{MetricsAddress: "http://10.0.0.5:9464", MetricsBearerToken: token}},
		{name: "main address with a token", tel: Telemetry{MetricsOnMainAddress: true, MetricsBearerToken: token}},
		{name: "bad address", tel: Telemetry{MetricsAddress: "metrics"}, want: []string{"Service:Telemetry:MetricsAddress \"metrics\""}},
		{name: "main address without a token", tel: Telemetry{MetricsOnMainAddress: true}, want: []string{"needs Service:Telemetry:MetricsBearerToken"}},
		{
			name: "both listeners", tel: Telemetry{MetricsAddress: "127.0.0.1:9464", MetricsOnMainAddress: true, MetricsBearerToken: token},
			want: []string{"MetricsOnMainAddress must be false when Service:Telemetry:MetricsAddress is set"},
		},
		{name: "short token", tel: Telemetry{MetricsBearerToken: "short"}, want: []string{"MetricsBearerToken must be at least 32 characters"}},
		{name: "tracing over http", tel: Telemetry{Tracing: Tracing{Endpoint: "http://127.0.0.1:4318"}}},
		{name: "tracing over grpc with TLS", tel: Telemetry{Tracing: Tracing{Endpoint: "https://otel.example.com:4317", Protocol: "grpc", SampleRatio: ratio(0), Headers: map[string]Secret{"api-key": "k"}}}},
		{name: "tracing endpoint not a URL", tel: Telemetry{Tracing: Tracing{Endpoint: "127.0.0.1:4318"}}, want: []string{"Tracing:Endpoint"}},
		{name: "tracing endpoint with credentials", tel: Telemetry{Tracing: Tracing{Endpoint: "http://u:p@collector:4318"}}, want: []string{"without credentials"}},
		{name: "tracing protocol", tel: Telemetry{Tracing: Tracing{Endpoint: "http://collector:4318", Protocol: "thrift"}}, want: []string{"Protocol \"thrift\" must be http or grpc"}},
		{name: "tracing ratio", tel: Telemetry{Tracing: Tracing{Endpoint: "http://collector:4318", SampleRatio: ratio(1.5)}}, want: []string{"SampleRatio must be between 0 and 1"}},
		{name: "tracing header name", tel: Telemetry{Tracing: Tracing{Endpoint: "http://collector:4318", Headers: map[string]Secret{"a=b": "x"}}}, want: []string{"is no header name"}},
		{name: "tracing settings ignored when off", tel: Telemetry{Tracing: Tracing{Protocol: "thrift"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			c.Service.Telemetry = tt.tel
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), string(tt.tel.MetricsBearerToken)) && tt.tel.MetricsBearerToken != "" {
				t.Error("the token is in the error")
			}
		})
	}
}

func ratio(v float64) *float64 { return &v }
