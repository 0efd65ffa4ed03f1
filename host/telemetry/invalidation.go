package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func newInvalidationLag() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "cache", Name: "invalidation_lag_seconds",
		Help:    "Time from the publication of a cross-replica event (near-cache invalidation, permission and setting changes) to its receipt by this replica, by channel kind.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"kind"})
}

// InvalidationLag records the receipt of a cross-replica event published at
// sent; kind is a fixed word ("near_cache", "event"). A negative lag (the
// clocks of two replicas disagree) counts as 0.
func (m *Metrics) InvalidationLag(kind string, sent time.Time) {
	if m == nil || sent.IsZero() {
		return
	}
	m.invalidation.WithLabelValues(kind).Observe(max(time.Since(sent), 0).Seconds())
}
