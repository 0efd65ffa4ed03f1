package module

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
)

// JobHandler is a compiled job handler (HandlerKind 1 Compiled): code of
// the kernel or of a module that a job names by Name (JobInput's
// handlerName). A module lists its handlers in Module.JobHandlers; the
// scheduler (host/job) offers them in GET /sys/job/handlers and runs them.
type JobHandler struct {
	// Name is what a job's handlerName refers to: unique across modules
	// ("sys.logRetention", "files.abandonedUploads", ...).
	Name string `json:"name"`
	// Description is shown when an operator picks the handler.
	Description string `json:"description"`
	// ParamSchema is an optional JSON Schema (as text) of handlerParam,
	// for the UI; the handler validates its parameter itself.
	ParamSchema string `json:"paramSchema,omitempty"`
	// Run does the work. ctx is cancelled when the run is killed, times
	// out or the kernel shuts down: a handler must return soon after.
	// output (bounded by the scheduler) goes to the run log; an error
	// marks the run Failed.
	Run func(ctx context.Context, run JobRun) (output string, err error) `json:"-"`
}

// JobRun is what a compiled handler learns about its run.
type JobRun struct {
	JobID   int64
	JobCode string
	LogID   int64
	// Param is the job's property bag (JSON text, "" when unset): the
	// contract's properties as an object of strings ({"days":"30"}), or
	// the handlerParam the kernel's earlier body set, numbers included.
	Param string
	// FireTime is the scheduled time of the firing (the request time of a
	// manual run).
	FireTime time.Time
	Log      hclog.Logger
}

// Retention is a module's cleanup of rows that only age (its logs): the
// kernel's log-retention job (kernel.logRetention) calls each module's
// purges with the cutoff of the retention in force, so the job knows no
// module's tables.
type Retention struct {
	// Name says what the rows are, for the run's output ("operation log").
	Name string
	// Purge deletes the module's rows created before the cutoff and says
	// how many.
	Purge func(ctx context.Context, before time.Time) (int, error)
}
