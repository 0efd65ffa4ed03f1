package enterprisechat

import (
	"context"
	"sync"
	"time"
)

// tokenCache holds the corp access token of one app (corpid + secret).
// Concurrent callers that find no valid token share one fetch
// (single-flight); a token the vendor rejected is dropped once, so that N
// requests failing with the same stale token cause one refresh.
type tokenCache struct {
	fetch   func(ctx context.Context) (token string, ttl time.Duration, err error)
	now     func() time.Time
	timeout time.Duration

	mu     sync.Mutex
	token  string
	expiry time.Time
	flight *tokenFlight
	// fetches counts fetch calls (for logs and tests).
	fetches int
}

type tokenFlight struct {
	done  chan struct{}
	token string
	err   error
}

// get returns a valid token, fetching one if needed. The fetch runs detached
// from ctx (bounded by the cache's timeout) so a caller that gives up does
// not fail the others waiting on the same fetch.
func (c *tokenCache) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.token != "" && c.now().Before(c.expiry) {
		t := c.token
		c.mu.Unlock()
		return t, nil
	}
	f := c.flight
	if f == nil {
		f = &tokenFlight{done: make(chan struct{})}
		c.flight = f
		c.fetches++
		go c.run(context.WithoutCancel(ctx), f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.token, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (c *tokenCache) run(ctx context.Context, f *tokenFlight) {
	fctx, cancel := context.WithTimeout(ctx, c.timeout)
	token, ttl, err := c.fetch(fctx)
	cancel()
	c.mu.Lock()
	if err == nil {
		c.token, c.expiry = token, c.now().Add(ttl)
	}
	c.flight = nil
	c.mu.Unlock()
	f.token, f.err = token, err
	close(f.done)
}

// invalidate drops the cached token if it is still bad (a concurrent caller
// may already have replaced it).
func (c *tokenCache) invalidate(bad string) {
	c.mu.Lock()
	if c.token == bad {
		c.token, c.expiry = "", time.Time{}
	}
	c.mu.Unlock()
}

// tokenTTL is how long a token answered with expiresIn seconds is used: its
// lifetime minus a safety margin (5 minutes, or half the lifetime when that
// is short), 5 minutes when the vendor gave none.
func tokenTTL(expiresIn int64) time.Duration {
	switch {
	case expiresIn <= 0:
		return 5 * time.Minute
	case expiresIn > 600:
		return time.Duration(expiresIn-300) * time.Second
	default:
		return time.Duration(expiresIn) * time.Second / 2
	}
}
