//go:build !unit

package outage_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/gofiber/fiber/v3"
	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/cache/rediscache/redistest"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/netcut"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

func TestMain(m *testing.M) {
	// As the binary does: no go-redis line per failed dial.
	redis.SetLogger(rediscache.ProcessLogger())
	os.Exit(m.Run())
}

const bobPassword = "Bob#Pass12345"

func exceptionRows(t *testing.T, k *kerneltest.Kernel) int {
	t.Helper()
	n, err := k.Ent().SysExceptionLog.Query().Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// expectOutage checks a 503 outage answer: code, msgKey, Retry-After header
// and args.retryAfterSeconds.
func expectOutage(t *testing.T, what string, r kerneltest.Reply, code errcode.Code) {
	t.Helper()
	r.Expect(t, what, 503, int(code))
	if got := r.Header.Get("Retry-After"); got != "5" {
		t.Errorf("%s: Retry-After %q, want 5", what, got)
	}
	if got, ok := r.Args["retryAfterSeconds"].(float64); !ok || got != 5 {
		t.Errorf("%s: args.retryAfterSeconds %v, want 5", what, r.Args["retryAfterSeconds"])
	}
	for _, leak := range []string{"dial", "refused", "redis:", "pq:", "127.0.0.1", "goroutine"} {
		if strings.Contains(strings.ToLower(r.Raw), leak) {
			t.Errorf("%s: body leaks %q: %s", what, leak, r.Raw)
		}
	}
}

// logLines returns the lines of the kernel's log matching re.
func logLines(k *kerneltest.Kernel, re string) []string {
	var out []string
	rx := regexp.MustCompile(re)
	for _, l := range strings.Split(k.Log(), "\n") {
		if rx.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// probe is an answer of /health/ready.
type probe struct {
	Status int
	Raw    string
}

// readiness returns the status of /health/ready and its body.
func readiness(k *kerneltest.Kernel) probe {
	k.T.Helper()
	req := httptest.NewRequestWithContext(k.T.Context(), "GET", "/health/ready", nil)
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 30 * time.Second})
	if err != nil {
		k.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		k.T.Fatal(err)
	}
	return probe{Status: resp.StatusCode, Raw: string(raw)}
}

// TestRedisOutage stops the kernel's Redis (a private redis-server) with a
// session logged in: login, captcha and logout answer 503 / 50002 with
// Retry-After; authenticated requests and refresh read through to the
// database (never 401); no exception-log row, one WARN; readiness 503.
// The server restarted on the same port, the same requests succeed without
// restarting the kernel and one INFO tells the outage's length and count.
func TestRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	k := kerneltest.Start(t, []string{
		"Service__Cache__Provider=Redis",
		"Service__Cache__Redis__Address=" + srv.Addr,
		"Service__Cache__Redis__KeyPrefix=" + kerneltest.RedisPrefix(t),
	})
	k.User("bob", bobPassword, "GET:/api/v1/ping")
	tk := k.Login("bob", bobPassword)
	k.Do("GET", "/api/v1/ping", tk.AccessToken, nil).Expect(t, "ping", 200, 0)
	before := exceptionRows(t, k)
	login := map[string]string{"account": "bob", "password": bobPassword}

	warnsBefore := len(logLines(k, `\[WARN\]`))
	srv.Stop()
	errorsBefore := len(logLines(k, `\[ERROR\]`))
	refusedAfter := 0

	expectOutage(t, "login", k.Do("POST", "/api/v1/auth/login", "", login), errcode.CacheUnavailable)
	expectOutage(t, "captcha", k.Do("GET", "/api/v1/auth/captcha", "", nil), errcode.CacheUnavailable)
	// The session and permission checks read through to the database: the
	// outage neither logs bob out (401) nor fails his request.
	k.Do("GET", "/api/v1/ping", tk.AccessToken, nil).Expect(t, "ping during the outage", 200, 0)
	k.Do("GET", "/api/v1/personal/profile", tk.AccessToken, nil).Expect(t, "profile during the outage", 200, 0)
	// Refresh is the database's (the rotation of the refresh token).
	var rotated kerneltest.Tokens
	k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken}).
		Expect(t, "refresh during the outage", 200, 0).Decode(t, &rotated)
	// Logout revokes the row but cannot clear the cached "active" mark: it
	// answers 503 so that the client retries.
	expectOutage(t, "logout", k.Do("POST", "/api/v1/auth/logout", rotated.AccessToken, nil), errcode.CacheUnavailable)
	r := readiness(k)
	if r.Status != 503 || !strings.Contains(r.Raw, `"name":"cache","status":"Unhealthy"`) || !strings.Contains(r.Raw, `"name":"db","status":"Healthy"`) {
		t.Errorf("readiness during the outage: %d %s", r.Status, r.Raw)
	}

	if got := exceptionRows(t, k); got != before {
		t.Errorf("exception log grew from %d to %d rows during the outage", before, got)
	}
	if warns := logLines(k, `\[WARN\].*redis unavailable: .*answering 503 until it is back`); len(warns) != 1 {
		t.Errorf("%d outage warnings, want 1:\n%s", len(warns), strings.Join(warns, "\n"))
	}
	if errs := logLines(k, `\[ERROR\]`); len(errs) != errorsBefore {
		t.Errorf("errors logged during the outage:\n%s", strings.Join(errs[errorsBefore:], "\n"))
	}
	// Besides the tracker's, only the subscribers' one line each when
	// their subscription is lost, and the relay's one line when it cannot
	// publish a change event (the logout's SessionsEnded; a resync follows
	// when Redis answers): nothing per request.
	publishWarns := 0
	for _, w := range logLines(k, `\[WARN\]`)[warnsBefore:] {
		if strings.Contains(w, "AdminKernel.Bus: cannot publish change events") {
			publishWarns++
			continue
		}
		if !regexp.MustCompile(`AdminKernel\.(Cache: redis unavailable|Bus: lost the change-event subscription|NearCache: lost the near-cache subscription)`).MatchString(w) {
			t.Errorf("unexpected warning during the outage: %s", w)
		}
	}
	if publishWarns > 1 {
		t.Errorf("%d warnings about unpublished change events in one outage, want at most 1", publishWarns)
	}
	if back := logLines(k, `is back after`); len(back) != 0 {
		t.Errorf("back before the restart: %v", back)
	}

	srv.Restart()
	// Nothing restarted in the kernel: go-redis redials on the next command
	// (or, after as many failed dials as its pool has connections, within
	// a second, from its background dial).
	var again kerneltest.Tokens
	took := poll.Until(t, 10*time.Second, "login after the restart", func() bool {
		r := k.Do("POST", "/api/v1/auth/login", "", login)
		if r.Status == 200 && r.Code == 0 {
			r.Decode(t, &again)
			return true
		}
		if r.Status != 503 || r.Code != int(errcode.CacheUnavailable) {
			t.Fatalf("login after the restart: %d %s", r.Status, r.Raw)
		}
		refusedAfter++
		return false
	})
	t.Logf("login succeeded %s after the restart (%d refused meanwhile)", took, refusedAfter)
	k.Do("GET", "/api/v1/auth/captcha", "", nil).Expect(t, "captcha after the restart", 200, 0)
	k.Do("GET", "/api/v1/ping", again.AccessToken, nil).Expect(t, "ping after the restart", 200, 0)
	// The retried logout completes, and the session is over.
	k.Do("POST", "/api/v1/auth/logout", rotated.AccessToken, nil).Expect(t, "logout retried", 200, 0)
	k.Do("GET", "/api/v1/ping", rotated.AccessToken, nil).Expect(t, "logged-out session", 401, int(errcode.TokenInvalid))
	if r := readiness(k); r.Status != 200 {
		t.Errorf("readiness after the restart: %d %s", r.Status, r.Raw)
	}
	back := logLines(k, fmt.Sprintf(`\[INFO\].*redis is back after [0-9.]+s; %d requests were refused`, 3+refusedAfter))
	if len(back) != 1 {
		t.Errorf("want one INFO telling redis is back with 3 refused requests; log:\n%s", strings.Join(logLines(k, "redis"), "\n"))
	}
	if warns := logLines(k, `redis unavailable`); len(warns) != 1 {
		t.Errorf("%d outage warnings after the restart, want 1:\n%s", len(warns), strings.Join(warns, "\n"))
	}
	if got := exceptionRows(t, k); got != before {
		t.Errorf("exception log grew from %d to %d rows", before, got)
	}
}

