// Package kerneltest starts a real kernel for tests (Development, embedded
// SQLite in a temporary directory and the in-process cache unless the
// environment or the settings say otherwise) and drives it over its real
// HTTP stack.
//
// Two variables run every kerneltest-based suite on another backend (see
// backend.go): ADMINKERNEL_TEST_DB (Sqlite, PostgreSQL or MySql: a fresh
// database per kernel through dbtest) and ADMINKERNEL_TEST_CACHE (memory or
// redis: Redis at ADMINKERNEL_TEST_REDIS with a unique key prefix per
// kernel, its keys removed when the test ends).
package kerneltest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/leakcheck"
	"github.com/adminkernel/kernel/host/password"
)

// ListenEnviron is the listen address of kernels started here: nothing
// listens on it (tests use App().Test or their own listener), but it names
// the host httptest.NewRequest sends, example.com on port 80.
const ListenEnviron = "Service__Http__ListenAddress=http://example.com:80"

// AdminPassword is the seeded super-admin's password in kernels started here.
const AdminPassword = "Adm1n#Passw0rd"

// Kernel is a started kernel with a captured log.
type Kernel struct {
	*host.Kernel
	T    testing.TB
	logs *syncbuf.Buffer

	// Leaks is what the leak sweep looks for when the test ends
	// (leakcheck.Sweep over the kernel's log, operation log and exception
	// log): by default the seeded admin password and anything shaped like
	// an access, ID or refresh token. Tests add their own secrets, or set
	// NoShapes when their inputs may take a token's shape (fuzzing).
	Leaks leakcheck.Check
	sweep *sync.Once // shared by copies (a copy may report on another t)
}

// Close sweeps the kernel for leaked secrets (Leaks), once, unless the test
// has failed already, then closes it. Start registers it as a cleanup, so
// every kernel of every test is swept, also when a test closes it itself.
func (k *Kernel) Close() error {
	k.sweep.Do(func() {
		if !k.T.Failed() { // after a failure the database may be in any state
			leakcheck.Sweep(k.T, k, k.Leaks)
		}
	})
	return k.Kernel.Close()
}

// Log returns everything the kernel logged so far.
func (k *Kernel) Log() string {
	return k.logs.String()
}

// Start starts a Development kernel with the super-admin password
// AdminPassword, 100000 PBKDF2 iterations (fast tests), a password-hashing
// wait of up to 60 s (a test's parallel logins under -race on a busy
// machine must not meet the pool's 3 s production bound; the overload tests
// set their own) and rate limiting off, on the database and cache the environment selects (see Backend:
// SQLite in t.TempDir() and the in-process cache by default). environ adds
// settings ("Service__X__Y=v") and wins over the selection, and modules are
// added after the kernel's own.
func Start(t testing.TB, environ []string, modules ...host.Module) *Kernel {
	t.Helper()
	return StartWith(t, Options{Environ: environ, Modules: modules})
}

// Options are the arguments of StartWith.
type Options struct {
	// Environ and Modules are Start's arguments.
	Environ []string
	Modules []host.Module
	// SessionClock is the clock of the kernel's sessions (nil = time.Now;
	// see host.Options.SessionClock): idle and absolute lifetimes tested
	// without waiting.
	SessionClock func() time.Time
	// Host, when set, adjusts the host options before the kernel is built
	// (library hooks such as PasswordHasher or ErrorCodeEnums).
	Host func(*host.Options)
}

// Config loads the settings a kernel started here gets: the test
// defaults (seeded admin password, a fast PBKDF2 count, the nominal listen
// address), the selected database and cache backend, then environ.
func Config(t testing.TB, environ []string) *config.Config {
	t.Helper()
	env := append([]string{
		"Service__Seed__AdminPassword=" + AdminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
		"Service__Security__Password__HashMaxWaitMillis=60000",
		// Nominal: tests drive App().Test, whose requests carry Host
		// example.com, the name external login's Development fallback
		// requires the Host to match (host/externalauth hostAllowed).
		ListenEnviron,
	}, BackendEnviron(t, environ)...)
	env = append(env, environ...)
	cfg, err := config.Load(config.LoadOptions{ContentRoot: t.TempDir(), Environment: config.Development, Environ: env})
	if err != nil {
		t.Fatalf("config.Load: %v", err)
	}
	return cfg
}

