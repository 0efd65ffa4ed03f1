package tracing_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/request"
)

// A scheduler run is a span of its own trace, "job <code>", naming the
// job (id, code, name) and the run (its log id), with the run's SQL as its
// children; a run that succeeds is not marked failed, and its run log
// carries the trace id.
func TestJobRunIsASpan(t *testing.T) {
	rcv := newReceiver(t)
	k := kerneltest.Start(t, tracingEnv(rcv.URL, "1"))
	tok := k.Admin()
	var (
		logID int64
		run   job.Log
	)
	var ran bool
	k.Do(http.MethodPost, fmt.Sprintf("/api/v1/sys/job/%d/run", job.SystemJobID), tok, nil).Expect(t, "run the system job", 200, 0).Decode(t, &ran)
	var newest request.PagedList[job.Log]
	k.Do(http.MethodGet, fmt.Sprintf("/api/v1/sys/job/log/page?Size=1&JobId=%d", job.SystemJobID), tok, nil).Expect(t, "newest run", 200, 0).Decode(t, &newest)
	if !ran || len(newest.Items) == 0 {
		t.Fatalf("run answered %v; log %+v", ran, newest.Items)
	}
	logID = newest.Items[0].ID
	poll.Until(t, 20*time.Second, "the system job's run ends", func() bool {
		var page request.PagedList[job.Log]
		k.Do(http.MethodGet, "/api/v1/sys/job/log/page?Size=100", tok, nil).Expect(t, "run log", 200, 0).Decode(t, &page)
		for _, l := range page.Items {
			if l.ID == logID {
				run = l
				return l.RunStatus == job.RunSuccess
			}
		}
		return false
	})
	if err := k.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	rcv.check(t)
	spans := rcv.all()
	var runs []span
	for _, s := range spans {
		if s.GetName() == "job "+job.SystemJobCode {
			runs = append(runs, s)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("job spans: %d, want 1 (the manual run):\n%s", len(runs), rcv.dump())
	}
	r := runs[0]
	want := map[string]string{
		"adminkernel.job.id":     strconv.Itoa(job.SystemJobID),
		"adminkernel.job.code":   job.SystemJobCode,
		"adminkernel.job.run_id": strconv.FormatInt(logID, 10),
	}
	for key, v := range want {
		if got := attr(r, key); got != v {
			t.Errorf("%s = %q, want %q (attributes %v)", key, got, v, r.GetAttributes())
		}
	}
	if attr(r, "adminkernel.job.name") == "" || r.GetKind() != tracepb.Span_SPAN_KIND_INTERNAL || r.parentID() != "" ||
		r.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("job span: kind %v, parent %q, status %v, attributes %v; want an internal root span that did not fail",
			r.GetKind(), r.parentID(), r.GetStatus(), r.GetAttributes())
	}
	// The run log names the run's trace (sys_job_log.trace_id).
	if run.TraceID == nil || *run.TraceID != r.traceID() {
		t.Errorf("run log traceId = %v, want the job span's trace %s", run.TraceID, r.traceID())
	}
	children := 0
	for _, s := range spans {
		if s.parentID() == r.id() {
			children++
		}
	}
	if children == 0 {
		t.Errorf("the job span has no child span (the run's SQL):\n%s", rcv.dump())
	}
}
