package outage_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/outage"
	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"
)

var errDown = errors.New("test: unavailable")

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTracker(buf *bytes.Buffer, c *clock) *outage.Tracker {
	log := hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Info})
	return outage.New(outage.Options{Name: "redis", Code: errcode.CacheUnavailable, Kind: errDown, Log: log, Now: c.now})
}

func TestTrackerOutageLifecycle(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(&buf, c)

	// Up: Begin is 0 and a success logs nothing.
	op := tr.Begin()
	if op != 0 {
		t.Fatalf("Begin while up = %d", op)
	}
	tr.Succeeded(op)
	if _, down := tr.Down(); down || buf.Len() != 0 {
		t.Fatalf("up tracker: down=%v log=%q", down, buf.String())
	}

	// An operation begun before the outage and succeeding after it began
	// proves nothing.
	early := tr.Begin()
	cause := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	err := tr.Failed(cause)
	if !errors.Is(err, errDown) || !errors.Is(err, cause) || err.Error() != cause.Error() {
		t.Fatalf("marked error %v: Is(kind)=%v Is(cause)=%v", err, errors.Is(err, errDown), errors.Is(err, cause))
	}
	oe, ok := outage.As(fmt.Errorf("wrapped: %w", err))
	if !ok || oe.Code != errcode.CacheUnavailable || oe.Dependency() != "redis" {
		t.Fatalf("As: %v %+v", ok, oe)
	}
	tr.Succeeded(early)
	since, down := tr.Down()
	if !down || !since.Equal(time.Unix(1000, 0)) {
		t.Fatalf("after Failed: down=%v since=%v", down, since)
	}

	// Later failures and refusals only count; a marked error is not
	// marked twice.
	for range 4 {
		e := tr.Failed(errors.New("connection reset"))
		if again := tr.Mark(e); again != e { //nolint:errorlint // identity: not wrapped again
			t.Fatal("an outage error was wrapped again")
		}
		oe, _ := outage.As(e)
		oe.Refused()
	}
	if n := strings.Count(buf.String(), "[WARN]"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "redis unavailable: dial tcp 127.0.0.1:1: connect: connection refused; answering 503 until it is back") {
		t.Fatalf("warning text: %s", buf.String())
	}

	// The first success of an operation begun during the outage ends it.
	c.t = c.t.Add(12300 * time.Millisecond)
	during := tr.Begin()
	if during == 0 {
		t.Fatal("Begin during the outage = 0")
	}
	tr.Succeeded(during)
	tr.Succeeded(during) // a second one changes nothing
	if _, down := tr.Down(); down {
		t.Fatal("still down after a success")
	}
	if n := strings.Count(buf.String(), "is back after"); n != 1 || !strings.Contains(buf.String(), "redis is back after 12.3s; 4 requests were refused") {
		t.Fatalf("back line:\n%s", buf.String())
	}

	// A second outage is a new one: its own WARN, its own count.
	_ = tr.Failed(cause)
	second := tr.Begin()
	if second == during {
		t.Fatal("two outages with one number")
	}
	tr.Succeeded(during) // begun in the previous outage: ignored
	if _, down := tr.Down(); !down {
		t.Fatal("an operation of the previous outage ended this one")
	}
	tr.Succeeded(second)
	if w, b := strings.Count(buf.String(), "[WARN]"), strings.Count(buf.String(), "is back after"); w != 2 || b != 2 {
		t.Fatalf("%d warnings, %d back lines, want 2 and 2:\n%s", w, b, buf.String())
	}
	if !strings.Contains(buf.String(), "0 requests were refused") {
		t.Fatalf("the second outage refused nothing:\n%s", buf.String())
	}
}

func TestNilTracker(t *testing.T) {
	var tr *outage.Tracker
	cause := errors.New("x")
	//nolint:errorlint // identity: returned as is
	if tr.Begin() != 0 || tr.Failed(cause) != cause || tr.Mark(cause) != cause || tr.Failed(nil) != nil {
		t.Fatal("a nil tracker changed something")
	}
	tr.Succeeded(1)
	if _, down := tr.Down(); down {
		t.Fatal("nil tracker down")
	}
	if _, ok := outage.As(cause); ok {
		t.Fatal("As found an outage in a plain error")
	}
}

// TestTrackerConcurrent: many goroutines failing and succeeding at once
// log one WARN per outage and one INFO per WARN (run under -race).
func TestTrackerConcurrent(t *testing.T) {
	var buf syncbuf.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})
	tr := outage.New(outage.Options{Name: "database", Code: errcode.DatabaseUnavailable, Kind: errDown, Log: log})
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_ = tr.Failed(errors.New("refused"))
			}
		}()
	}
	wg.Wait()
	op := tr.Begin()
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.Succeeded(op)
		}()
	}
	wg.Wait()
	out := buf.String()
	if w, b := strings.Count(out, "[WARN]"), strings.Count(out, "is back after"); w != 1 || b != 1 {
		t.Fatalf("%d warnings and %d back lines, want 1 and 1:\n%s", w, b, out)
	}
}
