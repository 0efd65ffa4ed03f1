package job

import (
	"errors"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser reads cron expressions with an optional seconds field
// (Quartz's "0 30 3 * * ?" and classic five-field "30 3 * * *") and the
// @hourly-style descriptors; "?" is a synonym of "*".
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxFieldsLen bounds an expression before it reaches the parser.
const maxCronLen = 128

// ParseCron parses expr in loc. Time-zone prefixes (CRON_TZ=, TZ=) are
// refused: the zone is the job's timeZone.
func ParseCron(expr string, loc *time.Location) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" || len(expr) > maxCronLen {
		return nil, errors.New("empty or too long")
	}
	if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
		return nil, errors.New("time-zone prefixes are not accepted: use the job's timeZone")
	}
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, err
	}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
		if !everyHour(spec) {
			return onceAtFallBack{spec}, nil
		}
	}
	return s, nil
}

// starBit is cron/v3's mark of a field written "*" or "?".
const starBit = 1 << 63

// everyHour reports whether the hour field covers every hour.
func everyHour(spec *cron.SpecSchedule) bool {
	return spec.Hour&starBit != 0 || spec.Hour&(1<<24-1) == 1<<24-1
}

// onceAtFallBack is a schedule of fixed hours that does not fire again
// in the hour a fall-back DST change repeats: "30 2 * * *" runs once on
// that day, at the first 02:30 (as classic cron does). Schedules of every
// hour keep both hours, since a real hour passed between them. A firing
// at a local time a spring-forward change skips does not happen that day
// (cron/v3's behaviour, kept).
type onceAtFallBack struct{ spec *cron.SpecSchedule }

func (s onceAtFallBack) Next(t time.Time) time.Time {
	for range 4 {
		n := s.spec.Next(t)
		if n.IsZero() || !repeatedWallClock(n) {
			return n
		}
		t = n
	}
	return time.Time{}
}

// repeatedWallClock reports whether n's local wall clock already
// happened earlier (n is in the second pass of a fall-back hour).
func repeatedWallClock(n time.Time) bool {
	_, off := n.Zone()
	_, before := n.Add(-6 * time.Hour).Zone()
	if before <= off {
		return false
	}
	p := n.Add(-time.Duration(before-off) * time.Second)
	return p.Hour() == n.Hour() && p.Minute() == n.Minute() && p.Second() == n.Second() && p.Day() == n.Day()
}

// Normalize returns expr in the six-field form (seconds first) with single
// spaces: "30 3 * * *" becomes "0 30 3 * * *". Descriptors are kept.
func Normalize(expr string) string {
	f := strings.Fields(expr)
	if len(f) == 5 {
		f = append([]string{"0"}, f...)
	}
	return strings.Join(f, " ")
}

// Trigger is a job's schedule: the firings after a time.
type Trigger struct {
	Kind     int
	Cron     cron.Schedule
	Interval time.Duration
	RunAt    time.Time
	// Anchor is where intervals count from.
	Anchor time.Time
	// Start and End bound the firings (zero: unbounded).
	Start, End time.Time
}

// Next returns the first firing strictly after t (zero when there is
// none).
func (tr Trigger) Next(t time.Time) time.Time {
	if !tr.Start.IsZero() && t.Before(tr.Start) {
		t = tr.Start.Add(-time.Nanosecond)
	}
	var n time.Time
	switch tr.Kind {
	case TriggerCron:
		if tr.Cron == nil {
			return time.Time{}
		}
		n = tr.Cron.Next(t)
	case TriggerInterval:
		if tr.Interval <= 0 {
			return time.Time{}
		}
		if t.Before(tr.Anchor) {
			n = tr.Anchor
		} else {
			k := t.Sub(tr.Anchor)/tr.Interval + 1
			n = tr.Anchor.Add(k * tr.Interval)
		}
	case TriggerOneShot:
		if tr.RunAt.After(t) {
			n = tr.RunAt
		}
	}
	if n.IsZero() || (!tr.End.IsZero() && n.After(tr.End)) {
		return time.Time{}
	}
	return n
}

// maxDue bounds how many firings one pass looks at per job (a job every
// second after an hour of downtime has 3600; only the newest matter).
const maxDue = 10000

// Due returns the firings in (after, until], oldest first, at most
// maxDue of them (the newest are kept when there are more).
func (tr Trigger) Due(after, until time.Time) []time.Time {
	var out []time.Time
	for t := tr.Next(after); !t.IsZero() && !t.After(until); t = tr.Next(t) {
		out = append(out, t)
		if len(out) > maxDue {
			out = out[1:]
		}
	}
	return out
}

// PreviewInput is the body of POST /sys/job/preview-cron.
type PreviewInput struct {
	Cron string `json:"cron"`
	// Count of occurrences (default 5, at most 50).
	Count *int `json:"count"`
	// From is where the occurrences start (default now).
	From *string `json:"from"`
	// TimeZone is an IANA zone (default the server's). An extension of
	// the contract's body, so that the preview matches the job's zone.
	TimeZone *string `json:"timeZone"`
}

// PreviewOutput is the answer of POST /sys/job/preview-cron.
type PreviewOutput struct {
	Normalized  string   `json:"normalized"`
	Occurrences []string `json:"occurrences"`
	// EverySecondWarning: two consecutive occurrences are one second
	// apart (the expression fires every second at some time).
	EverySecondWarning bool `json:"everySecondWarning"`
}

// occurrenceLayout is how occurrences are written: RFC 3339 with the
// zone's offset, so a DST change is visible.
const occurrenceLayout = time.RFC3339

// Preview lists the next occurrences of expr in loc from from.
func Preview(expr string, loc *time.Location, from time.Time, count int) (PreviewOutput, error) {
	s, err := ParseCron(expr, loc)
	if err != nil {
		return PreviewOutput{}, err
	}
	out := PreviewOutput{Normalized: Normalize(expr), Occurrences: make([]string, 0, count)}
	t := from
	var prev time.Time
	for range count {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		if !prev.IsZero() && t.Sub(prev) == time.Second {
			out.EverySecondWarning = true
		}
		out.Occurrences = append(out.Occurrences, t.In(loc).Format(occurrenceLayout))
		prev = t
	}
	if !out.EverySecondWarning && count < 2 {
		// One occurrence says nothing about the spacing: look at two.
		if a := s.Next(from); !a.IsZero() {
			if b := s.Next(a); !b.IsZero() && b.Sub(a) == time.Second {
				out.EverySecondWarning = true
			}
		}
	}
	return out, nil
}
