//go:build !unit

package replicatest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// jobLog is the part of SysJobLog the tests read.
type jobLog struct {
	ID             int64  `json:"id"`
	FireInstanceID string `json:"fireInstanceId"`
	FireTime       string `json:"fireTime"`
	RunStatus      int    `json:"runStatus"`
	Instance       string `json:"instance"`
	TriggeredBy    string `json:"triggeredBy"`
}

const (
	runRunning   = 1
	runSuccess   = 2
	runFailed    = 3
	runCancelled = 5
	jobAPI       = "/api/v1/sys/job"
	// leaseSeconds is the replicas' Service:Job:LeaseSeconds: short, so a
	// dead replica's run is reaped quickly.
	leaseSeconds = 6
)

// jobTarget is the HTTP endpoint the jobs call: /fast answers at once,
// /slow until the caller goes away.
type jobTarget struct {
	*httptest.Server
	fast atomic.Int32
}

func newJobTarget(t *testing.T) *jobTarget {
	jt := &jobTarget{}
	jt.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fast":
			jt.fast.Add(1)
			_, _ = w.Write([]byte("ok"))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Minute):
			}
		}
	}))
	t.Cleanup(jt.Close)
	return jt
}

// cluster is three replicas on one database and one Redis.
type cluster struct {
	replicas []*replica
	b        *browser
	admin    string
}

func startCluster(t *testing.T, dbType string) *cluster {
	bin := binary(t)
	db := dbtest.Config(t, dbType)
	settings := []string{
		"ADMINKERNEL_ENVIRONMENT=Development",
		"Service__Database__DbType=" + dbType,
		"Service__Database__ConnectionString=" + db.Service.Database.ConnectionString.Reveal(),
		"Service__Cache__Provider=Redis",
		"Service__Cache__Redis__Address=" + kerneltest.RedisAddr(),
		"Service__Cache__Redis__KeyPrefix=" + kerneltest.RedisPrefix(t),
		"Service__Security__Jwt__SigningKey=replicatest-signing-key-" + strings.Repeat("k", 32),
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
		// Concurrent clients log in from 127.0.0.1: lift the hashing pool's
		// per-address and per-account shares (default 2).
		"Service__Security__Password__HashPerClient=1000", "Service__Security__Password__HashPerAccount=1000",
		"Service__Job__HttpAllowedHosts__0=127.0.0.1",
		"Service__Job__HttpAllowPrivate=true",
		"Service__Job__LeaseSeconds=" + strconv.Itoa(leaseSeconds),
	}
	run(t, bin, settings, "migrate", "--environment", "Development")
	c := &cluster{b: newBrowser(t)}
	for _, name := range []string{"A", "B", "C"} {
		c.replicas = append(c.replicas, startReplica(t, bin, name, freePort(t), settings))
	}
	for _, r := range c.replicas {
		r.waitReady(c.b)
	}
	A := c.replicas[0].base
	c.admin = c.b.login(A, "superAdmin", adminPassword).AccessToken
	c.b.do("PUT", A+"/api/v1/sys/config/batch", c.admin, []map[string]any{
		{"configKey": "sys.security.rateLimit.enabled", "configValue": "false"},
	}).expect(t, "rate limit off", 200, 0)
	return c
}

func httpJob(code, url string, trigger map[string]any) map[string]any {
	body := map[string]any{
		"code": code, "name": code, "handlerKind": 2, "handlerName": "", "httpUrl": url, "httpMethod": "GET",
		"misfireStrategy": 1, "concurrencyMode": 1, "timeoutSeconds": 0, "retryCount": 0, "retryIntervalSeconds": 0,
		"failAlertThreshold": 0, "alertByNotice": false,
	}
	for k, v := range trigger {
		body[k] = v
	}
	return body
}

func (c *cluster) logs(t *testing.T, base string, jobID int64) []jobLog {
	t.Helper()
	var all []jobLog
	for page := 1; ; page++ {
		var p struct {
			Total int      `json:"total"`
			Items []jobLog `json:"items"`
		}
		c.b.do("GET", fmt.Sprintf("%s%s/log/page?JobId=%d&Current=%d&Size=200", base, jobAPI, jobID, page), c.admin, nil).
			expect(t, "log page", 200, 0).decode(t, &p)
		all = append(all, p.Items...)
		if len(p.Items) == 0 || len(all) >= p.Total {
			return all
		}
	}
}

// byPid finds the replica whose process wrote instance (host:pid:tag).
func (c *cluster) byPid(t *testing.T, instance string) *replica {
	t.Helper()
	parts := strings.Split(instance, ":")
	for _, r := range c.replicas {
		if len(parts) == 3 && parts[1] == strconv.Itoa(r.cmd.Process.Pid) {
			return r
		}
	}
	t.Fatalf("no replica wrote instance %q", instance)
	return nil
}

