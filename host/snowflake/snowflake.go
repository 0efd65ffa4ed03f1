// Package snowflake generates int64 ids that stay below 2^53, so that
// JavaScript clients can read them as plain numbers (wire contract §1.2).
//
// Layout, from the most significant bit:
//
//	41 bits  milliseconds since 2020-02-20T02:20:02Z (the epoch)
//	 6 bits  worker id, 0-63
//	 6 bits  sequence within the millisecond, 0-63
//
// The smallest id ever generated is 4096 (1 ms after the epoch, worker 0,
// sequence 0); ids 1-999 are reserved for kernel seed rows and 1000-4095 for
// consumer seed rows. A generator issues at most 64 ids per millisecond; when
// the sequence overflows it waits for the next millisecond. Ids never go
// backwards: when the wall clock steps back the generator keeps issuing from
// the last millisecond it used (and, should that millisecond overflow too,
// from the following one) until the clock catches up.
//
// There is no package-level generator: the kernel owns one Generator (built
// from Service:Snowflake:WorkerId, moved by the Redis worker lease) and hands
// it to whatever creates rows, so two kernels in one process keep their own
// worker ids.
package snowflake

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

const (
	// WorkerBits is the width of the worker field.
	WorkerBits = 6
	// SequenceBits is the width of the sequence field.
	SequenceBits = 6
	// TimeBits is the width of the millisecond field.
	TimeBits = 41

	// MaxWorker is the largest worker id.
	MaxWorker = 1<<WorkerBits - 1
	// MaxSequence is the largest sequence number within one millisecond.
	MaxSequence = 1<<SequenceBits - 1
	// MaxID is the exclusive upper bound of generated ids (2^53).
	MaxID int64 = 1 << (TimeBits + WorkerBits + SequenceBits)
	// MinID is the smallest id a generator can return.
	MinID int64 = 1 << (WorkerBits + SequenceBits)

	timeShift   = WorkerBits + SequenceBits
	workerShift = SequenceBits
	maxMillis   = 1<<TimeBits - 1
)

// Epoch is the zero of the millisecond field: 2020-02-20T02:20:02Z.
var Epoch = time.Date(2020, 2, 20, 2, 20, 2, 0, time.UTC)

var epochMillis = Epoch.UnixMilli()

// ErrWorkerRange reports a worker id outside 0-63.
var ErrWorkerRange = errors.New("snowflake: worker id must be between 0 and 63")

// Generator issues unique, increasing ids for one worker. It is safe for
// concurrent use.
type Generator struct {
	mu     sync.Mutex
	worker int64
	last   int64 // millisecond (since Epoch) of the last id
	seq    int64 // sequence of the last id within last
	now    func() time.Time
	sleep  func(time.Duration)
}

// New returns a generator for worker (0-63).
func New(worker int) (*Generator, error) {
	if worker < 0 || worker > MaxWorker {
		return nil, fmt.Errorf("%w (got %d)", ErrWorkerRange, worker)
	}
	return &Generator{worker: int64(worker), now: time.Now, sleep: time.Sleep}, nil
}

// Worker returns the generator's worker id.
func (g *Generator) Worker() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return int(g.worker)
}

// Next returns the next id. It panics only when the clock is past the end of
// the 41-bit range (the year 2089).
func (g *Generator) Next() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := g.millis()
	switch {
	case ms > g.last:
		g.last, g.seq = ms, 0
	case g.seq < MaxSequence:
		// Same millisecond, or the clock went back: continue from last.
		g.seq++
	case ms == g.last:
		// Sequence exhausted in the current millisecond: wait for the next.
		for {
			g.sleep(time.UnixMilli(epochMillis + g.last + 1).Sub(g.now()))
			ms = g.millis()
			if ms > g.last {
				g.last, g.seq = ms, 0
				break
			}
			if ms < g.last {
				// The clock stepped back while waiting.
				g.last, g.seq = g.last+1, 0
				break
			}
		}
	default:
		// Sequence exhausted while the clock is behind: waiting could take
		// as long as the clock jumped back, so borrow the next millisecond.
		g.last, g.seq = g.last+1, 0
	}
	if g.last > maxMillis {
		panic("snowflake: clock beyond the 41-bit millisecond range")
	}
	return g.last<<timeShift | g.worker<<workerShift | g.seq
}

// millis returns the milliseconds since Epoch, at least 1 so that no id
// falls below MinID.
func (g *Generator) millis() int64 {
	ms := g.now().UnixMilli() - epochMillis
	if ms < 1 {
		ms = 1
	}
	return ms
}

// SetWorker changes the worker id (0-63), e.g. when the Redis lease moved
// to another id. The generator keeps its clock state, so ids stay
// increasing across the change.
func (g *Generator) SetWorker(worker int) error {
	if worker < 0 || worker > MaxWorker {
		return fmt.Errorf("%w (got %d)", ErrWorkerRange, worker)
	}
	g.mu.Lock()
	g.worker = int64(worker)
	g.mu.Unlock()
	return nil
}

// Parts splits an id into its timestamp, worker and sequence.
func Parts(id int64) (t time.Time, worker, seq int) {
	ms := id >> timeShift
	return time.UnixMilli(epochMillis + ms).UTC(), int(id >> workerShift & MaxWorker), int(id & MaxSequence)
}
