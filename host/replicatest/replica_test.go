//go:build !unit

package replicatest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/bus"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/snowflake"
)

// replica is one running adminkernel process.
type replica struct {
	t      *testing.T
	name   string
	base   string
	cmd    *exec.Cmd
	log    *syncbuf.Buffer
	exited chan struct{}
	err    error // the exit status, once exited is closed
}

// processEnv is the environment of a replica process: only what the
// kernel needs, so nothing of the test runner's settings leaks in.
func processEnv(settings []string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "TMPDIR=" + os.TempDir()}
	return append(env, settings...)
}

// sharedSettings are the settings of replicas that share one fresh
// PostgreSQL database and one Redis (under the test's key prefix): the
// Development environment, a signing key named after the suite, the seeded
// admin's password and a fast PBKDF2; extra follow.
func sharedSettings(t *testing.T, suite string, extra ...string) []string {
	t.Helper()
	db := dbtest.Config(t, config.DBPostgreSQL)
	return append([]string{
		"ADMINKERNEL_ENVIRONMENT=Development",
		"Service__Database__DbType=PostgreSQL",
		"Service__Database__ConnectionString=" + db.Service.Database.ConnectionString.Reveal(),
		"Service__Cache__Provider=Redis",
		"Service__Cache__Redis__Address=" + kerneltest.RedisAddr(),
		"Service__Cache__Redis__KeyPrefix=" + kerneltest.RedisPrefix(t),
		"Service__Security__Jwt__SigningKey=" + suite + "-signing-key-" + strings.Repeat("k", 32),
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
		// Concurrent clients log in from 127.0.0.1: lift the hashing pool's
		// per-address and per-account shares (default 2).
		"Service__Security__Password__HashPerClient=1000", "Service__Security__Password__HashPerAccount=1000",
	}, extra...)
}

// run runs the binary to completion (migrate) and fails on a non-zero exit.
func run(t *testing.T, bin string, settings []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = processEnv(settings)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("adminkernel %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startReplica starts `adminkernel serve` on port; it is stopped when the
// test ends (SIGTERM, then SIGKILL after stopWithin).
func startReplica(t *testing.T, bin, name string, port int, settings []string) *replica {
	t.Helper()
	return startReplicaIn(t, bin, name, port, settings, t.TempDir())
}

// startReplicaIn is startReplica with dir as the content root (a restarted
// process finds its data directory again).
func startReplicaIn(t *testing.T, bin, name string, port int, settings []string, dir string) *replica {
	t.Helper()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve", "--environment", "Development", "--content-root", dir)
	cmd.Dir = dir
	cmd.Env = processEnv(append(settings, "Service__Http__ListenAddress="+base))
	r := &replica{t: t, name: name, base: base, cmd: cmd, log: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.log, r.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start replica %s: %v", name, err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("log of replica %s:\n%s", name, r.log)
		}
	})
	return r
}

// waitReady waits until /health/ready answers 200.
func (r *replica) waitReady(b *browser) {
	r.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-r.exited:
			r.t.Fatalf("replica %s exited: %v\n%s", r.name, r.err, r.log)
		default:
		}
		if resp, err := b.http.Get(r.base + "/health/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Fatalf("replica %s not ready within 90 s:\n%s", r.name, r.log)
}

// stopWithin bounds a graceful stop: the HTTP drain
// (Service:Http:ShutdownTimeoutSeconds, 10 by default), the operation-log
// drain (5 s at most) and releasing the lease, with a margin.
const stopWithin = 25 * time.Second

// stop ends the process gracefully (SIGTERM) and reports a shutdown that is
// not: a non-zero exit, or still running after stopWithin (then SIGKILL).
func (r *replica) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	// Connections the test's clients dialed but never used would hold the
	// HTTP drain until its timeout: a browser would have closed them too.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	start := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
		if r.err != nil {
			r.t.Errorf("replica %s: graceful shutdown ended with %v", r.name, r.err)
		}
		r.t.Logf("replica %s stopped %s after SIGTERM", r.name, time.Since(start).Round(time.Millisecond))
	case <-time.After(stopWithin):
		_ = r.cmd.Process.Kill()
		<-r.exited
		r.t.Errorf("replica %s did not stop within %s of SIGTERM", r.name, stopWithin)
	}
}

