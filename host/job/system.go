package job

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
)

// KeyLogRetentionFloorDays is the sys_config key of the log retention
// floor: no retention (sys.job.logRetentionDays, a system job's
// handlerParam days) goes below it. Only the super-admin changes it
// (sysconfig.Entry.SuperAdminOnly).
const KeyLogRetentionFloorDays = "sys.job.logRetentionFloorDays"

// defaultRetentionFloor is the floor when the settings cannot be read.
const defaultRetentionFloor = 30

// The bounds a system job keeps whoever edits it (docs/developers/jobs.md).
const (
	// systemMinGap and systemMaxGap bound the time between two firings of
	// a system job (cron or interval) and until its first firing.
	systemMinGap = time.Hour
	systemMaxGap = 31 * 24 * time.Hour
	// systemMinTimeout is the shortest timeout a system job may have (0
	// is none).
	systemMinTimeout = 60
	// systemGapsChecked is how many firings of a cron expression are
	// checked against the gaps.
	systemGapsChecked = 8
)

// retentionFloor is the log retention floor in days.
func (e *Engine) retentionFloor(ctx context.Context) int {
	if e.settings == nil {
		return defaultRetentionFloor
	}
	n, err := e.settings.Int(ctx, KeyLogRetentionFloorDays)
	if err != nil || n < 1 {
		return defaultRetentionFloor
	}
	return n
}

func outOfBounds(field string) *errcode.Error {
	return errcode.New(errcode.JobSystemBounds).With("field", field)
}

// checkSystem holds a validated update of a system job to the bounds a
// system job keeps: its handler's parameter valid (a retention never
// below the floor: 47016), a recurring trigger firing between hourly and
// monthly, no start or end time, no timeout below a minute (47015 naming
// the field otherwise).
func (s *Service) checkSystem(ctx context.Context, c checked) error {
	in := c.in
	param := ""
	if c.param != nil {
		param = *c.param
	}
	switch in.HandlerName {
	case HandlerLogRetention, HandlerSessionCleanup:
		p, err := readParam(param)
		if err != nil {
			return outOfBounds("handlerParam")
		}
		if p.Days != nil && in.HandlerName == HandlerLogRetention {
			if floor := s.engine.retentionFloor(ctx); *p.Days < floor {
				return errcode.New(errcode.JobRetentionBelowFloor).With("floor", floor)
			}
		}
	}
	if c.start != nil {
		return outOfBounds("startTime")
	}
	if c.end != nil {
		return outOfBounds("endTime")
	}
	if in.TimeoutSeconds != 0 && in.TimeoutSeconds < systemMinTimeout {
		return outOfBounds("timeoutSeconds")
	}
	switch in.TriggerKind {
	case TriggerInterval:
		if d := time.Duration(*c.interval) * time.Second; d < systemMinGap || d > systemMaxGap {
			return outOfBounds("intervalSeconds")
		}
	case TriggerCron:
		loc, err := location(c.tz)
		if err != nil {
			return outOfBounds("timeZone")
		}
		sched, err := ParseCron(*c.cron, loc)
		if err != nil {
			return outOfBounds("cronExpression")
		}
		prev := s.now()
		for i := range systemGapsChecked {
			next := sched.Next(prev)
			if next.IsZero() {
				return outOfBounds("cronExpression")
			}
			gap := next.Sub(prev)
			if gap > systemMaxGap || (i > 0 && gap < systemMinGap) {
				return outOfBounds("cronExpression")
			}
			prev = next
		}
	default:
		return outOfBounds("triggerKind")
	}
	return nil
}
