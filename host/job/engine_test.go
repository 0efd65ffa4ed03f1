//go:build !unit

package job_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/module"
)

// clock is a fake clock the tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// gate is a compiled handler that blocks until released (or its context
// ends) and counts its runs.
type gate struct {
	mu      sync.Mutex
	started int
	release chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) handler(name string) module.JobHandler {
	return module.JobHandler{Name: name, Description: "test", Run: func(ctx context.Context, _ module.JobRun) (string, error) {
		g.mu.Lock()
		g.started++
		g.mu.Unlock()
		select {
		case <-g.release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
}

// fixture is an engine (not started: the test drives Tick and Maintain)
// on a fresh database of the selected backend.
type fixture struct {
	t      *testing.T
	client *ent.Client
	clock  *clock
	engine *job.Engine
	gate   *gate
}

// t0 is a whole minute, so cron and interval firings are easy to read.
var t0 = time.Date(2030, 1, 15, 10, 0, 0, 0, time.UTC)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dbType, _ := kerneltest.Backend(t)
	db := dbtest.OpenMigrated(t, dbType)
	f := &fixture{t: t, client: db.Client, clock: &clock{t: t0}, gate: newGate()}
	f.engine = f.newEngine("replica-a")
	return f
}

func (f *fixture) newEngine(instance string) *job.Engine {
	e := job.New(job.Options{Client: f.client, Instance: instance, Now: f.clock.Now})
	if err := e.Register(f.gate.handler("test.gate")); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		close2(f.gate.release)
		e.Stop(5 * time.Second)
	})
	return e
}

func close2(ch chan struct{}) {
	defer func() { _ = recover() }()
	close(ch)
}

// addJob inserts a Ready job anchored at t0.
func (f *fixture) addJob(code string, set func(*ent.SysJobCreate)) *ent.SysJob {
	f.t.Helper()
	c := f.client.SysJob.Create().SetCode(code).SetName(code).SetHandlerKind(job.HandlerCompiled).SetHandlerName("test.gate").
		SetTriggerKind(job.TriggerInterval).SetScheduleAnchor(t0).SetStatus(job.StatusReady)
	set(c)
	if kind, _ := c.Mutation().TriggerKind(); kind == job.TriggerInterval {
		if _, ok := c.Mutation().IntervalSeconds(); !ok {
			c.SetIntervalSeconds(60)
		}
	}
	return c.SaveX(context.Background())
}

func (f *fixture) tick(at time.Time) {
	f.t.Helper()
	f.clock.Set(at)
	f.engine.Changed()
	if err := f.engine.Tick(context.Background(), at); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) logs(jobID int64) []*ent.SysJobLog {
	return f.client.SysJobLog.Query().Where(sysjoblog.JobID(jobID)).Order(ent.Asc(sysjoblog.FieldFireTime), ent.Asc(sysjoblog.FieldID)).AllX(context.Background())
}

func statuses(rows []*ent.SysJobLog) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.RunStatus
	}
	return out
}

func (f *fixture) waitStatus(logID int64, want int, within time.Duration) {
	f.t.Helper()
	poll.Until(f.t, within, "run status", func() bool {
		r, err := f.client.SysJobLog.Get(context.Background(), logID)
		return err == nil && r.RunStatus == want
	})
}

