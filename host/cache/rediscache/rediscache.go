// Package rediscache is the cache.Store shared by every replica, on Redis
// 6.2 or later (GETDEL).
//
// Every key is prefixed with config.Redis.KeyPrefix. Entries, one-time
// values and counters share that keyspace; callers keep their key names
// apart. Redis has no size cap or age backstop here: every key carries its
// own TTL.
package rediscache

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	redislog "github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/outage"
)

const (
	dialTimeout = 5 * time.Second
	ioTimeout   = 3 * time.Second
	// scanBatch is both the SCAN COUNT hint and the UNLINK batch size.
	scanBatch = 500
)

// incrScript increments a counter and, only when it created the key, sets
// the window's expiry, atomically. KEYS[1] counter; ARGV[1] delta; ARGV[2]
// ttl in ms (<= 0: none).
var incrScript = redis.NewScript(`
local created = redis.call('EXISTS', KEYS[1]) == 0
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if created and tonumber(ARGV[2]) > 0 then
	redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return n`)

// Cache is the Redis cache.Store. It is safe for concurrent use.
type Cache struct {
	client redis.UniversalClient
	prefix string
	// cluster: client is a *redis.ClusterClient, on which a command's keys
	// must share a slot and SCAN walks one node.
	cluster bool
	// track follows Redis' availability: every operation reports to it,
	// and its errors that mean "Redis is down" are marked
	// cache.ErrUnavailable (see done).
	track *outage.Tracker
}

var _ cache.Store = (*Cache)(nil)

// Option adjusts New.
type Option func(*Cache)

// WithHook adds a go-redis hook to the client (the kernel's tracing,
// host/tracing); a nil hook is ignored.
func WithHook(h redis.Hook) Option {
	return func(c *Cache) {
		if h != nil {
			c.client.AddHook(h)
		}
	}
}

// WithTracker makes the cache report Redis' availability to t (one WARN per
// outage, one INFO when it is back: see NewTracker). Without it the cache
// marks its errors all the same and logs nothing.
func WithTracker(t *outage.Tracker) Option {
	return func(c *Cache) { c.track = t }
}

// NewTracker returns the availability tracker of a Redis cache ("redis",
// 503 / 50002 CacheUnavailable, cache.ErrUnavailable), logging to log.
func NewTracker(log hclog.Logger) *outage.Tracker {
	return outage.New(outage.Options{Name: "redis", Code: errcode.CacheUnavailable, Kind: cache.ErrUnavailable, Log: log})
}

// New connects to Redis and pings it. The error names the address, never
// the password.
func New(ctx context.Context, cfg config.Redis, options ...Option) (*Cache, error) {
	client, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	// Bound the first ping: go-redis retries dials, which could otherwise
	// hold startup for minutes against an unreachable host.
	pctx, cancel := context.WithTimeout(ctx, dialTimeout+ioTimeout)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("rediscache: ping redis at %s: %w", Describe(cfg), err)
	}
	_, cluster := client.(*redis.ClusterClient)
	c := &Cache{client: client, prefix: cfg.KeyPrefix, cluster: cluster}
	for _, o := range options {
		o(c)
	}
	if c.track == nil {
		c.track = NewTracker(nil)
	}
	return c, nil
}

// Describe names the Redis topology of cfg for messages: the address, the
// sentinels and master name, or the cluster seed nodes (never a password).
func Describe(cfg config.Redis) string {
	switch {
	case len(cfg.SentinelAddresses) > 0:
		return fmt.Sprintf("sentinel master %q via %s", cfg.MasterName, strings.Join(cfg.SentinelAddresses, ","))
	case len(cfg.ClusterAddresses) > 0:
		return "cluster " + strings.Join(cfg.ClusterAddresses, ",")
	}
	return cfg.Address
}