// proxied returns the kernel settings of a fresh database of dbType reached
// through a TCP proxy the test cuts and restores.
func proxied(t *testing.T, dbType string) ([]string, *netcut.Proxy) {
	t.Helper()
	cfg := dbtest.Config(t, dbType)
	conn := cfg.Service.Database.ConnectionString.Reveal()
	var p *netcut.Proxy
	switch dbType {
	case config.DBPostgreSQL:
		u, err := url.Parse(conn)
		if err != nil || u.Host == "" {
			t.Fatalf("the PostgreSQL test connection string must be a URL (%v)", err)
		}
		p = netcut.Start(t, u.Host)
		u.Host = p.Addr
		conn = u.String()
	case config.DBMySQL:
		mc, err := mysql.ParseDSN(conn)
		if err != nil {
			t.Fatal(err)
		}
		p = netcut.Start(t, mc.Addr)
		mc.Addr = p.Addr
		conn = mc.FormatDSN()
	}
	return []string{"Service__Database__DbType=" + dbType, "Service__Database__ConnectionString=" + conn}, p
}

// TestDatabaseOutage cuts the kernel's database connections (PostgreSQL
// and MariaDB through a TCP proxy): login, refresh and a database-reading
// authenticated route answer 503 / 50003 with Retry-After, one WARN, no
// exception-log row, readiness 503; restored, the same requests succeed
// without restarting the kernel, and one INFO says the database is back.
func TestDatabaseOutage(t *testing.T) {
	for _, dbType := range []string{config.DBPostgreSQL, config.DBMySQL} {
		t.Run(dbType, func(t *testing.T) {
			settings, proxy := proxied(t, dbType)
			k := kerneltest.Start(t, append(settings, "Service__Cache__Provider="))
			k.User("bob", bobPassword, "GET:/api/v1/ping")
			tk := k.Login("bob", bobPassword)
			k.Do("GET", "/api/v1/personal/profile", tk.AccessToken, nil).Expect(t, "profile", 200, 0)
			k.Do("GET", "/api/v1/ping", tk.AccessToken, nil).Expect(t, "ping", 200, 0)
			before := exceptionRows(t, k)
			login := map[string]string{"account": "bob", "password": bobPassword}
			errorsBefore := len(logLines(k, `\[ERROR\]`))
			warnsBefore := len(logLines(k, `\[WARN\]`))

			proxy.Cut()
			expectOutage(t, "login", k.Do("POST", "/api/v1/auth/login", "", login), errcode.DatabaseUnavailable)
			expectOutage(t, "profile", k.Do("GET", "/api/v1/personal/profile", tk.AccessToken, nil), errcode.DatabaseUnavailable)
			expectOutage(t, "refresh", k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken}), errcode.DatabaseUnavailable)
			// The session mark and permission set are cached: a route that
			// reads nothing else still answers.
			k.Do("GET", "/api/v1/ping", tk.AccessToken, nil).Expect(t, "ping during the outage", 200, 0)
			r := readiness(k)
			if r.Status != 503 || !strings.Contains(r.Raw, `"name":"db","status":"Unhealthy"`) {
				t.Errorf("readiness during the outage: %d %s", r.Status, r.Raw)
			}
			if warns := logLines(k, `\[WARN\].*database unavailable: .*answering 503 until it is back`); len(warns) != 1 {
				t.Errorf("%d outage warnings, want 1:\n%s", len(warns), strings.Join(warns, "\n"))
			}
			if errs := logLines(k, `\[ERROR\]`); len(errs) != errorsBefore {
				t.Errorf("errors logged during the outage:\n%s", strings.Join(errs[errorsBefore:], "\n"))
			}
			if warns := logLines(k, `\[WARN\]`); len(warns) != warnsBefore+1 {
				t.Errorf("want the outage's one warning, got:\n%s", strings.Join(warns[warnsBefore:], "\n"))
			}

			proxy.Restore()
			var again kerneltest.Tokens
			poll.Until(t, 10*time.Second, "login after the restore", func() bool {
				r := k.Do("POST", "/api/v1/auth/login", "", login)
				if r.Status == 200 && r.Code == 0 {
					r.Decode(t, &again)
					return true
				}
				return false
			})
			k.Do("GET", "/api/v1/personal/profile", again.AccessToken, nil).Expect(t, "profile after the restore", 200, 0)
			k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken}).Expect(t, "refresh after the restore", 200, 0)
			if r := readiness(k); r.Status != 200 {
				t.Errorf("readiness after the restore: %d %s", r.Status, r.Raw)
			}
			if back := logLines(k, `\[INFO\].*database is back after [0-9.]+s; 3 requests were refused`); len(back) != 1 {
				t.Errorf("want one INFO telling the database is back with 3 refused requests; log:\n%s", strings.Join(logLines(k, "database"), "\n"))
			}
			if warns := logLines(k, `database unavailable`); len(warns) != 1 {
				t.Errorf("%d outage warnings after the restore, want 1", len(warns))
			}
			if got := exceptionRows(t, k); got != before {
				t.Errorf("exception log grew from %d to %d rows", before, got)
			}
		})
	}
}
