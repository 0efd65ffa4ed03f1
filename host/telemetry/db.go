package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DBOperations are the operation labels of the query-latency histogram: a
// statement's first keyword (host/tracing.Operation), never its text.
var DBOperations = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "BEGIN", "COMMIT", "ROLLBACK", "OTHER"}

// dbQueries is the query-latency histogram with its series resolved once
// (a statement costs a map lookup and an observation).
type dbQueries struct {
	vec *prometheus.HistogramVec
	by  map[string]prometheus.Observer
}

func newDBQueries() *dbQueries {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "db", Name: "query_duration_seconds",
		Help:    "Time of the SQL statements of the main database, by operation (SELECT, INSERT, UPDATE, DELETE, BEGIN, COMMIT, ROLLBACK, OTHER).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"operation"})
	q := &dbQueries{vec: vec, by: make(map[string]prometheus.Observer, len(DBOperations))}
	for _, op := range DBOperations {
		q.by[op] = vec.WithLabelValues(op)
	}
	return q
}

// DBQuery records one statement of the main database; op is one of
// DBOperations (anything else counts as OTHER).
func (m *Metrics) DBQuery(op string, took time.Duration) {
	if m == nil {
		return
	}
	o, ok := m.db.by[op]
	if !ok {
		o = m.db.by["OTHER"]
	}
	o.Observe(took.Seconds())
}
