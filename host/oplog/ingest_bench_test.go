//go:build !unit

package oplog_test

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/oplog"
)

// BenchmarkIngestPostgres measures operation-log ingestion on PostgreSQL
// (issue 27 item 5; docs/design/benchmarks.md "Operation-log ingestion"): a
// producer adds rows at a fixed rate (5 000/s) for b.N rows through the
// asynchronous writer with its default queue and batch size; the figures
// are the rate reached, the deepest queue seen and the rows dropped (the
// target is none). `make bench` runs it; b.N ≥ 50 000 gives ten seconds.
func BenchmarkIngestPostgres(b *testing.B) {
	const rate = 5000
	db := dbtest.OpenMigrated(b, config.DBPostgreSQL)
	w := oplog.New(oplog.EntInserter(db.Client), oplog.Options{})
	op := int64(1)
	params := `{"name":"a user","orgId":3,"roleIds":[2,3]}`
	row := oplog.Row{Title: "用户-更新", Method: "PUT", Path: "/api/v1/sys/user/42", ParamJSON: &params,
		Success: true, ElapsedMs: 3, OperatorID: &op, IP: "203.0.113.7", UserAgent: "bench"}
	maxDepth := 0
	b.ResetTimer()
	start := time.Now()
	tick := time.Second / rate
	next := start
	for i := 0; i < b.N; i++ {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(tick)
		row.Time = time.Now()
		w.Add(context.Background(), row)
		if i%500 == 0 {
			maxDepth = max(maxDepth, w.Len())
		}
	}
	produced := time.Since(start)
	for w.Written()+w.Dropped()+w.Lost() < uint64(b.N) {
		maxDepth = max(maxDepth, w.Len())
		time.Sleep(2 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if err := w.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/produced.Seconds(), "offered/s")
	b.ReportMetric(float64(w.Written())/elapsed.Seconds(), "written/s")
	b.ReportMetric(float64(maxDepth), "max-queue")
	b.ReportMetric(float64(w.Dropped()+w.Lost()), "dropped")
	if w.Dropped()+w.Lost() > 0 {
		b.Errorf("%d rows dropped and %d lost at %d rows/s", w.Dropped(), w.Lost(), rate)
	}
}

// BenchmarkIngestPostgresFlood adds rows as fast as one producer can and
// reports the insert rate the writer sustains (the queue's capacity holds
// every row, so nothing is dropped: the figure is the database side).
func BenchmarkIngestPostgresFlood(b *testing.B) {
	db := dbtest.OpenMigrated(b, config.DBPostgreSQL)
	w := oplog.New(oplog.EntInserter(db.Client), oplog.Options{Config: config.OpLog{QueueCapacity: max(b.N, 10000)}})
	op := int64(1)
	row := oplog.Row{Title: "用户-更新", Method: "PUT", Path: "/api/v1/sys/user/42", Success: true, OperatorID: &op, IP: "203.0.113.7"}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		row.Time = time.Now()
		w.Add(context.Background(), row)
	}
	for w.Written()+w.Dropped()+w.Lost() < uint64(b.N) {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if err := w.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.Written())/elapsed.Seconds(), "written/s")
	b.ReportMetric(float64(w.Dropped()+w.Lost()), "dropped")
}
