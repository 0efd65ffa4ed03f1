package telemetry

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// WatchDB adds the connection-pool statistics of db (sql.DB Stats) under
// go_sql_*{db_name=name}.
func (m *Metrics) WatchDB(name string, db *sql.DB) error {
	if m == nil || db == nil {
		return nil
	}
	return m.reg.Register(collectors.NewDBStatsCollector(db, name))
}

// OpLog is what the operation-log writer tells (host/oplog.Writer).
type OpLog interface {
	Len() int
	Capacity() int
	Dropped() uint64
	Lost() uint64
}

// WatchOpLog adds the operation-log queue depth and its drops and losses.
func (m *Metrics) WatchOpLog(w OpLog) error {
	if m == nil || w == nil {
		return nil
	}
	return m.Register(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "oplog", Name: "queue_length",
			Help: "Operation-log rows waiting to be written.",
		}, func() float64 { return float64(w.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "oplog", Name: "queue_capacity",
			Help: "Capacity of the operation-log queue (Service:Logging:OpLog:QueueCapacity).",
		}, func() float64 { return float64(w.Capacity()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "oplog", Name: "dropped_total",
			Help: "Operation-log rows dropped because the queue was full.",
		}, func() float64 { return float64(w.Dropped()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "oplog", Name: "lost_total",
			Help: "Operation-log rows given up after a failed insert and its retry.",
		}, func() float64 { return float64(w.Lost()) }),
	)
}

// HashPoolStats are the password-hash pool's figures (host/password.Stats).
type HashPoolStats struct {
	Concurrency, QueueCapacity int
	Running, Waiting           int64
	Completed                  uint64
	Rejected, TimedOut         uint64
	Abandoned                  uint64
}

// hashPool collects the password-hash pool at scrape time.
type hashPool struct {
	stats                             func() HashPoolStats
	running, waiting, slots, queueCap *prometheus.Desc
	completed, refused                *prometheus.Desc
}

// WatchHashPool adds the password-hash pool (issue 27): hashes running and
// waiting, its limits, hashes computed and callers refused by reason.
func (m *Metrics) WatchHashPool(stats func() HashPoolStats) error {
	if m == nil || stats == nil {
		return nil
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "password_hash", name), help, labels, nil)
	}
	return m.reg.Register(&hashPool{
		stats:     stats,
		running:   d("running", "Password hashes being computed."),
		waiting:   d("waiting", "Callers waiting for a password-hash slot."),
		slots:     d("concurrency", "Password hashes computed at once at most (Service:Security:Password:HashConcurrency)."),
		queueCap:  d("queue_capacity", "Callers that may wait for a slot (Service:Security:Password:HashQueue)."),
		completed: d("completed_total", "Password hashes computed."),
		refused:   d("refusals_total", "Callers refused with 503, by reason (rejected: queue full or wait too long; timed_out; abandoned).", "reason"),
	})
}

func (h *hashPool) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{h.running, h.waiting, h.slots, h.queueCap, h.completed, h.refused} {
		ch <- d
	}
}

func (h *hashPool) Collect(ch chan<- prometheus.Metric) {
	s := h.stats()
	ch <- prometheus.MustNewConstMetric(h.running, prometheus.GaugeValue, float64(s.Running))
	ch <- prometheus.MustNewConstMetric(h.waiting, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(h.slots, prometheus.GaugeValue, float64(s.Concurrency))
	ch <- prometheus.MustNewConstMetric(h.queueCap, prometheus.GaugeValue, float64(s.QueueCapacity))
	ch <- prometheus.MustNewConstMetric(h.completed, prometheus.CounterValue, float64(s.Completed))
	ch <- prometheus.MustNewConstMetric(h.refused, prometheus.CounterValue, float64(s.Rejected), "rejected")
	ch <- prometheus.MustNewConstMetric(h.refused, prometheus.CounterValue, float64(s.TimedOut), "timed_out")
	ch <- prometheus.MustNewConstMetric(h.refused, prometheus.CounterValue, float64(s.Abandoned), "abandoned")
}

// SessionsRefresh is how long the active-session count is reused between
// scrapes: a scrape never counts the session table more than once per
// SessionsRefresh, however often it comes.
const SessionsRefresh = 30 * time.Second

// sessionsTimeout bounds one count.
const sessionsTimeout = 5 * time.Second

// WatchSessions adds the active-session gauge, counted by count (a query
// on the session table's revoked/expiry index) at most once per
// SessionsRefresh. A failed count keeps the previous figure.
func (m *Metrics) WatchSessions(count func(ctx context.Context) (int, error)) error {
	if m == nil || count == nil {
		return nil
	}
	var mu sync.Mutex
	var last float64
	var at time.Time
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "sessions", Name: "active",
		Help: "Sessions neither revoked nor expired (counted at most every 30 s).",
	}, func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if !at.IsZero() && time.Since(at) < SessionsRefresh {
			return last
		}
		ctx, cancel := context.WithTimeout(context.Background(), sessionsTimeout)
		defer cancel()
		if n, err := count(ctx); err == nil {
			last = float64(n)
		}
		at = time.Now()
		return last
	}))
}

// PluginState is one provider plugin's condition (host/idp/pluginhost.Info).
type PluginState struct {
	Provider string
	State    string
}

// PluginStates are the states a plugin gauge reports (1 for the current
// one, 0 for the others), so that alerts can match on a fixed set.
var PluginStates = []string{"ready", "degraded", "misconfigured", "unconfigured", "missing", "not_launched"}

type plugins struct {
	list func() []PluginState
	desc *prometheus.Desc
}

// WatchPlugins adds adminkernel_plugin_state{provider,state}: 1 for each
// configured plugin's current state, 0 for its other states.
func (m *Metrics) WatchPlugins(list func() []PluginState) error {
	if m == nil || list == nil {
		return nil
	}
	return m.reg.Register(&plugins{list: list, desc: prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "plugin", "state"),
		"Provider plugin state: 1 for the current state of each configured plugin, 0 for the others.",
		[]string{"provider", "state"}, nil)})
}

func (p *plugins) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p *plugins) Collect(ch chan<- prometheus.Metric) {
	for _, s := range p.list() {
		if s.Provider == "" {
			continue
		}
		current := strings.ReplaceAll(s.State, " ", "_")
		for _, state := range PluginStates {
			v := 0.0
			if state == current {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, v, s.Provider, state)
		}
	}
}