// TestJobsThreeReplicas runs three replicas on PostgreSQL and on MariaDB
// with Redis: a job every second (cron) for 30 s fires every second exactly once;
// a kill from another replica cancels a run within 2 s; killing the
// replica running a job gets its run marked Failed once its lease ends,
// and the next firing runs on another replica.
func TestJobsThreeReplicas(t *testing.T) {
	for _, dbType := range []string{config.DBPostgreSQL, config.DBMySQL} {
		t.Run(dbType, func(t *testing.T) {
			target := newJobTarget(t)
			c := startCluster(t, dbType)
			A, B := c.replicas[0].base, c.replicas[1].base

			var every int64
			c.b.do("POST", A+jobAPI, c.admin, httpJob("every-second", target.URL+"/fast",
				map[string]any{"triggerKind": 1, "cronExpression": "* * * * * ?", "concurrencyMode": 2})).expect(t, "add", 200, 0).decode(t, &every)

			// Meanwhile: kill from another replica. A manual run on B,
			// killed through C.
			var slow int64
			c.b.do("POST", A+jobAPI, c.admin, httpJob("slow-manual", target.URL+"/slow",
				map[string]any{"triggerKind": 1, "cronExpression": "0 0 0 1 1 ?"})).expect(t, "add slow", 200, 0).decode(t, &slow)
			var ran bool
			c.b.do("POST", fmt.Sprintf("%s%s/%d/run", B, jobAPI, slow), c.admin, nil).expect(t, "run on B", 200, 0).decode(t, &ran)
			manual := c.logs(t, B, slow)
			if !ran || len(manual) != 1 {
				t.Fatalf("run answered %v; runs %+v", ran, manual)
			}
			runID := manual[0].ID
			time.Sleep(500 * time.Millisecond)
			C := c.replicas[2].base
			start := time.Now()
			c.b.do("POST", fmt.Sprintf("%s%s/log/%d/kill", C, jobAPI, runID), c.admin, nil).expect(t, "kill through C", 200, 0)
			poll.Until(t, 2*time.Second, "the run killed through another replica is Cancelled", func() bool {
				for _, l := range c.logs(t, C, slow) {
					if l.ID == runID {
						return l.RunStatus == runCancelled
					}
				}
				return false
			})
			t.Logf("%s: killed from another replica in %s", dbType, time.Since(start).Round(time.Millisecond))

			time.Sleep(30 * time.Second)
			c.b.do("PUT", fmt.Sprintf("%s%s/%d/enabled?enabled=false", A, jobAPI, every), c.admin, nil).expect(t, "pause", 200, 0)
			time.Sleep(4 * time.Second) // the last runs end; replicas reload within 2 s
			logs := c.logs(t, B, every)
			fires := map[int64]int{}
			instances := map[string]int{}
			var times []int64
			for _, l := range logs {
				parts := strings.Split(l.FireInstanceID, "-")
				ms, err := strconv.ParseInt(parts[len(parts)-1], 10, 64)
				if err != nil || l.TriggeredBy != "schedule" {
					t.Fatalf("unexpected run %+v", l)
				}
				if l.RunStatus != runSuccess {
					t.Errorf("run %s ended %d, want Success", l.FireInstanceID, l.RunStatus)
				}
				fires[ms]++
				instances[l.Instance]++
				times = append(times, ms)
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			if len(times) < 28 {
				t.Fatalf("%d firings in about 30 s", len(times))
			}
			for i, ms := range times {
				if fires[ms] != 1 {
					t.Fatalf("fire time %d appears %d times", ms, fires[ms])
				}
				if i > 0 && ms-times[i-1] != 1000 {
					t.Fatalf("firings %d and %d are %d ms apart: a firing is missing", times[i-1], ms, ms-times[i-1])
				}
			}
			if int(target.fast.Load()) != len(times) {
				t.Fatalf("the endpoint was called %d times for %d firings", target.fast.Load(), len(times))
			}
			t.Logf("%s: %d firings, each once, none missing; runs per replica %v", dbType, len(times), instances)

			// Killing the replica that runs a long job.
			var long int64
			c.b.do("POST", A+jobAPI, c.admin, httpJob("long", target.URL+"/slow",
				map[string]any{"triggerKind": 1, "cronExpression": "*/2 * * * * ?"})).expect(t, "add long", 200, 0).decode(t, &long)
			var first jobLog
			poll.Until(t, 10*time.Second, "the long job running", func() bool {
				for _, l := range c.logs(t, B, long) {
					if l.RunStatus == runRunning {
						first = l
						return true
					}
				}
				return false
			})
			victim := c.byPid(t, first.Instance)
			_ = victim.cmd.Process.Kill()
			<-victim.exited
			killedAt := time.Now()
			var alive *replica
			for _, r := range c.replicas {
				if r != victim {
					alive = r
					break
				}
			}
			poll.Until(t, time.Duration(leaseSeconds+4)*time.Second, "the dead replica's run marked Failed", func() bool {
				for _, l := range c.logs(t, alive.base, long) {
					if l.ID == first.ID {
						return l.RunStatus == runFailed
					}
				}
				return false
			})
			t.Logf("%s: the run of the killed replica was Failed %s after the kill (lease %d s)", dbType, time.Since(killedAt).Round(time.Millisecond), leaseSeconds)
			poll.Until(t, 10*time.Second, "the next firing running on another replica", func() bool {
				for _, l := range c.logs(t, alive.base, long) {
					if l.ID != first.ID && l.RunStatus == runRunning && l.Instance != first.Instance {
						return true
					}
				}
				return false
			})
			c.b.do("PUT", fmt.Sprintf("%s%s/%d/enabled?enabled=false", alive.base, jobAPI, long), c.admin, nil).expect(t, "pause long", 200, 0)
		})
	}
}