// NewClient builds the go-redis client of cfg without contacting Redis:
// a *redis.Client for a single address, a failover client for Sentinel
// (SentinelAddresses + MasterName), a *redis.ClusterClient for Cluster
// (ClusterAddresses). It is the one place the kernel's Redis clients are
// configured (timeouts, TLS, hooks).
func NewClient(cfg config.Redis) (redis.UniversalClient, error) {
	sentinel, cluster := len(cfg.SentinelAddresses) > 0, len(cfg.ClusterAddresses) > 0
	switch {
	case sentinel && cluster:
		return nil, errors.New("rediscache: sentinel and cluster addresses are exclusive")
	case sentinel && cfg.MasterName == "":
		return nil, errors.New("rediscache: sentinel addresses without a master name")
	case !sentinel && !cluster && cfg.Address == "":
		return nil, errors.New("rediscache: address is empty")
	}
	opts := &redis.UniversalOptions{
		Addrs:                 []string{cfg.Address},
		Username:              cfg.Username,
		Password:              cfg.Password.Reveal(),
		DB:                    cfg.DB,
		DialTimeout:           dialTimeout,
		ReadTimeout:           ioTimeout,
		WriteTimeout:          ioTimeout,
		ContextTimeoutEnabled: true,
		// Fail fast while Redis is down: one dial per attempt (the
		// default, 5 dials 100 ms apart per attempt and 4 attempts per
		// command, held a request for seconds per cache operation). The
		// command retries (MaxRetries, default 3) still cover a blip.
		DialerRetries: 1,
		// Maintenance push notifications are a Redis Enterprise/Cloud
		// feature; probing for them only adds log noise elsewhere.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	tlsAddr := cfg.Address
	switch {
	case sentinel:
		opts.Addrs = trimAll(cfg.SentinelAddresses)
		opts.MasterName = cfg.MasterName
		opts.SentinelUsername = cfg.SentinelUsername
		opts.SentinelPassword = cfg.SentinelPassword.Reveal()
		tlsAddr = opts.Addrs[0]
	case cluster:
		opts.Addrs = trimAll(cfg.ClusterAddresses)
		opts.IsClusterMode = true
		tlsAddr = opts.Addrs[0]
	}
	if cfg.TLS.Enabled {
		tc, err := tlsConfig(tlsAddr, cfg.TLS)
		if err != nil {
			return nil, err
		}
		opts.TLSConfig = tc
	}
	// UniversalOptions picks the client: MasterName → failover (Sentinel),
	// IsClusterMode or several Addrs → cluster, else a single node.
	return redis.NewUniversalClient(opts), nil
}

func trimAll(addrs []string) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// tlsConfig builds the client TLS settings (TLS 1.2 or later). Without a
// ServerName the address's host is verified.
func tlsConfig(addr string, c config.RedisTLS) (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         c.ServerName,
		InsecureSkipVerify: c.InsecureSkipVerify, //nolint:gosec // explicit opt-in setting
	}
	if tc.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			tc.ServerName = host
		} else {
			tc.ServerName = addr
		}
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("rediscache: read tls ca file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("rediscache: tls ca file %s holds no pem certificate", c.CAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// Client returns the underlying client (for pub/sub). Its keys are not
// prefixed.
func (c *Cache) Client() redis.UniversalClient { return c.client }

func (c *Cache) key(k string) string { return c.prefix + k }

func (c *Cache) keys(ks []string) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = c.prefix + k
	}
	return out
}

// wrap prefixes errors with the operation. Every method checks ctx before
// sending, so a cancelled call changes and consumes nothing.
func wrap(op string, err error) error {
	return fmt.Errorf("rediscache: %s: %w", op, err)
}

// done reports the outcome of a command begun at op to the tracker and
// returns err (redis.Nil untouched) prefixed with the operation name and,
// when it says Redis is unavailable, marked cache.ErrUnavailable. Any
// answer of the server, an error reply included, proves Redis is up.
func (c *Cache) done(op outage.Op, name string, err error) error {
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		c.track.Succeeded(op)
		return err
	case IsUnavailable(err):
		if cc, ok := c.client.(*redis.ClusterClient); ok {
			// A master may have failed over: reload the slot map now (go-redis
			// otherwise reloads it on MOVED or every 60 s, and a dead
			// master answers no MOVED). Reloads are coalesced, 200 ms
			// apart, in the background.
			cc.ReloadState(context.Background())
		}
		return wrap(name, c.track.Failed(err))
	}
	var re redis.Error
	if errors.As(err, &re) {
		c.track.Succeeded(op)
	}
	return wrap(name, err)
}

