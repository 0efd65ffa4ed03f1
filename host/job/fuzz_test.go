package job

import (
	"testing"
	"time"
)

// fuzzZones are the zones FuzzParseCron runs schedules in: one without
// DST, two with an hour of DST, one with half an hour.
var fuzzZones = []string{"UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe"}

// maxCronWork bounds the time one input may take (parse, then up to 8
// firings): cron/v3 gives up after five years of search, so this is far
// above any legitimate run even on a loaded machine.
const maxCronWork = 5 * time.Second

// FuzzParseCron: ParseCron never panics, answers in bounded time, and a
// parsed schedule's firings are strictly after the time asked about (or
// none), increasing from one to the next; Preview agrees with it.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{
		"0 30 3 * * ?", "30 3 * * *", "* * * * * ?", "0 0 0 29 2 ?", "0 0 0 31 4 ?", "@hourly", "@every 1h",
		"0 30 2 * * *", "0 0/15 * * * ?", "0 0 12 ? * MON-FRI", "59 59 23 31 12 ?", "CRON_TZ=UTC 0 0 * * *",
		"", "0 0 0 1 1 ? 2099", "*/0 * * * * *", "0 0 0 L * ?", "0 0 0 ? * 7#5", "1-59/58 0-23/23 1-31/30 1-12/11 0-6/6",
	} {
		f.Add(s, int64(1_775_000_000), uint8(0))
		f.Add(s, int64(1_793_000_000), uint8(1))
	}
	f.Fuzz(func(t *testing.T, expr string, unix int64, zone uint8) {
		loc, err := time.LoadLocation(fuzzZones[int(zone)%len(fuzzZones)])
		if err != nil {
			t.Skip(err)
		}
		// 1970 to about 2200: the range the job editor accepts and more.
		now := time.Unix(((unix%7_258_118_400)+7_258_118_400)%7_258_118_400, 0).In(loc)
		start := time.Now()
		s, err := ParseCron(expr, loc)
		if err != nil {
			if s != nil {
				t.Fatalf("ParseCron(%q) returned a schedule with the error %v", expr, err)
			}
			return
		}
		prev := now
		var fired []time.Time
		for range 8 {
			n := s.Next(prev)
			if n.IsZero() {
				break
			}
			if !n.After(prev) {
				t.Fatalf("ParseCron(%q).Next(%s) = %s, not after it", expr, prev, n)
			}
			fired = append(fired, n)
			prev = n
		}
		if d := time.Since(start); d > maxCronWork {
			t.Fatalf("ParseCron(%q) and 8 firings took %s", expr, d)
		}
		out, err := Preview(expr, loc, now, 3)
		if err != nil {
			t.Fatalf("Preview(%q) refused what ParseCron accepted: %v", expr, err)
		}
		if len(out.Occurrences) != min(3, len(fired)) {
			t.Fatalf("Preview(%q) gave %d occurrences, the schedule %d", expr, len(out.Occurrences), len(fired))
		}
		for i, o := range out.Occurrences {
			if o != fired[i].In(loc).Format(occurrenceLayout) {
				t.Fatalf("Preview(%q)[%d] = %s, the schedule %s", expr, i, o, fired[i])
			}
		}
		tr := Trigger{Kind: TriggerCron, Cron: s}
		if n := tr.Next(now); !n.IsZero() && !n.After(now) {
			t.Fatalf("Trigger.Next(%s) = %s for %q", now, n, expr)
		}
	})
}