var leasedWorker = regexp.MustCompile(`snowflake worker id leased: worker=(\d+)`)

func (r *replica) worker() int {
	r.t.Helper()
	m := leasedWorker.FindStringSubmatch(r.log.String())
	if m == nil {
		r.t.Fatalf("replica %s logged no worker lease:\n%s", r.name, r.log)
	}
	w, _ := strconv.Atoi(m[1])
	return w
}

// logged reports whether the replica logged a line containing every part.
func (r *replica) logged(parts ...string) bool {
	for _, line := range strings.Split(r.log.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestTwoReplicas runs two adminkernel processes on one PostgreSQL database
// and one Redis, with the OIDC callback routed to B (CallbackBaseUrl), and
// spreads one browser's requests over both.
func TestTwoReplicas(t *testing.T) {
	bin := binary(t)
	is := oidctest.New(t)
	for _, u := range []oidctest.User{
		{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"},
		{Subject: "sub-carol", PreferredUsername: "carol", Name: "Carol"},
	} {
		is.AddUser(u)
	}
	db := dbtest.Config(t, config.DBPostgreSQL)
	prefix := kerneltest.RedisPrefix(t)
	portA, portB := freePort(t), freePort(t)
	baseB := "http://127.0.0.1:" + strconv.Itoa(portB)
	settings := []string{
		"ADMINKERNEL_ENVIRONMENT=Development",
		"Service__Database__DbType=PostgreSQL",
		"Service__Database__ConnectionString=" + db.Service.Database.ConnectionString.Reveal(),
		"Service__Cache__Provider=Redis",
		"Service__Cache__Redis__Address=" + kerneltest.RedisAddr(),
		"Service__Cache__Redis__KeyPrefix=" + prefix,
		"Service__Security__Jwt__SigningKey=replicatest-signing-key-" + strings.Repeat("k", 32),
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
		// Concurrent clients log in from 127.0.0.1: lift the hashing pool's
		// per-address and per-account shares (default 2).
		"Service__Security__Password__HashPerClient=1000", "Service__Security__Password__HashPerAccount=1000",
		"Service__ExternalAuth__CallbackBaseUrl=" + baseB,
		"Service__ExternalAuth__Oidc__0__Code=corp",
		"Service__ExternalAuth__Oidc__0__DisplayName=Corp SSO",
		"Service__ExternalAuth__Oidc__0__Authority=" + is.URL,
		"Service__ExternalAuth__Oidc__0__ClientId=" + is.ClientID,
		"Service__ExternalAuth__Oidc__0__ClientSecret=" + is.ClientSecret,
		// linkByAccount below links bob by preferred_username.
		"Service__ExternalAuth__Oidc__0__AccountClaim=preferred_username",
		"Logging__LogLevel__AdminKernel.Bus=Debug",
	}
	// Tables first, as an operator would (replicas should not race on
	// auto-migration); then both replicas start at once and seed once.
	run(t, bin, settings, "migrate", "--environment", "Development")
	a := startReplica(t, bin, "A", portA, settings)
	b := startReplica(t, bin, "B", portB, settings)
	c := newBrowser(t)
	a.waitReady(c)
	b.waitReady(c)
	A, B := a.base, b.base

	admin := c.login(A, "superAdmin", adminPassword).AccessToken
	// Rate limiting off for the parallel parts, changed on A: B must see it
	// too (the limiter reads the switch on every request).
	c.do("PUT", A+"/api/v1/sys/config/batch", admin, []map[string]any{
		{"configKey": "sys.security.rateLimit.enabled", "configValue": "false"},
	}).expect(t, "rate limit off", 200, 0)

	t.Run("worker ids are leased, one per replica", func(t *testing.T) {
		wa, wb := a.worker(), b.worker()
		if wa == wb {
			t.Fatalf("both replicas lease worker %d", wa)
		}
		rdb := redisClient(t)
		keys, err := rdb.Keys(context.Background(), prefix+snowflake.LeaseKeyPrefix+"*").Result()
		if err != nil || len(keys) != 2 {
			t.Fatalf("lease keys = %v, %v; want 2", keys, err)
		}
		// Ids created on each replica carry its worker.
		for _, rc := range []struct {
			r *replica
			w int
		}{{a, wa}, {b, wb}} {
			var id int64
			c.do("POST", rc.r.base+"/api/v1/sys/role/add", admin, map[string]any{
				"name": "worker-" + rc.r.name, "code": "worker_" + strings.ToLower(rc.r.name),
			}).expect(t, "add role on "+rc.r.name, 200, 0).decode(t, &id)
			if _, w, _ := snowflake.Parts(id); w != rc.w {
				t.Errorf("id %d made on %s carries worker %d, want %d", id, rc.r.name, w, rc.w)
			}
		}
	})

	t.Run("login on A, ping and refresh on B", func(t *testing.T) {
		tk := c.login(A, "superAdmin", adminPassword)
		c.do("GET", B+"/api/v1/ping", tk.AccessToken, nil).expect(t, "ping on B", 200, 0)
		var next tokens
		c.do("POST", B+"/api/v1/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken}).
			expect(t, "refresh on B", 200, 0).decode(t, &next)
		c.do("GET", A+"/api/v1/ping", next.AccessToken, nil).expect(t, "ping on A with B's pair", 200, 0)
	})

	t.Run("logout on B, A refuses the token", func(t *testing.T) {
		// A holds the session's mark in its near cache (the pings), so
		// each round checks that B's logout reached A before it answered.
		for round := range 5 {
			tk := c.login(A, "superAdmin", adminPassword)
			for range 3 {
				c.do("GET", A+"/api/v1/ping", tk.AccessToken, nil).expect(t, fmt.Sprintf("round %d: ping on A", round), 200, 0)
			}
			c.do("POST", B+"/api/v1/auth/logout", tk.AccessToken, nil).expect(t, "logout on B", 200, 0)
			c.do("GET", A+"/api/v1/ping", tk.AccessToken, nil).expect(t, fmt.Sprintf("round %d: ping on A after logout", round), 401, 40006)
			c.do("GET", B+"/api/v1/ping", tk.AccessToken, nil).expect(t, "ping on B after logout", 401, 40006)
		}
	})

	t.Run("force-logout on A, B refuses the token", func(t *testing.T) {
		tk := c.login(B, "superAdmin", adminPassword)
		c.do("GET", B+"/api/v1/ping", tk.AccessToken, nil).expect(t, "ping on B", 200, 0)
		var mine []struct {
			SessionID string `json:"sessionId"`
			IsCurrent bool   `json:"isCurrent"`
		}
		c.do("GET", B+"/api/v1/personal/sessions", tk.AccessToken, nil).expect(t, "my sessions", 200, 0).decode(t, &mine)
		sid := ""
		for _, s := range mine {
			if s.IsCurrent {
				sid = s.SessionID
			}
		}
		if sid == "" {
			t.Fatalf("no current session in %+v", mine)
		}
		c.do("DELETE", A+"/api/v1/sys/session/"+sid, admin, nil).expect(t, "force-logout on A", 200, 0)
		c.do("GET", B+"/api/v1/ping", tk.AccessToken, nil).expect(t, "ping on B after force-logout", 401, 40006)
	})

	// Accounts for the SSO and permission scenarios, made on A.
	var pingRole int64
	c.do("POST", A+"/api/v1/sys/role/add", admin, map[string]any{"name": "pinger", "code": "pinger"}).
		expect(t, "add role", 200, 0).decode(t, &pingRole)
	c.do("PUT", A+"/api/v1/sys/role/menu", admin, map[string]any{"roleId": pingRole, "menuIds": []int64{301}}).
		expect(t, "grant ping", 200, 0)
	addUser := func(account string, roles ...int64) {
		t.Helper()
		pw := "Pass#" + account + "1234"
		c.do("POST", A+"/api/v1/sys/user", admin, map[string]any{
			"account": account, "password": pw, "name": account, "orgId": 1, "roleIds": roles,
		}).expect(t, "add user "+account, 200, 0)
		// An admin-created account must change its password before its
		// sessions may do anything else (40028): keep the same one.
		tp := c.login(A, account, pw)
		c.do("PUT", A+"/api/v1/personal/password", tp.AccessToken, map[string]any{"oldPassword": pw, "newPassword": pw}).
			expect(t, "first password change of "+account, 200, 0)
	}
	addUser("bob", pingRole)
	addUser("dan")
	addUser("erin", pingRole)

	// The switch is added on A; the callback on B must see it.
	c.do("POST", A+"/api/v1/sys/config", admin, map[string]any{
		"configKey": "sys.externalauth.corp.linkByAccount", "configValue": "true", "name": "corp link by account",
	}).expect(t, "linkByAccount on", 200, 0)

	ssoTicket := func(t *testing.T, br *browser, start, user string) string {
		t.Helper()
		loc := br.authorize(start, "corp")
		cb := is.Login(t, loc, user)
		if got := "http://" + cb.Host; got != B {
			t.Fatalf("the provider redirects to %s, want replica B %s (CallbackBaseUrl)", got, B)
		}
		res := br.callback(cb)
		ticket := res.Query().Get("ticket")
		if ticket == "" {
			t.Fatalf("SSO as %s ended in %s, want a ticket", user, res)
		}
		return ticket
	}

	t.Run("SSO: authorize on A, callback on B, exchange on A", func(t *testing.T) {
		ticket := ssoTicket(t, c, A, "bob")
		var tk tokens
		c.exchange(A, ticket).expect(t, "exchange on A", 200, 0).decode(t, &tk)
		var me struct {
			Account string `json:"account"`
		}
		c.do("GET", B+"/api/v1/personal/profile", tk.AccessToken, nil).expect(t, "profile on B", 200, 0).decode(t, &me)
		if me.Account != "bob" {
			t.Fatalf("SSO signed in %q, want bob", me.Account)
		}
		c.exchange(B, ticket).expect(t, "second exchange on B", 200, 40014)
	})

	t.Run("SSO pending link: callback on B, claim on A", func(t *testing.T) {
		br := newBrowser(t)
		loc := br.authorize(B, "corp")
		res := br.callback(is.Login(t, loc, "carol"))
		pending := res.Query().Get("pendingLink")
		if pending == "" {
			t.Fatalf("unbound carol ended in %s, want a pending link", res)
		}
		dan := br.login(A, "dan", "Pass#dan1234")
		br.do("POST", A+external+"/pending-link/claim", dan.AccessToken, map[string]string{"pendingLink": pending}).
			expect(t, "claim on A", 200, 0)
		br.do("POST", B+external+"/pending-link/claim", dan.AccessToken, map[string]string{"pendingLink": pending}).
			expect(t, "second claim on B", 200, 40014)
		var tk tokens
		br.exchange(B, ssoTicket(t, br, A, "carol")).expect(t, "carol's next SSO", 200, 0).decode(t, &tk)
		if tk.UserID == 0 {
			t.Fatal("no user id")
		}
	})

	t.Run("50 parallel exchanges of one ticket over both replicas", func(t *testing.T) {
		ticket := ssoTicket(t, c, A, "bob")
		const n = 50
		codes := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				base := A
				if i%2 == 1 {
					base = B
				}
				r, err := c.try("POST", base+external+"/exchange", "", map[string]string{"ticket": ticket})
				if err == nil && r.Status != 200 {
					err = fmt.Errorf("HTTP %d %s", r.Status, r.Raw)
				}
				codes[i], errs[i] = r.Code, err
			}()
		}
		close(gate)
		wg.Wait()
		ok, used := 0, 0
		for i := range n {
			switch {
			case errs[i] != nil:
				t.Errorf("exchange %d: %v", i, errs[i])
			case codes[i] == 0:
				ok++
			case codes[i] == 40014:
				used++
			default:
				t.Errorf("exchange %d: code %d", i, codes[i])
			}
		}
		t.Logf("50 parallel exchanges: %d success, %d × 40014", ok, used)
		if ok != 1 || used != n-1 {
			t.Fatalf("%d successes and %d × 40014, want 1 and %d", ok, used, n-1)
		}
	})

	t.Run("config change on A holds on B", func(t *testing.T) {
		site := func(base string) string {
			var s struct {
				Title *string `json:"title"`
			}
			c.do("GET", base+"/api/v1/sys/config/site", "", nil).expect(t, "site on "+base, 200, 0).decode(t, &s)
			if s.Title == nil {
				return ""
			}
			return *s.Title
		}
		before := site(B) // cached now
		title := "Replica " + rand.Text()[:8]
		c.do("PUT", A+"/api/v1/sys/config/batch", admin, []map[string]any{
			{"configKey": "sys.site.title", "configValue": title},
		}).expect(t, "change the title on A", 200, 0)
		if got := site(B); got != title {
			t.Fatalf("title on B = %q (before %q), want %q", got, before, title)
		}
		// The change event reached B over Redis.
		poll.Until(t, 5*time.Second, "B relays A's config event", func() bool {
			return b.logged("relaying a change event from another replica", "kind=config", "key=sys.site.title")
		})
	})

	t.Run("permission change on A holds on B", func(t *testing.T) {
		erin := c.login(B, "erin", "Pass#erin1234").AccessToken
		c.do("GET", B+"/api/v1/ping", erin, nil).expect(t, "granted ping on B", 200, 0)
		c.do("PUT", A+"/api/v1/sys/role/menu", admin, map[string]any{"roleId": pingRole, "menuIds": []int64{}}).
			expect(t, "revoke ping on A", 200, 0)
		c.do("GET", B+"/api/v1/ping", erin, nil).expect(t, "ping on B after the revocation", 403, 41001)
		c.do("PUT", A+"/api/v1/sys/role/menu", admin, map[string]any{"roleId": pingRole, "menuIds": []int64{301}}).
			expect(t, "grant ping again on A", 200, 0)
		c.do("GET", B+"/api/v1/ping", erin, nil).expect(t, "ping on B after the grant", 200, 0)
		poll.Until(t, 5*time.Second, "B relays A's permission event", func() bool {
			return b.logged("relaying a change event from another replica", "kind=permission")
		})
	})

	t.Run("events cross processes both ways", func(t *testing.T) {
		rdb := redisClient(t)
		ev := events.New()
		relay, err := bus.Start(context.Background(), ev, rdb, bus.Options{Channel: prefix + bus.DefaultChannel})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := relay.Close(); err != nil {
				t.Error(err)
			}
		}()
		got := make(chan events.Event, 64)
		cancel := ev.Subscribe(func(e events.Event) {
			select {
			case got <- e:
			default:
			}
		})
		defer cancel()
		// A → this process.
		c.do("PUT", A+"/api/v1/sys/config/batch", admin, []map[string]any{
			{"configKey": "sys.site.subtitle", "configValue": "sub " + rand.Text()[:6]},
		}).expect(t, "change the subtitle on A", 200, 0)
		deadline := time.After(5 * time.Second)
	wait:
		for {
			select {
			case e := <-got:
				if e == (events.ConfigChanged{Key: "sys.site.subtitle"}) {
					break wait
				}
			case <-deadline:
				t.Fatal("the config event of A did not reach this process")
			}
		}
		// This process → A and B.
		key := "replicatest-" + strings.ToLower(rand.Text()[:8])
		ev.Publish(events.DictChanged{TypeCode: key})
		for _, r := range []*replica{a, b} {
			poll.Until(t, 5*time.Second, r.name+" relays this process's event", func() bool {
				return r.logged("relaying a change event from another replica", "kind=dict", "key="+key)
			})
		}
	})

	t.Run("disabling a user on A ends the user's session on B", func(t *testing.T) {
		erin := c.login(B, "erin", "Pass#erin1234")
		c.do("GET", B+"/api/v1/ping", erin.AccessToken, nil).expect(t, "ping on B", 200, 0)
		c.do("PUT", A+"/api/v1/sys/user/"+strconv.FormatInt(erin.UserID, 10)+"/enabled", admin, map[string]any{"enabled": false}).
			expect(t, "disable erin on A", 200, 0)
		c.do("GET", B+"/api/v1/ping", erin.AccessToken, nil).expect(t, "ping on B after the disable", 401, 40006)
	})

	t.Run("shutdown releases the worker leases", func(t *testing.T) {
		a.stop()
		b.stop()
		rdb := redisClient(t)
		keys, err := rdb.Keys(context.Background(), prefix+snowflake.LeaseKeyPrefix+"*").Result()
		if err != nil || len(keys) != 0 {
			t.Fatalf("lease keys after shutdown = %v, %v; want none", keys, err)
		}
	})
}

func redisClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: kerneltest.RedisAddr()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
