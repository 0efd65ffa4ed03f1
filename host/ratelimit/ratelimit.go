// Package ratelimit is the kernel's request rate limiter (wire contract
// §1.4): a fixed window per client IP with a stricter bucket for the
// anonymous authentication endpoints (the SSO steps, refresh, captcha)
// and a stricter one still for the password attempts (PasswordPaths: the
// password login and the anonymous TOTP self-service steps that check a
// password). Over the limit a request ends with
// errcode.TooManyRequests (HTTP 429, envelope 40008, args.retryAfterSeconds
// and a Retry-After header written by the envelope error handler).
//
// Windows are aligned to the Unix epoch; each (bucket, client, window) is
// one cache counter "rl:<bucket>:<client>:<window start unix>" incremented
// with Store.Incr and expiring after one window. IPv6 clients are counted
// per /64 network, the smallest block a subscriber usually holds, so that
// rotating through one's own addresses does not multiply the allowance.
//
// Cache failures fail OPEN: the request is let through and a warning is
// logged (at most every 10 s; an unreachable Redis, cache.ErrUnavailable,
// is logged once per outage by the cache's tracker instead). The limiter exists to protect availability,
// and failing closed would turn a cache outage into a full outage of the
// API. The security-relevant one-time values kept in the same cache (login
// tickets, captcha answers, SMS codes) fail closed in their own packages,
// and login lockout does not depend on this limiter.
//
// The client address is the TCP peer unless that peer is a trusted proxy
// (Service:Http:TrustedProxies), in which case X-Forwarded-For is walked
// from the right, skipping trusted hops, and the first untrusted address is
// the client. Addresses to the left of it were written by the client and are
// never believed.
package ratelimit

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/telemetry"
)

// Defaults (runtime config sys.security.rateLimit.*).
const (
	DefaultWindow        = 60 * time.Second
	DefaultAuthLimit     = 1200
	DefaultPasswordLimit = 60
	DefaultLimit         = 300
	DefaultAuthPrefix    = "/api/v1/auth"
)

// DefaultPasswordPaths are the anonymous routes that check a password:
// the password login, the start of a TOTP binding and the recovery-code
// unbinding (host/auth checkPassword).
var DefaultPasswordPaths = []string{"/api/v1/auth/login", "/api/v1/auth/mfa/bind/start", "/api/v1/auth/mfa/recovery"}

// Bucket names used in counter keys.
const (
	BucketAuth     = "auth"
	BucketPassword = "password"
	BucketOther    = "api"
)

// Options configures the middleware. The functions are read on every
// request so that runtime configuration changes apply at once; a nil
// function (or a non-positive result) means the default.
type Options struct {
	// Enabled switches the limiter (default on).
	Enabled func(ctx context.Context) bool
	// Window is the fixed window length (default 60 s, whole seconds, at
	// least 1 s).
	Window func(ctx context.Context) time.Duration
	// AuthLimit is the allowance per window for paths under AuthPrefix
	// (default 1200).
	AuthLimit func(ctx context.Context) int
	// PasswordLimit is the allowance per window for PasswordPaths
	// (default 60); those requests are not counted in the auth bucket.
	PasswordLimit func(ctx context.Context) int
	// PasswordPaths are the paths of the password bucket, matched whole
	// and case-insensitively (default DefaultPasswordPaths).
	PasswordPaths []string
	// Limit is the allowance per window for every other path (default 300).
	Limit func(ctx context.Context) int
	// Trusted are the proxies whose X-Forwarded-For is believed.
	Trusted []*net.IPNet
	// AuthPrefix selects the strict bucket (default /api/v1/auth); it
	// matches whole path segments, case-insensitively.
	AuthPrefix string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives the fail-open warnings (default hclog.L()).
	Log hclog.Logger
	// Batch, when above 1, counts the general bucket (not the auth bucket)
	// in process and adds the counts to the store's counter once per Batch
	// requests of a client, and at every request once the replica's view
	// of the count passes the allowance (see batcher). Meant for a shared
	// store (Redis), where each Incr is a network round trip; the kernel
	// sets DefaultBatch then.
	Batch int
	// Metrics counts the refusals by bucket (nil = none).
	Metrics *telemetry.Metrics
}

// DefaultBatch is the Batch the kernel uses with Redis.
const DefaultBatch = 16

