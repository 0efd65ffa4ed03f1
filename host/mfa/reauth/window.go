package reauth

import (
	"context"
	"strconv"
	"time"

	"github.com/adminkernel/kernel/host/cache"
)

// Cache key prefixes of the area: windowPrefix names counters (a window
// is a counter so that the in-process cache never evicts it early),
// ListKey an entry kept near every replica (host/cache/nearcache).
const (
	windowPrefix = "reauth:win:"
	// ListPrefix is the entry prefix of the cached high-sensitivity list;
	// the kernel keeps a near copy of it on every replica.
	ListPrefix = "reauth:hs:"
	listKey    = ListPrefix + "codes"
)

// DefaultWindow is the length of a re-authentication window (wire
// contract §2.3 endpoint 15: "about 5 minutes").
const DefaultWindow = 5 * time.Minute

// Windows records the re-authentication windows, keyed by user and
// session, in the shared cache (every replica sees them).
type Windows struct {
	store cache.Store
	ttl   time.Duration
}

// NewWindows returns the windows of store; ttl <= 0 means DefaultWindow.
func NewWindows(store cache.Store, ttl time.Duration) *Windows {
	if ttl <= 0 {
		ttl = DefaultWindow
	}
	return &Windows{store: store, ttl: ttl}
}

// TTL is the length of a window.
func (w *Windows) TTL() time.Duration { return w.ttl }

func windowKey(userID int64, sid string) string {
	return windowPrefix + strconv.FormatInt(userID, 10) + ":" + sid
}

// Open starts (or restarts) the window of a user's session.
func (w *Windows) Open(ctx context.Context, userID int64, sid string) error {
	key := windowKey(userID, sid)
	// A counter's window is fixed at its first increment: reset it so a
	// second re-authentication starts a full window again.
	if err := w.store.Reset(ctx, key); err != nil {
		return err
	}
	_, err := w.store.Incr(ctx, key, 1, w.ttl)
	return err
}

// IsOpen reports whether the session has an open window. An error is
// never an open window.
func (w *Windows) IsOpen(ctx context.Context, userID int64, sid string) (bool, error) {
	if sid == "" {
		return false, nil
	}
	n, _, err := w.store.Count(ctx, windowKey(userID, sid))
	if err != nil {
		return false, err
	}
	return n > 0, nil
}
