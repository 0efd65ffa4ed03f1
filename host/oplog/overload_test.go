//go:build !unit

package oplog_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent/sysdicttype"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestOpLogOverloadOverHTTP drives op-logged writes through the real HTTP
// stack of a kernel on PostgreSQL whose operation-log queue holds 20 rows,
// while another connection holds an ACCESS EXCLUSIVE lock on sys_op_log so
// that every op-log insert hangs. Business tables are not locked (MVCC), so
// only the op-log is stuck. Then:
//
//   - every request completes while the lock is still held: the op-log
//     never makes a request wait for the database (a blocked enqueue would
//     hang them until the lock is released; the test would fail at its
//     60 s guard);
//   - every business write happened (the dictionary types all exist);
//   - the queue overflows: one near-cap warning, and once it drains one
//     "rows dropped" warning with the count;
//   - after the lock is released the queue drains, and every request is
//     accounted for: rows written + rows dropped + rows lost = requests.
//
// PostgreSQL is required (not SQLite): SQLite has one writer, so a stuck
// op-log insert would hold the write lock every business write needs — the
// fault could not be confined to the op-log.
func TestOpLogOverloadOverHTTP(t *testing.T) {
	const (
		requests = 240
		workers  = 6
		capacity = 20
	)
	cfg := dbtest.Config(t, config.DBPostgreSQL)
	k := kerneltest.Start(t, []string{
		"Service__Database__DbType=PostgreSQL",
		"Service__Database__ConnectionString=" + cfg.Service.Database.ConnectionString.Reveal(),
		"Service__Logging__OpLog__QueueCapacity=" + strconv.Itoa(capacity),
	})
	admin := k.Admin()
	ctx := context.Background()

	// The lock holder: a connection of its own with an open transaction.
	locker, err := database.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = locker.Close() })
	tx, err := locker.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if err := tx.Rollback(); err != nil {
				t.Errorf("releasing the lock: %v", err)
			}
		}
	}
	t.Cleanup(release)
	if _, err := tx.ExecContext(ctx, "LOCK TABLE sys_op_log IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
	)
	jobs := make(chan int)
	done := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := k.Do("POST", "/api/v1/sys/dict/type", admin, map[string]any{"code": fmt.Sprintf("ovl_%04d", i), "name": fmt.Sprintf("overload %d", i)})
				if r.Status != 200 || r.Code != 0 {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("request %d: HTTP %d %s", i, r.Status, r.Raw))
					mu.Unlock()
				}
			}
		}()
	}
	go func() {
		for i := range requests {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		release()
		t.Fatalf("the requests did not complete within 60 s while the operation-log table was locked: the op-log blocks requests")
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d business writes failed: %v", len(failed), requests, failed[:min(3, len(failed))])
	}
	// Still locked here: the op-log has written nothing, yet every
	// business write is stored.
	if n := k.Ent().SysDictType.Query().Where(sysdicttype.CodeHasPrefix("ovl_")).CountX(ctx); n != requests {
		t.Fatalf("%d dictionary types stored, want %d", n, requests)
	}
	if n := strings.Count(k.Log(), "operation log queue is near its capacity"); n != 1 {
		t.Errorf("%d near-cap warnings while the queue stayed full, want exactly 1", n)
	}

	release()

	// The queue drains: the flusher reports the drops once it is empty.
	dropRe := regexp.MustCompile(`operation log queue was full: the oldest rows were dropped: dropped=(\d+) dropped_total=(\d+)`)
	lostRe := regexp.MustCompile(`writing the operation log failed; rows dropped: rows=(\d+)`)
	var written, dropped, lost int
	deadline := time.Now().Add(30 * time.Second)
	for {
		log := k.Log()
		dropped = 0
		if m := dropRe.FindAllStringSubmatch(log, -1); len(m) > 0 {
			dropped, _ = strconv.Atoi(m[len(m)-1][2])
		}
		lost = 0
		for _, m := range lostRe.FindAllStringSubmatch(log, -1) {
			n, _ := strconv.Atoi(m[1])
			lost += n
		}
		written = k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/sys/dict/type")).CountX(ctx)
		if written+dropped+lost == requests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d op-log rows written + %d dropped + %d lost = %d, want %d requests accounted for",
				written, dropped, lost, written+dropped+lost, requests)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if dropped < requests-capacity-workers-1 {
		t.Errorf("only %d rows dropped for %d requests against a queue of %d stuck behind a lock", dropped, requests, capacity)
	}
	if written < capacity {
		t.Errorf("%d rows written after the lock was released, want at least the %d the queue held", written, capacity)
	}
	if n := len(dropRe.FindAllString(k.Log(), -1)); n != 1 {
		t.Errorf("%d drop reports, want exactly 1 for one overflow episode", n)
	}
	// The op-log keeps working after the episode.
	k.Do("POST", "/api/v1/sys/dict/type", admin, map[string]any{"code": "ovl_after", "name": "after"}).Expect(t, "write after the episode", 200, 0)
	deadline = time.Now().Add(10 * time.Second)
	for k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/sys/dict/type")).CountX(ctx) != written+1 {
		if time.Now().After(deadline) {
			t.Fatal("the op-log row of a write after the episode was not written within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d requests, queue %d: %d op-log rows written, %d dropped (oldest first), %d lost; %d business rows stored",
		requests, capacity, written, dropped, lost, requests)
}
