// Package job is the kernel's scheduler (issue 22, wire contract §4.11
// "Jobs"): cron, interval and one-shot jobs that several replicas run
// exactly once per firing, their run log and the thirteen /sys/job
// operations. docs/developers/jobs.md describes the design; this file holds the
// contract's enums.
package job

// HandlerKind is what a job runs.
const (
	HandlerCompiled = 1
	HandlerHTTP     = 2
	HandlerSQL      = 3
)

// TriggerKind is when a job fires.
const (
	TriggerCron     = 1
	TriggerInterval = 2
	TriggerOneShot  = 3
)

// Misfire is what a firing missed while no replica ran (downtime) becomes.
const (
	MisfireSkip        = 1
	MisfireFireOnceNow = 2
)

// Concurrency is what a firing does while an earlier run of the job runs.
const (
	ConcurrencySerialSkip = 1
	ConcurrencyParallel   = 2
)

// Status of a job.
const (
	StatusReady     = 1
	StatusPaused    = 2
	StatusCompleted = 3
	// StatusPanic: the job's compiled handler is not registered any more
	// (its module was removed); the job stops firing until it is updated.
	StatusPanic = 4
)

// RunStatus of a run log row.
const (
	RunRunning   = 1
	RunSuccess   = 2
	RunFailed    = 3
	RunTimeout   = 4
	RunCancelled = 5
	RunSkipped   = 6
)

// TriggeredBy values of a run log row.
const (
	BySchedule = "schedule"
	ByManual   = "manual"
	ByMisfire  = "misfire"
	// ByMissed is the row of the firings a Skip job missed while no
	// replica ran (fireMode 4 MissedSkipped): Skipped, no run.
	ByMissed = "missed"
)
