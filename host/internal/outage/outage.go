// Package outage follows the availability of the kernel's network
// dependencies (the database, Redis) and marks the errors that mean "the
// dependency is down" so that the central error handler answers them with
// HTTP 503, their catalog code and Retry-After instead of 500 and a stack.
//
// A Tracker belongs to one dependency of one kernel (no package-level
// state: two kernels in one process share nothing). The layer that talks to
// the dependency classifies its errors at the source and reports through
// the Tracker: the first connection-level failure logs one WARN, later
// failures only count, and the first success of an operation begun during
// the outage logs one INFO with the outage's length and the number of
// requests refused. While the dependency is up, an operation pays one
// atomic load (Begin) and nothing on success.
package outage

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
)

// RetryAfterSeconds is the Retry-After of an outage answer: long enough that
// clients do not hammer a dependency that is reconnecting (the drivers
// redial on the next operation, within a second of the dependency's
// return), short enough that a blip costs a user seconds, not minutes.
const RetryAfterSeconds = 5

// Tracker is the availability state of one dependency. A nil *Tracker is
// valid and tracks nothing (marking still works). Safe for concurrent use.
type Tracker struct {
	name string
	code errcode.Code
	kind error
	log  hclog.Logger
	now  func() time.Time

	// state is 0 while up, else the number of the current outage.
	state   atomic.Uint64
	refused atomic.Int64
	mu      sync.Mutex // serialises the transitions
	seq     uint64
	since   time.Time
}

// Options configures a Tracker.
type Options struct {
	// Name is the dependency in log lines ("redis", "database").
	Name string
	// Code is the catalog code an outage answers with.
	Code errcode.Code
	// Kind is the sentinel the marked errors match with errors.Is
	// (cache.ErrUnavailable, database.ErrUnavailable).
	Kind error
	// Log receives the WARN and INFO lines; nil discards them.
	Log hclog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// New returns a Tracker of a dependency that is up.
func New(o Options) *Tracker {
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Tracker{name: o.Name, code: o.Code, kind: o.Kind, log: o.Log, now: o.Now}
}

// Op is what Begin returns and Done takes: the outage an operation began
// in (0: none).
type Op uint64

// Begin is called before an operation on the dependency: one atomic load.
func (t *Tracker) Begin() Op {
	if t == nil {
		return 0
	}
	return Op(t.state.Load())
}

// Succeeded records that an operation begun at op reached the dependency.
// An operation begun while it was up costs nothing; one begun during an
// outage ends that outage (an operation begun before the outage proves
// nothing about the present).
func (t *Tracker) Succeeded(op Op) {
	if op == 0 || t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state.Load() != uint64(op) {
		return
	}
	down := t.now().Sub(t.since)
	n := t.refused.Swap(0)
	t.state.Store(0)
	refused := fmt.Sprintf("%d requests were refused", n)
	if n == 1 {
		refused = "1 request was refused"
	}
	t.log.Info(fmt.Sprintf("%s is back after %.1fs; %s", t.name, down.Seconds(), refused),
		"dependency", t.name, "down_seconds", down.Seconds(), "refused", n)
}

// Failed records a connection-level failure (the caller classified err) and
// returns err marked as an outage of this dependency. The first failure of
// an outage logs a WARN; later ones are silent.
func (t *Tracker) Failed(err error) error {
	if t == nil || err == nil {
		return err
	}
	if t.state.Load() == 0 {
		t.mu.Lock()
		if t.state.Load() == 0 {
			t.seq++
			t.since = t.now()
			t.refused.Store(0)
			t.state.Store(t.seq)
			t.log.Warn(fmt.Sprintf("%s unavailable: %v; answering 503 until it is back", t.name, err),
				"dependency", t.name)
		}
		t.mu.Unlock()
	}
	return t.Mark(err)
}

// Mark wraps err as an outage of this dependency without recording it (a
// nil Tracker returns err as is).
func (t *Tracker) Mark(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if t == nil {
		return err
	}
	return &Error{Err: err, Code: t.code, Kind: t.kind, tracker: t}
}

// Down reports whether the dependency is in an outage and since when.
func (t *Tracker) Down() (since time.Time, down bool) {
	if t == nil || t.state.Load() == 0 {
		return time.Time{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state.Load() == 0 {
		return time.Time{}, false
	}
	return t.since, true
}

// Name is the dependency's name.
func (t *Tracker) Name() string { return t.name }

// Error is a failure to reach a dependency. Its text is the cause's text.
type Error struct {
	// Err is the driver's error.
	Err error
	// Code is the catalog code to answer with.
	Code errcode.Code
	// Kind is the sentinel errors.Is matches (cache.ErrUnavailable,
	// database.ErrUnavailable).
	Kind    error
	tracker *Tracker
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the dependency's sentinel.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Refused counts a request answered 503 because of this outage (the
// central error handler calls it once per request).
func (e *Error) Refused() {
	if e.tracker != nil {
		e.tracker.refused.Add(1)
	}
}

// Dependency is the name of the dependency that failed.
func (e *Error) Dependency() string {
	if e.tracker == nil {
		return ""
	}
	return e.tracker.name
}

// As finds an outage error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
