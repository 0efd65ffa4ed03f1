// Package oncecaptest checks that a cap on pending one-time values
// (host/cache/oncecap) bounds memory, through whatever endpoint stores them.
package oncecaptest

import (
	"runtime"
	"testing"
	"time"
)

// Memory is one memory check of a capped endpoint.
type Memory struct {
	// What names one stored value in messages ("state", "answer").
	What string
	// Send makes one request and returns its HTTP status.
	Send func() int
	// Stored is the status of a request whose value is stored, Refused
	// that of a request refused at the cap.
	Stored, Refused int
	// Cap is the configured cap; Beyond how many requests to send past it.
	Cap, Beyond int
	// MinPerValue is the least heap a stored value must cost for the
	// measurement to tell stored from refused requests (bytes).
	MinPerValue float64
}

// BoundsMemory fills the store to its cap (Cap-1 requests after one warm-up
// request that counts against the cap), measuring the heap cost of a
// stored value, then sends Beyond requests that must all be refused, and
// fails when they grew the heap by more than a quarter of what storing them
// would have cost. The kernel under test must run on the in-process cache.
func BoundsMemory(t testing.TB, m Memory) {
	t.Helper()
	m.Send() // warm up pools and lazily built state
	heap0 := heapAfterGC()
	for i := 1; i < m.Cap; i++ {
		if s := m.Send(); s != m.Stored {
			t.Fatalf("request %d = HTTP %d below the cap, want %d", i+1, s, m.Stored)
		}
	}
	heap1 := heapAfterGC()
	per := (float64(heap1) - float64(heap0)) / float64(m.Cap-1)
	for i := range m.Beyond {
		if s := m.Send(); s != m.Refused {
			t.Fatalf("request %d beyond the cap = HTTP %d, want %d", i+1, s, m.Refused)
		}
	}
	heap2 := heapAfterGC()
	growth := float64(heap2) - float64(heap1)
	t.Logf("heap: %d B before, %d B with %d %ss (%.0f B per %s), %d B after %d refused requests (%+.0f B)",
		heap0, heap1, m.Cap, m.What, per, m.What, heap2, m.Beyond, growth)
	if per < m.MinPerValue {
		t.Fatalf("stored %ss cost %.0f B each: the measurement cannot tell stored from refused", m.What, per)
	}
	if limit := per * float64(m.Beyond) / 4; growth > limit {
		t.Errorf("%d refused requests grew the heap by %.0f B, more than a quarter (%.0f B) of storing them", m.Beyond, growth, limit)
	}
}

// heapAfterGC is the live heap once it has settled: collections until two
// readings 20 ms apart differ by less than 64 KiB (at most 50), so memory
// that an earlier test's kernel is still releasing (closing goroutines,
// finalizers) does not count for or against the measurement.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	read := func() uint64 {
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	last := read()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		now := read()
		if max(now, last)-min(now, last) < 64<<10 {
			return now
		}
		last = now
	}
	return last
}
