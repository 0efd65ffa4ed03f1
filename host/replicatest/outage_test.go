//go:build !unit

package replicatest

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/rediscache/redistest"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

const bobPassword = "Bob#Pass12345"

// outageEnv is one in-process kernel served on a loopback port, with a
// provider "corp" and an account bob (ping permission) that SSO links by
// account name, and carol, an identity without an account (pending link).
type outageEnv struct {
	k    *kerneltest.Kernel
	is   *oidctest.Issuer
	base string
}

func startOutageEnv(t *testing.T, settings ...string) *outageEnv {
	t.Helper()
	is := oidctest.New(t)
	is.AddUser(oidctest.User{Subject: "sub-bob", PreferredUsername: "bob", Name: "Bob"})
	is.AddUser(oidctest.User{Subject: "sub-carol", PreferredUsername: "carol", Name: "Carol"})
	k := kerneltest.Start(t, append([]string{
		"Service__ExternalAuth__Oidc__0__Code=corp",
		"Service__ExternalAuth__Oidc__0__Authority=" + is.URL,
		"Service__ExternalAuth__Oidc__0__ClientId=" + is.ClientID,
		"Service__ExternalAuth__Oidc__0__ClientSecret=" + is.ClientSecret,
		// linkByAccount below links bob by preferred_username.
		"Service__ExternalAuth__Oidc__0__AccountClaim=preferred_username",
	}, settings...))
	k.User("bob", bobPassword, "GET:/api/v1/ping")
	if err := k.Settings().Set(context.Background(), "sys.externalauth.corp.linkByAccount", "1"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return &outageEnv{k: k, is: is, base: "http://" + ln.Addr().String()}
}

// ssoCallbackURL runs authorize and the provider login and returns the
// callback URL, not yet opened (a login in flight).
func (e *outageEnv) ssoCallbackURL(t *testing.T, b *browser, user string) *url.URL {
	t.Helper()
	return e.is.Login(t, b.authorize(e.base, "corp"), user)
}

// expectReady waits until readiness answers want and checks every named
// check; it returns how long that took.
func expectReady(t *testing.T, b *browser, base string, want int, checks map[string]string) time.Duration {
	t.Helper()
	return poll.Until(t, 15*time.Second, "readiness "+strconv.Itoa(want), func() bool {
		status, h := probe(t, b, base, "/health/ready")
		if status != want {
			return false
		}
		for name, st := range checks {
			if h.check(name) != st {
				return false
			}
		}
		return true
	})
}

// expectLive checks that the liveness probe stays 200 and fast.
func expectLive(t *testing.T, b *browser, base string) {
	t.Helper()
	start := time.Now()
	status, h := probe(t, b, base, "/health")
	if status != 200 || h.Status != "Healthy" {
		t.Fatalf("/health = %d %+v, want 200 Healthy", status, h)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("/health took %s", d)
	}
}

// expectNoSecrets checks that a failure body carries no internals.
func expectNoSecrets(t *testing.T, what string, r reply, secrets ...string) {
	t.Helper()
	low := strings.ToLower(r.Raw)
	for _, s := range append([]string{"pq:", "redis", "dial tcp", "select ", "goroutine", "accesstoken"}, secrets...) {
		if s != "" && strings.Contains(low, strings.ToLower(s)) {
			t.Errorf("%s: body leaks %q: %s", what, s, r.Raw)
		}
	}
}

// failedClosed checks that a login-like answer is an error envelope with no
// token in it.
func failedClosed(t *testing.T, what string, r reply) {
	t.Helper()
	if r.Status == 200 && r.Code == 0 {
		t.Fatalf("%s succeeded during the outage: %s", what, r.Raw)
	}
	if r.Code == 0 {
		t.Fatalf("%s: HTTP %d without an error envelope: %s", what, r.Status, r.Raw)
	}
	expectNoSecrets(t, what, r)
}

// TestRedisOutage kills the kernel's Redis: readiness 503 (cache
// Unhealthy) while liveness stays 200; authorize, callback, exchange, claim
// and login fail closed; everything works again, without a restart, once
// Redis is back (empty: nothing was persisted).
func TestRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	e := startOutageEnv(t,
		"Service__Cache__Provider=Redis",
		"Service__Cache__Redis__Address="+srv.Addr,
		"Service__Cache__Redis__KeyPrefix=aktest:outage:")
	b := newBrowser(t)
	expectReady(t, b, e.base, 200, map[string]string{"db": "Healthy", "cache": "Healthy"})

	// In flight when Redis goes away: a session, a ticket not yet
	// exchanged, a state not yet called back, a pending link not claimed.
	bob := b.login(e.base, "bob", bobPassword).AccessToken
	ticketBrowser := newBrowser(t)
	res := ticketBrowser.callback(e.ssoCallbackURL(t, ticketBrowser, "bob"))
	ticket := res.Query().Get("ticket")
	if ticket == "" {
		t.Fatalf("SSO ended in %s, want a ticket", res)
	}
	stateBrowser := newBrowser(t)
	pendingCallback := e.ssoCallbackURL(t, stateBrowser, "bob")
	claimBrowser := newBrowser(t)
	pending := claimBrowser.callback(e.ssoCallbackURL(t, claimBrowser, "carol")).Query().Get("pendingLink")
	if pending == "" {
		t.Fatal("carol got no pending link")
	}
	claimToken := claimBrowser.login(e.base, "bob", bobPassword).AccessToken

	srv.Stop()
	expectLive(t, b, e.base)
	took := expectReady(t, b, e.base, 503, map[string]string{"db": "Healthy", "cache": "Unhealthy"})
	t.Logf("readiness went 503 %s after the kill", took)
	expectLive(t, b, e.base)

	t.Run("authorize", func(t *testing.T) {
		r := newBrowser(t).do("GET", e.base+external+"/corp/authorize", "", nil)
		if r.Status == 302 {
			t.Fatalf("authorize redirected to %s with a state it could not store", r.Header.Get("Location"))
		}
		failedClosed(t, "authorize", r)
	})
	t.Run("callback", func(t *testing.T) {
		u := stateBrowser.callback(pendingCallback)
		if u.Query().Get("ticket") != "" || u.Query().Get("error") == "" {
			t.Fatalf("callback during the outage ended in %s, want ?error=", u)
		}
	})
	t.Run("exchange", func(t *testing.T) {
		failedClosed(t, "exchange", ticketBrowser.exchange(e.base, ticket))
	})
	t.Run("claim", func(t *testing.T) {
		r := claimBrowser.do("POST", e.base+external+"/pending-link/claim", claimToken, map[string]string{"pendingLink": pending})
		failedClosed(t, "claim", r)
	})
	t.Run("login", func(t *testing.T) {
		failedClosed(t, "login", newBrowser(t).do("POST", e.base+"/api/v1/auth/login", "", map[string]string{"account": "bob", "password": bobPassword}))
	})
	t.Run("protected request reads through to the database", func(t *testing.T) {
		// The session and permission checks fall back to the database,
		// never to "allow": bob's session is live and holds ping.
		b.do("GET", e.base+"/api/v1/ping", bob, nil).expect(t, "ping", 200, 0)
		b.do("GET", e.base+"/api/v1/sys/user/page", bob, nil).expect(t, "unpermitted", 403, 41001)
	})

	srv.Restart()
	took = expectReady(t, b, e.base, 200, map[string]string{"db": "Healthy", "cache": "Healthy"})
	t.Logf("readiness back to 200 %s after the restart", took)

	t.Run("recovered", func(t *testing.T) {
		// The restarted Redis is empty: the old ticket is simply unknown.
		ticketBrowser.exchange(e.base, ticket).expect(t, "pre-outage ticket", 200, 40014)
		nb := newBrowser(t)
		u := nb.callback(e.ssoCallbackURL(t, nb, "bob"))
		var tk tokens
		nb.exchange(e.base, u.Query().Get("ticket")).expect(t, "SSO after recovery", 200, 0).decode(t, &tk)
		nb.do("GET", e.base+"/api/v1/ping", tk.AccessToken, nil).expect(t, "ping after recovery", 200, 0)
		nb.login(e.base, "bob", bobPassword)
		if e.k.WorkerLease() == nil || e.k.Relay() == nil {
			t.Fatal("lease or relay gone")
		}
	})
}