func TestMisfirePolicies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		misfire  int
		wantRuns int
	}{
		{"Skip drops the firings of the downtime (one Skipped row, missed)", job.MisfireSkip, 1},
		{"FireOnceNow runs once for all of them", job.MisfireFireOnceNow, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			j := f.addJob("m", func(c *ent.SysJobCreate) {
				c.SetMisfireStrategy(tc.misfire).SetConcurrencyMode(job.ConcurrencyParallel)
			})
			// No replica ran for ten minutes and thirty seconds: ten
			// firings were missed, all older than the grace.
			f.tick(t0.Add(10*time.Minute + 30*time.Second))
			rows := f.logs(j.ID)
			if len(rows) != tc.wantRuns {
				t.Fatalf("%d runs after the downtime, want %d", len(rows), tc.wantRuns)
			}
			if tc.misfire == job.MisfireSkip {
				r := rows[0]
				f.gate.mu.Lock()
				ran := f.gate.started
				f.gate.mu.Unlock()
				if r.TriggeredBy != job.ByMissed || r.RunStatus != job.RunSkipped || r.FireInstanceID != job.FireInstanceID(j.ID, t0.Add(10*time.Minute)) || ran != 0 {
					t.Fatalf("skipped misfires = %s %d (%s), ran %d; want one Skipped row of the newest missed firing and no run", r.TriggeredBy, r.RunStatus, r.FireInstanceID, ran)
				}
			} else {
				r := rows[0]
				if r.TriggeredBy != job.ByMisfire || !r.FireTime.Equal(t0.Add(10*time.Minute)) || r.FireInstanceID != job.FireInstanceID(j.ID, t0.Add(10*time.Minute)) {
					t.Fatalf("misfire run = %s at %s (%s), want misfire of the newest missed firing %s", r.TriggeredBy, r.FireTime, r.FireInstanceID, t0.Add(10*time.Minute))
				}
			}
			// The next firing is on time again: scheduled, once.
			f.tick(t0.Add(11 * time.Minute))
			rows = f.logs(j.ID)
			if len(rows) != tc.wantRuns+1 || rows[len(rows)-1].TriggeredBy != job.BySchedule || !rows[len(rows)-1].FireTime.Equal(t0.Add(11*time.Minute)) {
				t.Fatalf("after the next firing: %d runs, last %+v", len(rows), rows[len(rows)-1])
			}
			// A second pass at the same time fires nothing more.
			f.tick(t0.Add(11*time.Minute + time.Second))
			if n := len(f.logs(j.ID)); n != tc.wantRuns+1 {
				t.Fatalf("%d runs after a repeated pass, want %d", n, tc.wantRuns+1)
			}
		})
	}
}

func TestLateFiringWithinGraceStillRuns(t *testing.T) {
	f := newFixture(t)
	j := f.addJob("late", func(c *ent.SysJobCreate) { c.SetMisfireStrategy(job.MisfireSkip) })
	f.tick(t0.Add(time.Minute + job.MisfireGrace - time.Second))
	if rows := f.logs(j.ID); len(rows) != 1 || rows[0].TriggeredBy != job.BySchedule {
		t.Fatalf("a firing %s late is not a misfire: runs %v", job.MisfireGrace-time.Second, statuses(rows))
	}
}

func TestConcurrencyPolicies(t *testing.T) {
	t.Run("SerialSkip logs a firing during a run as Skipped", func(t *testing.T) {
		f := newFixture(t)
		j := f.addJob("serial", func(c *ent.SysJobCreate) { c.SetConcurrencyMode(job.ConcurrencySerialSkip) })
		f.tick(t0.Add(time.Minute))
		f.tick(t0.Add(2 * time.Minute))
		rows := f.logs(j.ID)
		if got := statuses(rows); len(got) != 2 || got[0] != job.RunRunning || got[1] != job.RunSkipped {
			t.Fatalf("statuses %v, want [Running Skipped]", got)
		}
		close(f.gate.release)
		f.waitStatus(rows[0].ID, job.RunSuccess, 10*time.Second)
		f.tick(t0.Add(3 * time.Minute))
		if got := statuses(f.logs(j.ID)); len(got) != 3 || got[2] != job.RunSuccess && got[2] != job.RunRunning {
			t.Fatalf("statuses %v: the firing after the run ended must run", got)
		}
	})
	t.Run("Parallel runs both", func(t *testing.T) {
		f := newFixture(t)
		j := f.addJob("parallel", func(c *ent.SysJobCreate) { c.SetConcurrencyMode(job.ConcurrencyParallel) })
		f.tick(t0.Add(time.Minute))
		f.tick(t0.Add(2 * time.Minute))
		if got := statuses(f.logs(j.ID)); len(got) != 2 || got[0] != job.RunRunning || got[1] != job.RunRunning {
			t.Fatalf("statuses %v, want two Running", got)
		}
	})
}

