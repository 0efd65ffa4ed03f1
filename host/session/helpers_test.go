package session_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/snowflake"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeStore is a map-backed cache.Store on the test clock. It counts Gets
// and can fail on demand.
type fakeStore struct {
	mu        sync.Mutex
	now       func() time.Time
	entries   map[string]fakeEntry
	gets      atomic.Int64
	fail      atomic.Bool
	beforeSet func(key string, val []byte) // called without the lock held
}

type fakeEntry struct {
	val []byte
	exp time.Time
}

var errCacheDown = errors.New("fake cache: down")

func newFakeStore(now func() time.Time) *fakeStore {
	return &fakeStore{now: now, entries: make(map[string]fakeEntry)}
}

func (f *fakeStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	f.gets.Add(1)
	if f.fail.Load() {
		return nil, false, errCacheDown
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	if !ok || (!e.exp.IsZero() && !f.now().Before(e.exp)) {
		return nil, false, nil
	}
	return bytes.Clone(e.val), true, nil
}

func (f *fakeStore) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	if f.fail.Load() {
		return errCacheDown
	}
	if f.beforeSet != nil {
		f.beforeSet(key, val)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := fakeEntry{val: bytes.Clone(val)}
	if ttl > 0 {
		e.exp = f.now().Add(ttl)
	}
	f.entries[key] = e
	return nil
}

func (f *fakeStore) Delete(_ context.Context, keys ...string) error {
	if f.fail.Load() {
		return errCacheDown
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		delete(f.entries, k)
	}
	return nil
}

func (f *fakeStore) DeletePrefix(_ context.Context, prefix string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k := range f.entries {
		if strings.HasPrefix(k, prefix) {
			delete(f.entries, k)
			n++
		}
	}
	return n, nil
}

func (f *fakeStore) raw(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	return string(e.val), ok
}

func (f *fakeStore) PutOnce(context.Context, string, []byte, time.Duration) error {
	return errors.New("not used")
}
func (f *fakeStore) Take(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("not used")
}
func (f *fakeStore) Incr(context.Context, string, int64, time.Duration) (int64, error) {
	return 0, errors.New("not used")
}
func (f *fakeStore) Count(context.Context, string) (int64, time.Duration, error) {
	return 0, 0, errors.New("not used")
}
func (f *fakeStore) Reset(context.Context, ...string) error { return errors.New("not used") }
func (f *fakeStore) Ping(context.Context) error             { return nil }
func (f *fakeStore) Close() error                           { return nil }

var _ cache.Store = (*fakeStore)(nil)

// countingDriver counts the statements sent to the database and can refuse
// all of them (a "poisoned" database).
type countingDriver struct {
	dialect.Driver
	queries atomic.Int64
	execs   atomic.Int64
	txs     atomic.Int64
	poison  atomic.Bool
}

var errPoisoned = errors.New("poisoned database: no statement may run")

func (d *countingDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.execs.Add(1)
	if d.poison.Load() {
		return errPoisoned
	}
	return d.Driver.Exec(ctx, query, args, v)
}

func (d *countingDriver) Query(ctx context.Context, query string, args, v any) error {
	d.queries.Add(1)
	if d.poison.Load() {
		return errPoisoned
	}
	return d.Driver.Query(ctx, query, args, v)
}

func (d *countingDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	d.txs.Add(1)
	if d.poison.Load() {
		return nil, errPoisoned
	}
	return d.Driver.Tx(ctx)
}

// statements returns how many statements and transactions reached the
// driver so far.
func (d *countingDriver) statements() int64 {
	return d.queries.Load() + d.execs.Load() + d.txs.Load()
}

// env is one migrated database with a session service on it.
type env struct {
	dialect string
	client  *ent.Client
	drv     *countingDriver
	store   *fakeStore
	clock   *clock
	ids     *snowflake.Generator
	svc     *session.Service
}

func newEnv(t *testing.T, dbType string, opts session.Options) *env {
	t.Helper()
	db := dbtest.OpenMigrated(t, dbType)
	drv := &countingDriver{Driver: entsql.OpenDB(db.Dialect, db.SQL)}
	ids, err := snowflake.New(0)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{dialect: dbType, client: ent.NewClient(ent.Driver(drv)), drv: drv, clock: newClock(), ids: ids}
	e.client.Use(database.IDHook(ids.Next))
	e.store = newFakeStore(e.clock.Now)
	e.svc = e.service(opts)
	return e
}

// service returns another Service on the same database, cache and clock.
func (e *env) service(opts session.Options) *session.Service {
	opts.Now = e.clock.Now
	opts.NextID = e.ids.Next
	return session.New(e.client, e.store, opts)
}

// user creates a user and returns its id.
func (e *env) user(t *testing.T, account string) int64 {
	t.Helper()
	u, err := e.client.SysUser.Create().SetAccount(account).SetName(account).Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func (e *env) login(t *testing.T, svc *session.Service, userID int64) session.Issued {
	t.Helper()
	is, err := svc.Create(context.Background(), session.NewSession{
		UserID: userID, Method: session.MethodPassword, IP: "203.0.113.7", UserAgent: "test-agent", RefreshTTL: 7 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (e *env) active(t *testing.T, sid string) bool {
	t.Helper()
	ok, err := e.svc.Active(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func (e *env) row(t *testing.T, sid string) *ent.SysSession {
	t.Helper()
	r, err := e.client.SysSession.Query().Where(syssession.SessionID(sid)).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// forEachDialect runs fn on a fresh database of every dialect under test.
func forEachDialect(t *testing.T, opts session.Options, fn func(t *testing.T, e *env)) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) { fn(t, newEnv(t, d, opts)) })
	}
}

func isCode(err error, code errcode.Code) bool {
	be, ok := errcode.As(err)
	return ok && be.Code == code
}