// TestDatabaseOutage makes the kernel's PostgreSQL database refuse
// connections (ALLOW_CONNECTIONS false, backends terminated): readiness 503
// (db Unhealthy) while liveness stays 200; login and SSO fail cleanly
// without issuing anything; all recovers once connections are allowed
// again, without a restart.
func TestDatabaseOutage(t *testing.T) {
	cfg := dbtest.Config(t, config.DBPostgreSQL)
	conn := cfg.Service.Database.ConnectionString.Reveal()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	e := startOutageEnv(t,
		"Service__Database__DbType=PostgreSQL",
		"Service__Database__ConnectionString="+conn)
	b := newBrowser(t)
	expectReady(t, b, e.base, 200, map[string]string{"db": "Healthy", "cache": "Healthy"})
	stateBrowser := newBrowser(t)
	inFlight := e.ssoCallbackURL(t, stateBrowser, "bob")

	admin := adminDB(t)
	setConnections := func(allow bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v := "true"
		if !allow {
			v = "false"
		}
		if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+pq.QuoteIdentifier(name)+" ALLOW_CONNECTIONS "+v); err != nil {
			t.Fatal(err)
		}
		if !allow {
			if _, err := admin.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
				t.Fatal(err)
			}
		}
	}
	setConnections(false)
	t.Cleanup(func() { setConnections(true) })

	expectLive(t, b, e.base)
	took := expectReady(t, b, e.base, 503, map[string]string{"db": "Unhealthy", "cache": "Healthy"})
	t.Logf("readiness went 503 %s after the database closed", took)

	t.Run("login", func(t *testing.T) {
		r := newBrowser(t).do("POST", e.base+"/api/v1/auth/login", "", map[string]string{"account": "bob", "password": bobPassword})
		failedClosed(t, "login", r)
		expectNoSecrets(t, "login", r, name, "postgres")
	})
	t.Run("callback", func(t *testing.T) {
		u := stateBrowser.callback(inFlight)
		if u.Query().Get("ticket") != "" || u.Query().Get("error") == "" {
			t.Fatalf("callback during the outage ended in %s, want ?error=", u)
		}
	})

	setConnections(true)
	took = expectReady(t, b, e.base, 200, map[string]string{"db": "Healthy", "cache": "Healthy"})
	t.Logf("readiness back to 200 %s after connections were allowed again", took)

	t.Run("recovered", func(t *testing.T) {
		tk := b.login(e.base, "bob", bobPassword)
		b.do("GET", e.base+"/api/v1/ping", tk.AccessToken, nil).expect(t, "ping after recovery", 200, 0)
		nb := newBrowser(t)
		u := nb.callback(e.ssoCallbackURL(t, nb, "bob"))
		nb.exchange(e.base, u.Query().Get("ticket")).expect(t, "SSO after recovery", 200, 0)
	})
}

// adminDB connects to the PostgreSQL server dbtest uses.
func adminDB(t *testing.T) *sql.DB {
	t.Helper()
	dsn := os.Getenv(dbtest.EnvPostgres)
	if dsn == "" {
		dsn = dbtest.DefaultPostgres
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