func TestTwoEnginesClaimEachFiringOnce(t *testing.T) {
	f := newFixture(t)
	b := f.newEngine("replica-b")
	j := f.addJob("once", func(c *ent.SysJobCreate) {
		c.SetIntervalSeconds(1).SetConcurrencyMode(job.ConcurrencyParallel).SetHandlerName("test.fast")
	})
	fast := module.JobHandler{Name: "test.fast", Run: func(context.Context, module.JobRun) (string, error) { return "ok", nil }}
	for _, e := range []*job.Engine{f.engine, b} {
		if err := e.Register(fast); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for s := 1; s <= 20; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		f.clock.Set(at)
		for _, e := range []*job.Engine{f.engine, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.Changed()
				if err := e.Tick(context.Background(), at); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	rows := f.logs(j.ID)
	if len(rows) != 20 {
		t.Fatalf("%d runs for 20 firings, want 20", len(rows))
	}
	for i, r := range rows {
		if want := t0.Add(time.Duration(i+1) * time.Second); !r.FireTime.Equal(want) {
			t.Fatalf("run %d fired at %s, want %s", i, r.FireTime, want)
		}
	}
}

func TestTimeoutKillAndLeaseExpiry(t *testing.T) {
	f := newFixture(t)
	j := f.addJob("slow", func(c *ent.SysJobCreate) { c.SetTimeoutSeconds(1).SetConcurrencyMode(job.ConcurrencyParallel) })
	f.tick(t0.Add(time.Minute))
	rows := f.logs(j.ID)
	f.waitStatus(rows[0].ID, job.RunTimeout, 10*time.Second)

	k := f.addJob("killed", func(c *ent.SysJobCreate) { c.SetConcurrencyMode(job.ConcurrencyParallel) })
	f.tick(t0.Add(2 * time.Minute))
	krows := f.logs(k.ID) // the firing at t0+1m missed (one Skipped row), the one at t0+2m runs
	run := krows[len(krows)-1]
	// The database path of a kill: the request on the row, seen by the
	// runner's maintenance pass.
	f.client.SysJobLog.UpdateOneID(run.ID).SetKillRequested(true).ExecX(context.Background())
	start := time.Now()
	if err := f.engine.Maintain(context.Background(), f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(run.ID, job.RunCancelled, 2*time.Second)
	t.Logf("killed through the database in %s", time.Since(start).Round(time.Millisecond))

	// A run of a replica that died: its lease ends and any replica's
	// maintenance marks it Failed.
	dead := f.client.SysJobLog.Create().SetJobID(k.ID).SetJobName("killed").SetFireInstanceID("dead-1").SetFireTime(t0).
		SetStartTime(t0).SetRunStatus(job.RunRunning).SetInstance("gone").SetTriggeredBy(job.BySchedule).
		SetLeaseUntil(t0.Add(3 * time.Minute)).SaveX(context.Background())
	if err := f.engine.Maintain(context.Background(), t0.Add(3*time.Minute-time.Second)); err != nil {
		t.Fatal(err)
	}
	if r := f.client.SysJobLog.GetX(context.Background(), dead.ID); r.RunStatus != job.RunRunning {
		t.Fatalf("a run within its lease was reaped: %d", r.RunStatus)
	}
	if err := f.engine.Maintain(context.Background(), t0.Add(3*time.Minute+time.Second)); err != nil {
		t.Fatal(err)
	}
	if r := f.client.SysJobLog.GetX(context.Background(), dead.ID); r.RunStatus != job.RunFailed || r.ErrorMessage == nil {
		t.Fatalf("a run past its lease = %d, want Failed with a message", r.RunStatus)
	}
}

func TestOneShotCompletesAndMissingHandlerPanics(t *testing.T) {
	f := newFixture(t)
	one := f.addJob("one", func(c *ent.SysJobCreate) {
		c.SetTriggerKind(job.TriggerOneShot).SetRunAt(t0.Add(30 * time.Second)).SetConcurrencyMode(job.ConcurrencyParallel)
	})
	f.tick(t0.Add(31 * time.Second))
	f.tick(t0.Add(10 * time.Minute))
	if n := len(f.logs(one.ID)); n != 1 {
		t.Fatalf("a one-shot job ran %d times", n)
	}
	if s := f.client.SysJob.GetX(context.Background(), one.ID).Status; s != job.StatusCompleted {
		t.Fatalf("one-shot status %d, want Completed", s)
	}
	gone := f.addJob("gone", func(c *ent.SysJobCreate) { c.SetHandlerName("module.removed") })
	f.tick(t0.Add(11 * time.Minute))
	// Its ten missed firings (Skip) are one Skipped row; the firing on
	// time runs.
	rows := f.logs(gone.ID)
	if len(rows) != 2 || rows[0].TriggeredBy != job.ByMissed || rows[1].TriggeredBy != job.BySchedule {
		t.Fatalf("runs of the job without handler: %v", statuses(rows))
	}
	f.waitStatus(rows[1].ID, job.RunFailed, 10*time.Second)
	poll.Until(t, 5*time.Second, "job status Panic", func() bool {
		return f.client.SysJob.GetX(context.Background(), gone.ID).Status == job.StatusPanic
	})
}
