package exceptionlog

import (
	"context"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/envelope"
)

// Go runs f in a new goroutine that survives a panic of f: the panic is
// recovered, logged with its stack and written to the exception log as a
// background row named name (when rec is not nil). The process keeps
// running; f is not restarted.
//
// Every background goroutine of the kernel (flushers, sweepers, jobs) is
// started through Go or wraps its work in Protect.
func Go(log hclog.Logger, rec *Recorder, name string, f func()) {
	go func() { Protect(log, rec, name, f) }()
}

// Protect runs f in the calling goroutine and recovers a panic of f the way
// Go does. It reports whether f panicked, so a loop can carry on with its
// next round.
func Protect(log hclog.Logger, rec *Recorder, name string, f func()) (panicked bool) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		panicked = true
		pe := &envelope.PanicError{Value: v, Stack: debug.Stack()}
		if log == nil {
			log = hclog.NewNullLogger()
		}
		log.Error("background goroutine panicked", "goroutine", name, "panic", pe.Error(), "stack", string(pe.Stack))
		rec.RecordBackground(context.Background(), name, pe)
	}()
	f()
	return false
}
