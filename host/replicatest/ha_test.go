//go:build hatest && !unit

package replicatest

// The high-availability suites (make test-ha; the hatest build tag keeps
// them out of a plain go test ./...): two adminkernel replicas on one
// PostgreSQL database and a Redis Sentinel setup, then a Redis Cluster,
// under login and ping load; the Redis master is killed and the test
// measures the failover and the window of failed requests.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/nearcache"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// redisProc is one redis-server (data node or sentinel) of a test setup.
type redisProc struct {
	addr   string
	cmd    *exec.Cmd
	out    *bytes.Buffer
	exited chan struct{}
}

func redisServerBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: %v", err)
	}
	return bin
}

// startRedisProc starts redis-server with args (a config file first, when
// any) on port and waits until it answers PING; it is killed when the
// test ends.
func startRedisProc(t *testing.T, port int, args ...string) *redisProc {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	//nolint:gosec,noctx // the operator's redis-server; outlives the test's context until cleanup
	cmd := exec.Command(redisServerBin(t), args...)
	cmd.Dir = t.TempDir() // a save on shutdown writes dump.rdb here, not into the package
	p := &redisProc{addr: addr, cmd: cmd, out: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer func() { _ = c.Close() }()
	poll.Until(t, 10*time.Second, "redis-server "+addr+" answers", func() bool {
		select {
		case <-p.exited:
			t.Fatalf("redis-server %s exited:\n%s", addr, p.out)
		default:
		}
		return c.Ping(context.Background()).Err() == nil
	})
	return p
}

func (p *redisProc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

func dataNodeArgs(port int, extra ...string) []string {
	return append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--protected-mode", "no", "--daemonize", "no"}, extra...)
}

// haLoad logs in and pings on both replicas from a few workers until
// stopped, recording when requests failed.
type haLoad struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	first      time.Time
	last       time.Time
	errs       map[string]int
	stop       chan struct{}
	wg         sync.WaitGroup
}

func startHALoad(t *testing.T, bases []string, account, pw string) *haLoad {
	l := &haLoad{stop: make(chan struct{}), errs: map[string]int{}}
	for w := range 4 {
		base := bases[w%len(bases)]
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			c := newBrowser(t)
			c.http.Timeout = 10 * time.Second
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				r, err := c.try("POST", base+"/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
				if err == nil && (r.Status != 200 || r.Code != 0) {
					err = fmt.Errorf("login HTTP %d code %d", r.Status, r.Code)
				}
				if err == nil {
					var tk tokens
					r.decode(t, &tk)
					for range 3 {
						p, perr := c.try("GET", base+"/api/v1/ping", tk.AccessToken, nil)
						if perr == nil && (p.Status != 200 || p.Code != 0) {
							perr = fmt.Errorf("ping HTTP %d code %d", p.Status, p.Code)
						}
						l.record(perr)
					}
				}
				l.record(err)
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	return l
}

func (l *haLoad) record(err error) {
	if err == nil {
		l.ok.Add(1)
		return
	}
	l.failed.Add(1)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first.IsZero() {
		l.first = now
	}
	l.last = now
	msg := err.Error()
	if len(msg) > 60 {
		msg = msg[:60]
	}
	l.errs[msg]++
}

func (l *haLoad) halt() {
	close(l.stop)
	l.wg.Wait()
}

// haEnv is two replicas on one database and the given Redis settings,
// with bob (ping permission, SSO-linked by account name) and rate limiting
// off.
type haEnv struct {
	bin      string
	is       *oidctest.Issuer
	a, b     *replica
	c        *browser
	admin    string
	bobPw    string
	settings []string
}

func startHAEnv(t *testing.T, redisSettings []string) *haEnv {
	t.Helper()
	e := &haEnv{bin: binary(t), is: oidctest.New(t), c: newBrowser(t), bobPw: "Pass#bob1234"}
	e.is.AddUser(oidctest.User{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"})
	db := dbtest.Config(t, config.DBPostgreSQL)
	portA, portB := freePort(t), freePort(t)
	baseB := "http://127.0.0.1:" + strconv.Itoa(portB)
	e.settings = append([]string{
		"ADMINKERNEL_ENVIRONMENT=Development",
		"Service__Database__DbType=PostgreSQL",
		"Service__Database__ConnectionString=" + db.Service.Database.ConnectionString.Reveal(),
		"Service__Cache__Provider=Redis",
		"Service__Cache__Redis__KeyPrefix=ak:ha:",
		"Service__Security__Jwt__SigningKey=hatest-signing-key-" + strings.Repeat("k", 32),
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
		// Concurrent clients log in from 127.0.0.1: lift the hashing pool's
		// per-address and per-account shares (default 2).
		"Service__Security__Password__HashPerClient=1000", "Service__Security__Password__HashPerAccount=1000",
		"Service__ExternalAuth__CallbackBaseUrl=" + baseB,
		"Service__ExternalAuth__Oidc__0__Code=corp",
		"Service__ExternalAuth__Oidc__0__Authority=" + e.is.URL,
		"Service__ExternalAuth__Oidc__0__ClientId=" + e.is.ClientID,
		"Service__ExternalAuth__Oidc__0__ClientSecret=" + e.is.ClientSecret,
		"Service__ExternalAuth__Oidc__0__AccountClaim=preferred_username",
	}, redisSettings...)
	run(t, e.bin, e.settings, "migrate", "--environment", "Development")
	e.a = startReplica(t, e.bin, "A", portA, e.settings)
	e.b = startReplica(t, e.bin, "B", portB, e.settings)
	e.a.waitReady(e.c)
	e.b.waitReady(e.c)
	A := e.a.base
	e.admin = e.c.login(A, "superAdmin", adminPassword).AccessToken
	e.c.do("PUT", A+"/api/v1/sys/config/batch", e.admin, []map[string]any{
		{"configKey": "sys.security.rateLimit.enabled", "configValue": "false"},
	}).expect(t, "rate limit off", 200, 0)
	var pingRole int64
	e.c.do("POST", A+"/api/v1/sys/role/add", e.admin, map[string]any{"name": "pinger", "code": "pinger"}).
		expect(t, "add role", 200, 0).decode(t, &pingRole)
	e.c.do("PUT", A+"/api/v1/sys/role/menu", e.admin, map[string]any{"roleId": pingRole, "menuIds": []int64{301}}).
		expect(t, "grant ping", 200, 0)
	e.c.do("POST", A+"/api/v1/sys/user", e.admin, map[string]any{
		"account": "bob", "password": e.bobPw, "name": "bob", "orgId": 1, "roleIds": []int64{pingRole},
	}).expect(t, "add bob", 200, 0)
	tp := e.c.login(A, "bob", e.bobPw)
	e.c.do("PUT", A+"/api/v1/personal/password", tp.AccessToken, map[string]any{"oldPassword": e.bobPw, "newPassword": e.bobPw}).
		expect(t, "first password change of bob", 200, 0)
	e.c.do("POST", A+"/api/v1/sys/config", e.admin, map[string]any{
		"configKey": "sys.externalauth.corp.linkByAccount", "configValue": "true", "name": "corp link by account",
	}).expect(t, "linkByAccount on", 200, 0)
	return e
}

// ssoTicket runs an SSO login of bob up to the one-time ticket.
func (e *haEnv) ssoTicket(t *testing.T) string {
	t.Helper()
	res := e.c.callback(e.is.Login(t, e.c.authorize(e.a.base, "corp"), "bob"))
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("SSO as bob ended in %s, want a ticket", res)
	}
	return ticket
}

// exchangeOnce sends 10 parallel exchanges of ticket over both replicas
// and fails unless exactly one succeeded.
func (e *haEnv) exchangeOnce(t *testing.T, ticket string) {
	t.Helper()
	const n = 10
	var ok, used atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := e.a.base
			if i%2 == 1 {
				base = e.b.base
			}
			r, err := e.c.try("POST", base+external+"/exchange", "", map[string]string{"ticket": ticket})
			switch {
			case err != nil:
				t.Errorf("exchange %d: %v", i, err)
			case r.Status == 200 && r.Code == 0:
				ok.Add(1)
			case r.Code == 40014:
				used.Add(1)
			default:
				t.Errorf("exchange %d: HTTP %d %s", i, r.Status, r.Raw)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || used.Load() != n-1 {
		t.Fatalf("%d parallel exchanges of one ticket: %d successes, %d × 40014; want 1 and %d", n, ok.Load(), used.Load(), n-1)
	}
}

// failover runs the common scenario: a revoked session and an unused
// ticket before the kill, load on both replicas, kill(), then waits for
// logins to work on both replicas and checks the session is still revoked
// and the ticket is taken once. It returns the error window.
func (e *haEnv) failover(t *testing.T, name string, synced, kill func(), failedOver func() bool) {
	t.Helper()
	A, B := e.a.base, e.b.base
	revoked := e.c.login(A, "bob", e.bobPw)
	e.c.do("GET", B+"/api/v1/ping", revoked.AccessToken, nil).expect(t, "ping before logout", 200, 0)
	e.c.do("POST", A+"/api/v1/auth/logout", revoked.AccessToken, nil).expect(t, "logout", 200, 0)
	ticket := e.ssoTicket(t)
	synced() // the replica(s) hold every write so far

	load := startHALoad(t, []string{A, B}, "bob", e.bobPw)
	time.Sleep(2 * time.Second)
	before := load.failed.Load()
	killed := time.Now()
	kill()
	foTook := poll.Until(t, 60*time.Second, name+" failover", failedOver)
	// Logins work again on both replicas, without restarting them.
	recovered := poll.Until(t, 60*time.Second, "logins on both replicas", func() bool {
		for _, base := range []string{A, B} {
			r, err := e.c.try("POST", base+"/api/v1/auth/login", "", map[string]string{"account": "bob", "password": e.bobPw})
			if err != nil || r.Status != 200 || r.Code != 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second) // load after recovery must succeed
	load.mu.Lock()
	lastFail := load.last
	load.mu.Unlock()
	okBeforeHalt := load.ok.Load()
	time.Sleep(time.Second)
	load.halt()
	if load.ok.Load() <= okBeforeHalt {
		t.Errorf("no successful request in the last second of load")
	}
	if before != 0 {
		t.Errorf("%d requests failed before the kill", before)
	}
	window := time.Duration(0)
	if !lastFail.IsZero() {
		window = lastFail.Sub(killed)
	}
	if time.Since(lastFail) < 3*time.Second {
		t.Errorf("requests still failed %s before the end of the load", time.Since(lastFail).Round(time.Millisecond))
	}
	t.Logf("FAILOVER %s: failover %.1f s after the kill; logins on both replicas %.1f s after it; "+
		"error window %.1f s (%d failed, %d ok requests); errors %v",
		name, foTook.Seconds(), (foTook + recovered).Seconds(), window.Seconds(), load.failed.Load(), load.ok.Load(), load.errs)

	// The session revoked before the failover stays revoked on both.
	for _, base := range []string{A, B} {
		r := e.c.do("GET", base+"/api/v1/ping", revoked.AccessToken, nil)
		if r.Status == 200 && r.Code == 0 {
			t.Errorf("the session revoked before the failover answers on %s", base)
		}
	}
	// The ticket issued before the failover is taken once.
	e.exchangeOnce(t, ticket)
	// And a fresh SSO login works end to end after it.
	e.exchangeOnce(t, e.ssoTicket(t))
}

// TestHASentinel: one master, one replica, three sentinels; the master is
// killed under load.
func TestHASentinel(t *testing.T) {
	dir := t.TempDir()
	mPort, rPort := freePort(t), freePort(t)
	master := startRedisProc(t, mPort, dataNodeArgs(mPort)...)
	replicaNode := startRedisProc(t, rPort, dataNodeArgs(rPort, "--replicaof", "127.0.0.1", strconv.Itoa(mPort))...)
	rc := redis.NewClient(&redis.Options{Addr: replicaNode.addr})
	defer func() { _ = rc.Close() }()
	poll.Until(t, 20*time.Second, "replica in sync", func() bool {
		info, _ := rc.Info(context.Background(), "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
	var sentinels []string
	for i := range 3 {
		port := freePort(t)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
			"sentinel monitor akmaster 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds akmaster 1000\n"+
			"sentinel failover-timeout akmaster 10000\n"+
			"sentinel parallel-syncs akmaster 1\n", port, dir, mPort)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		s := startRedisProc(t, port, conf, "--sentinel")
		sentinels = append(sentinels, s.addr)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer func() { _ = sc.Close() }()
	masterAddr := func() string {
		a, err := sc.GetMasterAddrByName(context.Background(), "akmaster").Result()
		if err != nil || len(a) != 2 {
			return ""
		}
		return net.JoinHostPort(a[0], a[1])
	}
	poll.Until(t, 20*time.Second, "sentinels see the replica and each other", func() bool {
		info, err := sc.Master(context.Background(), "akmaster").Result()
		return err == nil && info["num-other-sentinels"] == "2" && info["num-slaves"] == "1"
	})

	settings := []string{"Service__Cache__Redis__MasterName=akmaster"}
	for i, s := range sentinels {
		settings = append(settings, fmt.Sprintf("Service__Cache__Redis__SentinelAddresses__%d=%s", i, s))
	}
	e := startHAEnv(t, settings)
	mc := redis.NewClient(&redis.Options{Addr: master.addr})
	defer func() { _ = mc.Close() }()
	e.failover(t, "sentinel",
		func() {
			if err := mc.Set(context.Background(), "ak:ha:sync", "1", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := mc.Wait(context.Background(), 1, 5*time.Second).Result(); err != nil || n != 1 {
				t.Fatalf("WAIT 1 = %d, %v", n, err)
			}
		},
		master.kill,
		func() bool { return masterAddr() == replicaNode.addr })
}

// TestHACluster: three masters with one replica each; the master owning
// the near-cache channel's slot is killed under load.
func TestHACluster(t *testing.T) {
	dir := t.TempDir()
	nodes := make([]*redisProc, 6)
	addrs := make([]string, 6)
	for i := range nodes {
		port := freePort(t)
		nodes[i] = startRedisProc(t, port, dataNodeArgs(port,
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)),
			"--cluster-node-timeout", "1000", "--dir", dir)...)
		addrs[i] = nodes[i].addr
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli is not on PATH: %v", err)
	}
	//nolint:gosec // redis-cli from PATH with the test's own addresses
	out, err := exec.CommandContext(t.Context(), cli, append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", "1", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer func() { _ = cc.Close() }()
	poll.Until(t, 30*time.Second, "cluster ok on every node", func() bool {
		for _, a := range addrs {
			c := redis.NewClient(&redis.Options{Addr: a})
			info, _ := c.ClusterInfo(context.Background()).Result()
			_ = c.Close()
			if !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	settings := []string{}
	for i, a := range addrs[:3] { // seeds: the client learns the rest
		settings = append(settings, fmt.Sprintf("Service__Cache__Redis__ClusterAddresses__%d=%s", i, a))
	}
	e := startHAEnv(t, settings)
	ctx := context.Background()
	// The near-cache channel's master: killing it also moves the sharded
	// subscriptions.
	channel := "ak:ha:" + nearcache.ChannelSuffix
	victim, err := cc.MasterForKey(ctx, channel)
	if err != nil {
		t.Fatal(err)
	}
	victimAddr := victim.Options().Addr
	var victimProc *redisProc
	for _, n := range nodes {
		if n.addr == victimAddr {
			victimProc = n
		}
	}
	if victimProc == nil {
		t.Fatalf("no node at %s", victimAddr)
	}
	// Its replica, which the cluster promotes.
	victimID, err := victim.ClusterMyID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var heir string
	all, _ := cc.ClusterNodes(ctx).Result()
	for _, line := range strings.Split(all, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[3] == victimID {
			heir = strings.Split(f[1], "@")[0]
		}
	}
	if heir == "" {
		t.Fatalf("no replica of %s in\n%s", victimAddr, all)
	}
	sc := redis.NewClient(&redis.Options{Addr: heir})
	defer func() { _ = sc.Close() }()
	e.failover(t, "cluster",
		func() {
			// Every master's replica holds its writes.
			err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
				// A key of one of this master's slots.
				key := ""
				for i := 0; key == ""; i++ {
					k := "ak:ha:sync:" + strconv.Itoa(i)
					if owner, err := cc.MasterForKey(ctx, k); err == nil && owner.Options().Addr == m.Options().Addr {
						key = k
					}
				}
				if err := m.Set(ctx, key, "1", time.Minute).Err(); err != nil {
					return err
				}
				n, err := m.Wait(ctx, 1, 5*time.Second).Result()
				if err == nil && n != 1 {
					err = fmt.Errorf("WAIT 1 = %d", n)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		victimProc.kill,
		func() bool {
			info, _ := sc.Info(ctx, "replication").Result()
			if !strings.Contains(info, "role:master") {
				return false
			}
			state, _ := sc.ClusterInfo(ctx).Result()
			return strings.Contains(state, "cluster_state:ok")
		})
}

// TestHAMemory measures the Redis keys and memory (INFO used_memory,
// MEMORY USAGE per key family) a replica, an active session and a pending
// authorize state cost, on a private redis-server (capacity input,
// docs/design/capacity.md).
func TestHAMemory(t *testing.T) {
	port := freePort(t)
	node := startRedisProc(t, port, dataNodeArgs(port)...)
	rc := redis.NewClient(&redis.Options{Addr: node.addr})
	defer func() { _ = rc.Close() }()
	ctx := context.Background()
	measure := func() (keys, mem int64) {
		t.Helper()
		n, err := rc.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		info, err := rc.Info(ctx, "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				mem, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		return n, mem
	}
	families := func() map[string][2]int64 {
		out := map[string][2]int64{}
		keys, err := rc.Keys(ctx, "ak:ha:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			f := strings.TrimPrefix(k, "ak:ha:")
			if i := strings.IndexAny(f, ":"); i > 0 {
				f = f[:i]
			}
			u, _ := rc.MemoryUsage(ctx, k).Result()
			v := out[f]
			out[f] = [2]int64{v[0] + 1, v[1] + u}
		}
		return out
	}
	k0, m0 := measure()
	e := startHAEnv(t, []string{"Service__Cache__Redis__Address=" + node.addr})
	k1, m1 := measure()
	t.Logf("MEMORY two replicas started and seeded, one admin session, bob created: +%d keys, +%d bytes used_memory; families %v", k1-k0, m1-m0, families())

	const n = 100
	for range n {
		e.c.login(e.a.base, "bob", e.bobPw)
	}
	k2, m2 := measure()
	t.Logf("MEMORY %d sessions of one user: %.2f keys and %d bytes of used_memory per session; families %v",
		n, float64(k2-k1)/n, (m2-m1)/n, families())
	for range n {
		e.c.authorize(e.a.base, "corp")
	}
	k3, m3 := measure()
	t.Logf("MEMORY %d pending authorize states: %.2f keys and %d bytes of used_memory per state; families %v",
		n, float64(k3-k2)/n, (m3-m2)/n, families())
}