// StartWith is Start with Options.
func StartWith(t testing.TB, o Options) *Kernel {
	t.Helper()
	cfg, modules := Config(t, o.Environ), o.Modules
	logs := &syncbuf.Buffer{}
	hopts := host.Options{Config: cfg, LogOutput: logs, Modules: modules, SessionClock: o.SessionClock}
	if o.Host != nil {
		o.Host(&hopts)
	}
	k, err := host.New(context.Background(), hopts)
	if err != nil {
		t.Fatalf("host.New: %v\n%s", err, logs.String())
	}
	kk := &Kernel{Kernel: k, T: t, logs: logs, Leaks: leakcheck.Check{Secrets: []string{AdminPassword}}, sweep: &sync.Once{}}
	t.Cleanup(func() { _ = kk.Close() })
	if err := k.Settings().Set(context.Background(), "sys.security.rateLimit.enabled", "false"); err != nil {
		t.Fatal(err)
	}
	return kk
}

// Reply is one response: status, headers and the decoded envelope.
type Reply struct {
	Status int
	Header http.Header
	Code   int             `json:"code"`
	MsgKey string          `json:"msgKey"`
	Args   map[string]any  `json:"args"`
	Data   json.RawMessage `json:"data"`
	Raw    string
}

// Decode unmarshals Data into v, failing the test on error.
func (r Reply) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Data, err)
	}
}

// Expect fails the test unless the reply has the status and envelope code.
func (r Reply) Expect(t testing.TB, what string, status, code int) Reply {
	t.Helper()
	if r.Status != status || r.Code != code {
		t.Fatalf("%s = HTTP %d code %d, want HTTP %d code %d (%s)", what, r.Status, r.Code, status, code, r.Raw)
	}
	return r
}

// ExpectCode is Expect with the HTTP status the kernel answers code with
// (errcode.StatusOf: 200 for success and business errors).
func (r Reply) ExpectCode(t testing.TB, what string, code errcode.Code) Reply {
	t.Helper()
	return r.Expect(t, what, errcode.StatusOf(code), int(code))
}

// Do sends a request. body is JSON-encoded unless it is a string (sent
// as-is) or nil. A non-envelope body fails the test, except for redirects.
func (k *Kernel) Do(method, path, token string, body any) Reply {
	k.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			k.T.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequestWithContext(k.T.Context(), method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return k.Send(req)
}

// Send sends a prepared request.
func (k *Kernel) Send(req *http.Request) Reply {
	k.T.Helper()
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		k.T.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return r
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		k.T.Fatalf("%s %s: body %q is not an envelope", req.Method, req.URL, raw)
	}
	return r
}

// Tokens is the part of a login answer tests use.
type Tokens struct {
	AccessToken        string `json:"accessToken"`
	RefreshToken       string `json:"refreshToken"`
	UserID             int64  `json:"userId"`
	MustChangePassword bool   `json:"mustChangePassword"`
	IsSuperAdmin       bool   `json:"isSuperAdmin"`
}

// Login logs in and fails the test unless it succeeds.
func (k *Kernel) Login(account, pw string) Tokens {
	k.T.Helper()
	r := k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
	r.Expect(k.T, "login "+account, 200, 0)
	var tp Tokens
	r.Decode(k.T, &tp)
	return tp
}

// Admin logs in as the seeded super-admin and returns the access token.
func (k *Kernel) Admin() string {
	k.T.Helper()
	return k.Login("superAdmin", AdminPassword).AccessToken
}

// User creates an enabled account directly in the database with the given
// permission codes granted through a fresh role and menu button, and
// returns its id. Codes are route permission codes such as
// "GET:/api/v1/sys/user/page".
func (k *Kernel) User(account, pw string, codes ...string) int64 {
	k.T.Helper()
	ctx := context.Background()
	h, err := password.New(100000).Hash(pw)
	if err != nil {
		k.T.Fatal(err)
	}
	c := k.Ent()
	u := c.SysUser.Create().SetAccount(account).SetName(account).SetPasswordHash(h).SetOrgID(1).SaveX(ctx)
	if len(codes) > 0 {
		role := c.SysRole.Create().SetName("test-" + account).SetCode("test_" + account).SaveX(ctx)
		m := c.SysMenu.Create().SetType(3).SetTitle("test-" + account).SetPermission(strings.Join(codes, ";")).SaveX(ctx)
		c.SysRoleMenu.Create().SetRoleID(role.ID).SetMenuID(m.ID).ExecX(ctx)
		c.SysUserRole.Create().SetUserID(u.ID).SetRoleID(role.ID).ExecX(ctx)
		if err := k.Permissions().Invalidate(ctx, u.ID); err != nil {
			k.T.Fatal(err)
		}
	}
	return u.ID
}