// IsUnavailable reports whether err (from go-redis) means that Redis could
// not serve the command now, as opposed to a bug or a misconfiguration:
//
//   - no connection: refused, reset, broken pipe, closed by the server
//     (EOF), any network error (dial, DNS, read/write timeouts), or the
//     connection pool's wait timing out;
//   - a server that cannot serve now: LOADING (reading its dataset after a
//     restart), BUSY (a script running), READONLY (a replica after a
//     failover), MASTERDOWN, TRYAGAIN, CLUSTERDOWN, OOM (maxmemory reached),
//     max number of clients reached.
//
// Not an outage: redis.Nil (a miss), a closed client (this process shut
// it down), a cancelled or expired caller context, error replies such as
// WRONGTYPE, NOSCRIPT or a syntax error (bugs), NOAUTH/WRONGPASS/NOPERM
// (misconfiguration: the exception log should show them).
func IsUnavailable(err error) bool {
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, redis.ErrClosed),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsMasterDownError(err) ||
		redis.IsTryAgainError(err) || redis.IsClusterDownError(err) || redis.IsOOMError(err) ||
		redis.IsMaxClientsError(err) || redis.HasErrorPrefix(err, "BUSY ")
}

// Get returns the entry under key.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, wrap("get", err)
	}
	op := c.track.Begin()
	v, err := c.client.Get(ctx, c.key(key)).Bytes()
	if err = c.done(op, "get", err); errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Set stores an entry for ttl (<= 0: no expiry).
func (c *Cache) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return wrap("set", err)
	}
	if ttl < 0 {
		ttl = 0 // go-redis: 0 = no expiry, -1 = KEEPTTL
	}
	op := c.track.Begin()
	return c.done(op, "set", c.client.Set(ctx, c.key(key), val, ttl).Err())
}

// SetMany stores entries for ttl in one pipelined round trip
// (cache.MultiSetter; on a cluster the client sends each SET to its slot's
// master). It returns the first failed command's error.
func (c *Cache) SetMany(ctx context.Context, entries []cache.Entry, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return wrap("set", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if ttl < 0 {
		ttl = 0
	}
	op := c.track.Begin()
	_, err := c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			p.Set(ctx, c.key(e.Key), e.Val, ttl)
		}
		return nil
	})
	return c.done(op, "set", err)
}

// Delete removes keys.
func (c *Cache) Delete(ctx context.Context, keys ...string) error {
	return c.unlink(ctx, "delete", keys)
}

func (c *Cache) unlink(ctx context.Context, op string, keys []string) error {
	if err := ctx.Err(); err != nil {
		return wrap(op, err)
	}
	if len(keys) == 0 {
		return nil
	}
	began := c.track.Begin()
	_, err := c.unlinkKeys(ctx, c.keys(keys))
	return c.done(began, op, err)
}

// unlinkKeys removes full (prefixed) keys and returns how many existed. On
// a cluster one UNLINK per key, pipelined (the client sends each to its
// slot's master): a multi-key UNLINK across slots is refused (CROSSSLOT).
func (c *Cache) unlinkKeys(ctx context.Context, keys []string) (int64, error) {
	if !c.cluster || len(keys) == 1 {
		return c.client.Unlink(ctx, keys...).Result()
	}
	cmds, err := c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Unlink(ctx, k)
		}
		return nil
	})
	var n int64
	for _, cmd := range cmds {
		if ic, ok := cmd.(*redis.IntCmd); ok {
			n += ic.Val()
		}
	}
	return n, err
}

// DeletePrefix removes every key starting with prefix (SCAN + UNLINK in
// batches; on a cluster, on every master) and returns how many existed
// when unlinked.
func (c *Cache) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, wrap("delete prefix", err)
	}
	op := c.track.Begin()
	pattern := escapeGlob(c.key(prefix)) + "*"
	if cc, ok := c.client.(*redis.ClusterClient); ok {
		var removed atomic.Int64
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			n, err := c.scanUnlink(ctx, op, node, pattern)
			removed.Add(int64(n))
			return err
		})
		return int(removed.Load()), err
	}
	return c.scanUnlink(ctx, op, c.client, pattern)
}

