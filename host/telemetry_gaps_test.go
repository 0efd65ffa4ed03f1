//go:build !unit

package host_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// TestMetricsQueryLatency scrapes the SQL query-latency histogram: a
// request that reads and writes moves the SELECT and the INSERT/UPDATE
// series, and no series carries statement text (the operation label is a
// fixed list).
func TestMetricsQueryLatency(t *testing.T) {
	k := kerneltest.Start(t, []string{
		"Service__Telemetry__MetricsOnMainAddress=true",
		"Service__Telemetry__MetricsBearerToken=" + metricsToken,
	})
	k.Leaks.Secrets = append(k.Leaks.Secrets, metricsToken)
	before := mustScrape(t, k)
	tp := k.Login("superAdmin", kerneltest.AdminPassword) // reads the user, writes the session
	k.Do("GET", "/api/v1/sys/user/page?pageNum=1&pageSize=10", tp.AccessToken, nil).Expect(t, "user page", 200, 0)
	after := mustScrape(t, k)
	const name = "adminkernel_db_query_duration_seconds"
	for _, op := range []string{"SELECT", "INSERT"} {
		if d := after.value(name, map[string]string{"operation": op}) - before.value(name, map[string]string{"operation": op}); d < 1 {
			t.Errorf("%s{operation=%q} moved by %v, want at least 1", name, op, d)
		}
	}
	allowed := map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "BEGIN": true, "COMMIT": true, "ROLLBACK": true, "OTHER": true}
	for _, m := range after[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "operation" || !allowed[l.GetValue()] {
				t.Errorf("%s has label %s=%q", name, l.GetName(), l.GetValue())
			}
		}
		if m.GetHistogram().GetSampleSum() < 0 {
			t.Errorf("negative latency sum: %v", m)
		}
	}
}

// TestMetricsInvalidationLag: two kernels on one Redis; a runtime setting
// changed on one reaches the other as a change event (and a near-cache
// invalidation), and the receiver's lag histogram counts it with a
// plausible lag.
func TestMetricsInvalidationLag(t *testing.T) {
	prefix := kerneltest.RedisPrefix(t) // fails the test when Redis is absent
	env := func(worker int) []string {
		return []string{
			"Service__Telemetry__MetricsOnMainAddress=true",
			"Service__Telemetry__MetricsBearerToken=" + metricsToken,
			"Service__Cache__Provider=Redis",
			"Service__Cache__Redis__Address=" + kerneltest.RedisAddr(),
			"Service__Cache__Redis__KeyPrefix=" + prefix,
			"Service__Snowflake__WorkerId=" + strconv.Itoa(worker),
		}
	}
	a := kerneltest.Start(t, env(11))
	b := kerneltest.Start(t, env(12))
	a.Leaks.Secrets = append(a.Leaks.Secrets, metricsToken)
	b.Leaks.Secrets = append(b.Leaks.Secrets, metricsToken)
	const name = "adminkernel_cache_invalidation_lag_seconds"
	before := mustScrape(t, b).value(name, map[string]string{"kind": "event"})
	if err := a.Settings().Set(context.Background(), "sys.security.rateLimit.permitPerWindow", "123"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the other kernel to receive the change event", func() bool {
		return mustScrape(t, b).value(name, map[string]string{"kind": "event"}) > before
	})
	s := mustScrape(t, b)
	for _, m := range s[name].GetMetric() {
		h := m.GetHistogram()
		if h.GetSampleCount() > 0 && (h.GetSampleSum() < 0 || h.GetSampleSum()/float64(h.GetSampleCount()) > 10) {
			t.Errorf("implausible lag: %d samples, sum %v s", h.GetSampleCount(), h.GetSampleSum())
		}
	}
}
