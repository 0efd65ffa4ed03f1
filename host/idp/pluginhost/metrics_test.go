package pluginhost_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/host/telemetry"
)

// TestMetricsCountRestartsAndCalls: a killed plugin's restart is counted
// once, for that provider only, and the calls are timed per provider and
// method.
func TestMetricsCountRestartsAndCalls(t *testing.T) {
	t.Parallel()
	m := telemetry.New()
	e := load(t, pluginDir(t, "alpha", "beta"), func(o *pluginhost.Options) { o.Metrics = m })
	alpha := provider(t, e.reg, "alpha")
	if _, err := alpha.AuthorizeURL(context.Background(), authorizeReq("before")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(e.info(t, "alpha").PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The next authorize waits for the restart.
	if _, err := alpha.AuthorizeURL(context.Background(), authorizeReq("after")); err != nil {
		t.Fatalf("AuthorizeURL after the kill = %v", err)
	}
	restarts, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var alphaRestarts, betaRestarts float64
	for _, f := range restarts {
		if f.GetName() != "adminkernel_plugin_restarts_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			switch s.GetLabel()[0].GetValue() {
			case "alpha":
				alphaRestarts = s.GetCounter().GetValue()
			case "beta":
				betaRestarts = s.GetCounter().GetValue()
			}
		}
	}
	if alphaRestarts != 1 || betaRestarts != 0 {
		t.Errorf("restarts alpha %v, beta %v; want 1 and 0", alphaRestarts, betaRestarts)
	}
	if n := testutil.CollectAndCount(m.Registry(), "adminkernel_plugin_call_duration_seconds"); n < 1 {
		t.Errorf("%d call series, want the AuthorizeURL calls", n)
	}
}
