package job_test

import (
	"slices"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/job"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v", name, err)
	}
	return loc
}

func TestPreviewCron(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	berlin := mustLoad(t, "Europe/Berlin")
	shanghai := mustLoad(t, "Asia/Shanghai")
	for _, tc := range []struct {
		name, expr string
		loc        *time.Location
		from       time.Time
		count      int
		normalized string
		want       []string
		everySec   bool
	}{
		{
			name: "Quartz six fields with ?", expr: "0 30 3 * * ?", loc: shanghai,
			from: time.Date(2026, 5, 1, 12, 0, 0, 0, shanghai), count: 2, normalized: "0 30 3 * * ?",
			want: []string{"2026-05-02T03:30:00+08:00", "2026-05-03T03:30:00+08:00"},
		},
		{
			name: "five fields get a seconds field", expr: "15  4 * * 1", loc: time.UTC,
			from: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), count: 1, normalized: "0 15 4 * * 1",
			want: []string{"2026-06-01T04:15:00Z"},
		},
		{
			// 2026-03-08 02:00 does not exist in New York: the 02:30
			// firing of that day moves past the gap, the offsets change.
			name: "spring forward: no firing in the missing hour that day", expr: "0 30 2 * * *", loc: ny,
			from: time.Date(2026, 3, 7, 12, 0, 0, 0, ny), count: 3, normalized: "0 30 2 * * *",
			want: []string{"2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00", "2026-03-11T02:30:00-04:00"},
		},
		{
			// 2026-10-25 02:00-03:00 happens twice in Berlin: the 02:30
			// firing runs once, at the first 02:30.
			name: "fall back fires once", expr: "0 30 2 * * *", loc: berlin,
			from: time.Date(2026, 10, 24, 12, 0, 0, 0, berlin), count: 2, normalized: "0 30 2 * * *",
			want: []string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"},
		},
		{
			name: "hourly across the fall-back hour", expr: "0 0 * * * *", loc: berlin,
			from: time.Date(2026, 10, 25, 1, 30, 0, 0, berlin), count: 3, normalized: "0 0 * * * *",
			want: []string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"},
		},
		{
			name: "every second warns", expr: "* * * * * *", loc: time.UTC,
			from: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), count: 2, normalized: "* * * * * *",
			want: []string{"2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"}, everySec: true,
		},
		{
			name: "one occurrence still warns", expr: "*/1 * * * * ?", loc: time.UTC,
			from: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), count: 1, normalized: "*/1 * * * * ?",
			want: []string{"2026-01-01T00:00:01Z"}, everySec: true,
		},
		{
			name: "descriptor", expr: "@daily", loc: time.UTC,
			from: time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC), count: 1, normalized: "@daily",
			want: []string{"2026-01-02T00:00:00Z"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := job.Preview(tc.expr, tc.loc, tc.from, tc.count)
			if err != nil {
				t.Fatal(err)
			}
			if got.Normalized != tc.normalized || !slices.Equal(got.Occurrences, tc.want) || got.EverySecondWarning != tc.everySec {
				t.Fatalf("Preview(%q) = %+v, want normalized %q, %v, warning %v", tc.expr, got, tc.normalized, tc.want, tc.everySec)
			}
		})
	}
}

func TestPreviewCronRefuses(t *testing.T) {
	for _, expr := range []string{"", "nonsense", "61 * * * * *", "* * * * *  * *", "CRON_TZ=UTC 0 0 * * *", "TZ=UTC 0 0 * * *", "0 0 32 * *"} {
		if _, err := job.Preview(expr, time.UTC, time.Now(), 3); err == nil {
			t.Errorf("Preview(%q) accepted", expr)
		}
	}
}

func TestTriggerDue(t *testing.T) {
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	iv := job.Trigger{Kind: job.TriggerInterval, Interval: 10 * time.Second, Anchor: anchor}
	got := iv.Due(anchor, anchor.Add(35*time.Second))
	want := []time.Time{anchor.Add(10 * time.Second), anchor.Add(20 * time.Second), anchor.Add(30 * time.Second)}
	if !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("interval due %v, want %v", got, want)
	}
	end := job.Trigger{Kind: job.TriggerInterval, Interval: 10 * time.Second, Anchor: anchor, End: anchor.Add(15 * time.Second)}
	if got := end.Due(anchor, anchor.Add(time.Hour)); len(got) != 1 {
		t.Fatalf("an end time bounds the firings: %v", got)
	}
	one := job.Trigger{Kind: job.TriggerOneShot, RunAt: anchor.Add(time.Minute)}
	if got := one.Due(anchor, anchor.Add(time.Hour)); len(got) != 1 || !got[0].Equal(anchor.Add(time.Minute)) {
		t.Fatalf("one-shot due %v", got)
	}
	if got := one.Due(anchor.Add(time.Minute), anchor.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a one-shot job fires once: %v", got)
	}
	// After days of downtime a job every second has too many firings: the
	// newest are kept.
	sec := job.Trigger{Kind: job.TriggerInterval, Interval: time.Second, Anchor: anchor}
	many := sec.Due(anchor, anchor.Add(48*time.Hour))
	if len(many) != 10000 || !many[len(many)-1].Equal(anchor.Add(48*time.Hour)) {
		t.Fatalf("%d firings kept, last %s", len(many), many[len(many)-1])
	}
}