// scanUnlink walks one node's keyspace (SCAN MATCH pattern) and unlinks
// what it finds in batches.
func (c *Cache) scanUnlink(ctx context.Context, op outage.Op, node redis.Cmdable, pattern string) (int, error) {
	removed := 0
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := c.unlinkKeys(ctx, batch)
		removed += int(n)
		batch = batch[:0]
		return c.done(op, "delete prefix: unlink", err)
	}
	var cursor uint64
	for {
		ks, next, err := node.Scan(ctx, cursor, pattern, scanBatch).Result()
		if err = c.done(op, "delete prefix: scan", err); err != nil {
			return removed, err
		}
		batch = append(batch, ks...)
		if len(batch) >= scanBatch {
			if err := flush(); err != nil {
				return removed, err
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if err := flush(); err != nil {
		return removed, err
	}
	return removed, nil
}

// escapeGlob makes s match itself literally in a Redis MATCH pattern.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// PutOnce stores a one-time value (SET NX PX); cache.ErrExists when held.
func (c *Cache) PutOnce(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("rediscache: put once %q: ttl %s must be positive", key, ttl)
	}
	if err := ctx.Err(); err != nil {
		return wrap("put once", err)
	}
	op := c.track.Begin()
	ok, err := c.client.SetNX(ctx, c.key(key), val, ttl).Result()
	if err = c.done(op, "put once", err); err != nil {
		return err
	}
	if !ok {
		return cache.ErrExists
	}
	return nil
}

// Take returns and removes a one-time value (GETDEL, atomic on the server).
func (c *Cache) Take(ctx context.Context, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, wrap("take", err)
	}
	op := c.track.Begin()
	v, err := c.client.GetDel(ctx, c.key(key)).Bytes()
	if err = c.done(op, "take", err); errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Incr adds delta to a counter; a new counter expires ttl later (fixed
// window, set atomically with the first increment).
func (c *Cache) Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, wrap("incr", err)
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	op := c.track.Begin()
	n, err := incrScript.Run(ctx, c.client, []string{c.key(key)}, delta, ms).Int64()
	if err = c.done(op, "incr", err); err != nil {
		return 0, err
	}
	return n, nil
}

// Count returns a counter's value and remaining lifetime (GET and PTTL in
// one MULTI/EXEC so they describe the same moment).
func (c *Cache) Count(ctx context.Context, key string) (int64, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, wrap("count", err)
	}
	k := c.key(key)
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	op := c.track.Begin()
	_, err := c.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, k)
		pttl = p.PTTL(ctx, k)
		return nil
	})
	if err = c.done(op, "count", err); errors.Is(err, redis.Nil) || errors.Is(get.Err(), redis.Nil) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	n, err := get.Int64()
	if err != nil {
		return 0, 0, wrap("count", err)
	}
	ttl := pttl.Val()
	if ttl < 0 { // -1: no expiry; -2: gone
		ttl = 0
	}
	return n, ttl, nil
}

// Reset removes counters.
func (c *Cache) Reset(ctx context.Context, keys ...string) error {
	return c.unlink(ctx, "reset", keys)
}

// Ping reports whether Redis answers.
func (c *Cache) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return wrap("ping", err)
	}
	op := c.track.Begin()
	return c.done(op, "ping", c.client.Ping(ctx).Err())
}

// Close closes the client.
func (c *Cache) Close() error {
	if err := c.client.Close(); err != nil {
		return wrap("close", err)
	}
	return nil
}

// ProcessLogger is the go-redis library logger for a process running
// kernels (redis.SetLogger, called once by the binary's main: the library's
// logger is process-wide, so no kernel sets it). It drops the line per
// failed dial, which would otherwise repeat for every request while Redis
// is down (an outage is logged once, by the kernel's tracker: NewTracker),
// and writes the others through the logger RouteLibraryLog gave — the
// kernel's, so a JSON log stays JSON — or, before any, to standard error
// as go-redis would.
func ProcessLogger() interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return libraryLog{fallback: redislog.NewBlacklistLogger([]string{dialFailure})}
}