// New returns the rate-limit middleware.
func New(store cache.Store, opts Options) fiber.Handler {
	if opts.AuthPrefix == "" {
		opts.AuthPrefix = DefaultAuthPrefix
	}
	prefix := strings.ToLower(strings.TrimRight(opts.AuthPrefix, "/"))
	if opts.PasswordPaths == nil {
		opts.PasswordPaths = DefaultPasswordPaths
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = hclog.L()
	}
	var lastWarn atomic.Int64 // unix nanos of the last fail-open warning
	var batch *batcher
	if opts.Batch > 1 {
		batch = newBatcher(store, opts.Batch)
	}

	return func(c fiber.Ctx) error {
		ctx := c.Context()
		if opts.Enabled != nil && !opts.Enabled(ctx) {
			return c.Next()
		}
		window := DefaultWindow
		if opts.Window != nil {
			if w := opts.Window(ctx); w > 0 {
				window = w
			}
		}
		secs := int64(window / time.Second)
		if secs < 1 {
			secs = 1
		}
		window = time.Duration(secs) * time.Second

		bucket, limit := BucketOther, intOr(opts.Limit, ctx, DefaultLimit)
		if path := c.Path(); underPrefix(path, prefix) {
			bucket, limit = BucketAuth, intOr(opts.AuthLimit, ctx, DefaultAuthLimit)
			if isOneOf(path, opts.PasswordPaths) {
				bucket, limit = BucketPassword, intOr(opts.PasswordLimit, ctx, DefaultPasswordLimit)
			}
		}

		now := opts.Now()
		start := floorDiv(now.Unix(), secs) * secs
		var buf [96]byte
		key := appendKey(buf[:0], bucket, counterKey(request.ClientIP(c, opts.Trusted)), start)
		var n int64
		var err error
		if batch != nil && bucket == BucketOther {
			n, err = batch.incr(ctx, key, start, int64(limit), window)
		} else {
			n, err = store.Incr(ctx, string(key), 1, window)
		}
		if err != nil {
			// An unreachable cache is logged once per outage by its
			// tracker (host/outage); other failures here, at most every
			// 10 s.
			t := now.UnixNano()
			if errors.Is(err, cache.ErrUnavailable) {
				return c.Next()
			}
			if last := lastWarn.Load(); t-last >= int64(10*time.Second) && lastWarn.CompareAndSwap(last, t) {
				opts.Log.Warn("rate limiter: cache unavailable, request let through (fail open)", "error", err)
			}
			return c.Next()
		}
		if n > int64(limit) {
			end := time.Unix(start+secs, 0)
			retry := int64((end.Sub(now) + time.Second - 1) / time.Second)
			if retry < 1 {
				retry = 1
			}
			if retry > secs {
				retry = secs
			}
			opts.Metrics.RateLimited(bucket)
			return errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", retry)
		}
		return c.Next()
	}
}

func intOr(f func(context.Context) int, ctx context.Context, def int) int {
	if f == nil {
		return def
	}
	if v := f(ctx); v > 0 {
		return v
	}
	return def
}

// underPrefix reports whether path is prefix or below it, segment-wise and
// case-insensitively (Fiber routes case-insensitively by default).
func underPrefix(path, prefix string) bool {
	if prefix == "" {
		return false
	}
	if len(path) < len(prefix) || !strings.EqualFold(path[:len(prefix)], prefix) {
		return false
	}
	return len(path) == len(prefix) || path[len(prefix)] == '/'
}

// isOneOf reports whether path is one of paths, ignoring case and a
// trailing slash (Fiber routes so by default).
func isOneOf(path string, paths []string) bool {
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	for _, p := range paths {
		if strings.EqualFold(path, p) {
			return true
		}
	}
	return false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// appendKey appends the counter key "rl:<bucket>:<client>:<window start>".
func appendKey(b []byte, bucket, client string, start int64) []byte {
	b = append(b, "rl:"...)
	b = append(b, bucket...)
	b = append(b, ':')
	b = append(b, client...)
	b = append(b, ':')
	return strconv.AppendInt(b, start, 10)
}

// counterKey is the client part of a counter key: the IPv4 address, or the
// /64 network of an IPv6 address.
func counterKey(ip string) string {
	if ip == "" {
		return "unknown"
	}
	if !strings.Contains(ip, ":") {
		return ip // IPv4 (ClientIP writes IPv4-mapped addresses as IPv4)
	}
	parsed := net.ParseIP(ip)
	if parsed == nil || parsed.To4() != nil {
		return ip
	}
	return parsed.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
