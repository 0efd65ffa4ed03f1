package providertest

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/pluginsdk"
)

// TB is what the kit's checks need of the test running them. *testing.T
// and testing.TB satisfy it (Run, InProcess, Start under go test), and so
// does the reporter of Check, which runs the same checks without go test's
// runner (the kernel's `adminkernel providers test`).
type TB interface {
	Helper()
	Name() string
	Log(args ...any)
	Logf(format string, args ...any)
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Failed() bool
	Cleanup(f func())
}

// subtest runs f as the subtest name of t: t.Run under go test, the
// reporter's own runner under Check.
func subtest(t TB, name string, f func(t TB)) {
	switch p := t.(type) {
	case *testing.T:
		p.Run(name, func(t *testing.T) { f(t) })
	case *check:
		p.run(name, f)
	default:
		// A TB of neither kind (a *testing.B, say) has no subtests: run
		// the check on t itself.
		f(t)
	}
}

// CheckTimeout bounds one check of Check (its subchecks included): a check
// that has not returned by then fails, and its cleanups (which stop the
// plugin process) run.
const CheckTimeout = 2 * time.Minute

// Result is one check Check ran.
type Result struct {
	// Name is the check's path, e.g. "Configure/Accepted".
	Name string
	// Passed: neither the check nor any of its subchecks failed.
	Passed bool
	// Subchecks is how many subchecks it ran (0: a check of its own).
	Subchecks int
	// Output holds its failures and log lines, in order.
	Output []string
	// Duration is how long it took.
	Duration time.Duration
	// own: the check itself failed (not only a subcheck).
	own bool
}

// Counted reports whether r is one of the checks Report counts: a check
// without subchecks, or a parent that failed on its own (before or after
// its subchecks).
func (r Result) Counted() bool { return r.Subchecks == 0 || r.own }

// Report is what Check ran: every check, subchecks before their parent
// (in the order they ended).
type Report struct {
	Results []Result
}

// Run is the number of checks run (Result.Counted).
func (r Report) Run() int {
	n := 0
	for _, c := range r.Results {
		if c.Counted() {
			n++
		}
	}
	return n
}

// Passed is the number of checks run that passed.
func (r Report) Passed() int {
	n := 0
	for _, c := range r.Results {
		if c.Counted() && c.Passed {
			n++
		}
	}
	return n
}

// OK reports whether at least one check ran and every one passed: a run
// of no check is a failure, never a pass.
func (r Report) OK() bool {
	if r.Run() == 0 {
		return false
	}
	for _, c := range r.Results {
		if !c.Passed {
			return false
		}
	}
	return true
}

// Check runs every check of the kit against the providers newProvider
// builds, without go test: each check (and subcheck) runs in a goroutine
// of its own with a TB that records its failures, Fatal ends only that
// check, its cleanups run when it ends, and a panic fails it. progress, when
// not nil, gets each result as its check ends. These are the checks Run
// runs, in the same order; Options.Login, which takes a *testing.T, must
// be nil (the checks that need a login at the vendor do not run).
func Check(newProvider func(t TB) pluginsdk.Provider, opts Options, progress func(Result)) (Report, error) {
	if opts.Login != nil {
		return Report{}, fmt.Errorf("providertest: Check runs without go test: Options.Login (a func of *testing.T) must be nil")
	}
	c := &checker{progress: progress}
	root := &check{c: c}
	newKit(newProvider, opts).run(root)
	return Report{Results: c.results}, nil
}

// checker collects the results of one Check.
type checker struct {
	mu       sync.Mutex
	results  []Result
	progress func(Result)
}

func (c *checker) add(r Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.results = append(c.results, r)
	if c.progress != nil {
		c.progress(r)
	}
}

// check is the TB of one check under Check.
type check struct {
	c    *checker
	name string // "" for the root, which only runs checks

	mu        sync.Mutex
	failed    bool // the check itself
	subFailed bool
	subs      int
	output    []string
	cleanups  []func()
	done      bool
}

func (k *check) Helper()      {}
func (k *check) Name() string { return k.name }

func (k *check) log(s string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.done {
		k.output = append(k.output, strings.TrimRight(s, "\n"))
	}
}

func (k *check) fail() {
	k.mu.Lock()
	k.failed = true
	k.mu.Unlock()
}

func (k *check) Log(args ...any)                 { k.log(fmt.Sprintln(args...)) }
func (k *check) Logf(format string, args ...any) { k.log(fmt.Sprintf(format, args...)) }
func (k *check) Error(args ...any)               { k.Log(args...); k.fail() }
func (k *check) Errorf(format string, args ...any) {
	k.Logf(format, args...)
	k.fail()
}

// Fatal and Fatalf end the check's goroutine, as testing.T's do: call them
// from the check's own goroutine only.
func (k *check) Fatal(args ...any) { k.Error(args...); runtime.Goexit() }
func (k *check) Fatalf(format string, args ...any) {
	k.Errorf(format, args...)
	runtime.Goexit()
}

func (k *check) Failed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failed || k.subFailed
}

func (k *check) Cleanup(f func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cleanups = append(k.cleanups, f)
}

// cleanup runs the registered cleanups, last first, once; a panicking
// cleanup fails the check and the others still run.
func (k *check) cleanup() {
	for {
		k.mu.Lock()
		n := len(k.cleanups)
		if n == 0 {
			k.mu.Unlock()
			return
		}
		f := k.cleanups[n-1]
		k.cleanups = k.cleanups[:n-1]
		k.mu.Unlock()
		func() {
			defer func() {
				if p := recover(); p != nil {
					k.Errorf("cleanup panicked: %v", p)
				}
			}()
			f()
		}()
	}
}

// run runs f as the subcheck name of k and records its result.
func (k *check) run(name string, f func(t TB)) {
	full := name
	if k.name != "" {
		full = k.name + "/" + name
	}
	sub := &check{c: k.c, name: full}
	k.mu.Lock()
	k.subs++
	k.mu.Unlock()
	start := time.Now()
	done := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		defer once.Do(sub.cleanup)
		defer func() {
			if p := recover(); p != nil {
				sub.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		f(sub)
	}()
	timer := time.NewTimer(CheckTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		sub.Errorf("the check did not end within %v", CheckTimeout)
		// Stopping its plugin usually ends the stuck call.
		once.Do(sub.cleanup)
		select {
		case <-done:
		case <-time.After(CancelGrace):
		}
	}
	sub.mu.Lock()
	sub.done = true
	r := Result{
		Name:      full,
		Passed:    !sub.failed && !sub.subFailed,
		Subchecks: sub.subs,
		Output:    sub.output,
		Duration:  time.Since(start),
		own:       sub.failed,
	}
	sub.mu.Unlock()
	if !r.Passed {
		k.mu.Lock()
		k.subFailed = true
		k.mu.Unlock()
	}
	k.c.add(r)
}
