package sqllog_test

import (
	"bufio"
	"strings"
	"sync"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/database/sqllog"
)

// syncBuffer collects the logger's writes while the test reads them.
type syncBuffer struct{ syncbuf.Buffer }

// Lines returns the logged lines containing every one of subs.
func (s *syncBuffer) Lines(subs ...string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
next:
	for sc.Scan() {
		for _, sub := range subs {
			if !strings.Contains(sc.Text(), sub) {
				continue next
			}
		}
		out = append(out, sc.Text())
	}
	return out
}

// newLog returns a logger of category sqllog.Category writing to a buffer.
func newLog(level hclog.Level) (hclog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return hclog.New(&hclog.LoggerOptions{Name: sqllog.Category, Output: buf, Level: level}), buf
}

// stepClock advances by step on every call: each statement (two calls)
// takes exactly step.
type stepClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newClock(step time.Duration) *stepClock {
	return &stepClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), step: step}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}
