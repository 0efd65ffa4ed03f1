package snowflake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Worker leases. Two replicas with the same worker id can issue the same id
// in the same millisecond. With a shared store (Redis) each replica leases
// a worker id instead of being configured with one: the key
// LeaseKeyPrefix+<n> is taken with SET NX and a TTL, renewed every TTL/3
// while the replica runs and deleted at shutdown. A replica that dies
// without releasing frees its id after at most one TTL.
//
// When a renewal finds the lease gone (Redis lost its data, or could not be
// reached for longer than the TTL) the holder takes the same id again if it
// is free, and otherwise moves to the lowest free id (OnChange is told), so
// it never keeps an id another replica was given. A fixed lease (an id set
// in the settings) is only a reservation that keeps automatic replicas off
// that id: it never moves, and a conflict at acquisition is returned as
// ErrWorkerTaken (the host refuses to start in Production and warns
// elsewhere, host/scaleout.go).

// LeaseKeyPrefix prefixes the lease keys (after the store's own key
// prefix): "snowflake:worker:7".
const LeaseKeyPrefix = "snowflake:worker:"

// DefaultLeaseTTL is the lifetime of a lease between renewals.
const DefaultLeaseTTL = time.Minute

// ErrNoFreeWorker is returned when all 64 worker ids are leased.
var ErrNoFreeWorker = errors.New("snowflake: all 64 worker ids are leased by other replicas")

// ErrWorkerTaken is returned for a fixed lease whose id another owner holds.
var ErrWorkerTaken = errors.New("snowflake: the worker id is leased by another replica")

// LeaseStore keeps leases; rediscache.Cache implements it.
type LeaseStore interface {
	// TryLease takes key for owner for ttl when nobody holds it.
	TryLease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// RenewLease extends key when owner still holds it; false when not.
	RenewLease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// ReleaseLease deletes key when owner holds it.
	ReleaseLease(ctx context.Context, key, owner string) error
}

// LeaseOptions configures a lease.
type LeaseOptions struct {
	// TTL is the lease lifetime (default DefaultLeaseTTL); it is renewed
	// every TTL/3.
	TTL time.Duration
	// Owner identifies the holder (default: random).
	Owner string
	// Fixed reserves Worker only (an id set in the settings) instead of
	// leasing the lowest free id.
	Fixed  bool
	Worker int
	// Generator is the generator the lease feeds (required): AcquireLease
	// sets it to the leased id, and a renewal that had to move the lease
	// to another id sets it to the new one.
	Generator *Generator
	// OnChange, when set, is also told the new id after such a move.
	OnChange func(worker int)
	// Warn and Info receive the lease's log lines (hclog's signature;
	// nil discards).
	Warn, Info func(msg string, args ...any)
}

// Lease is a held worker id, renewed in the background until Release.
type Lease struct {
	store LeaseStore
	opts  LeaseOptions

	mu     sync.Mutex
	worker int
	held   bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// AcquireLease leases a worker id: opts.Worker when opts.Fixed
// (ErrWorkerTaken when another owner holds it), else the lowest free one
// (ErrNoFreeWorker when none is), and sets opts.Generator to it.
func AcquireLease(ctx context.Context, store LeaseStore, opts LeaseOptions) (*Lease, error) {
	if opts.TTL <= 0 {
		opts.TTL = DefaultLeaseTTL
	}
	if opts.Owner == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("snowflake: lease owner: %w", err)
		}
		opts.Owner = hex.EncodeToString(b[:])
	}
	if opts.Fixed && (opts.Worker < 0 || opts.Worker > MaxWorker) {
		return nil, fmt.Errorf("%w (got %d)", ErrWorkerRange, opts.Worker)
	}
	if opts.Generator == nil {
		return nil, errors.New("snowflake: LeaseOptions.Generator is required")
	}
	nop := func(string, ...any) {}
	if opts.Warn == nil {
		opts.Warn = nop
	}
	if opts.Info == nil {
		opts.Info = nop
	}
	l := &Lease{store: store, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	w, err := l.take(ctx, -1)
	if err != nil {
		return nil, err
	}
	l.worker, l.held = w, true
	if err := opts.Generator.SetWorker(w); err != nil {
		return nil, err
	}
	// Renewal outlives the acquiring call until Release: keep ctx's values
	// (logging, tracing), not its cancellation.
	go l.renew(context.WithoutCancel(ctx))
	return l, nil
}

// take leases the fixed id, or prefer when it is free, or the lowest free
// id.
func (l *Lease) take(ctx context.Context, prefer int) (int, error) {
	try := func(w int) (bool, error) {
		return l.store.TryLease(ctx, LeaseKeyPrefix+strconv.Itoa(w), l.opts.Owner, l.opts.TTL)
	}
	if l.opts.Fixed {
		ok, err := try(l.opts.Worker)
		if err != nil {
			return 0, fmt.Errorf("snowflake: lease worker %d: %w", l.opts.Worker, err)
		}
		if !ok {
			return 0, fmt.Errorf("%w (worker %d)", ErrWorkerTaken, l.opts.Worker)
		}
		return l.opts.Worker, nil
	}
	if prefer >= 0 {
		if ok, err := try(prefer); err != nil {
			return 0, fmt.Errorf("snowflake: lease worker %d: %w", prefer, err)
		} else if ok {
			return prefer, nil
		}
	}
	for w := 0; w <= MaxWorker; w++ {
		ok, err := try(w)
		if err != nil {
			return 0, fmt.Errorf("snowflake: lease worker %d: %w", w, err)
		}
		if ok {
			return w, nil
		}
	}
	return 0, ErrNoFreeWorker
}

// Worker returns the leased id.
func (l *Lease) Worker() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.worker
}

// Owner returns the owner id written in the lease key.
func (l *Lease) Owner() string { return l.opts.Owner }

func (l *Lease) renew(base context.Context) {
	defer close(l.done)
	tick := time.NewTicker(l.opts.TTL / 3)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(base, l.opts.TTL/3)
		err := l.renewOnce(ctx)
		cancel()
		switch {
		case err != nil && !failing:
			failing = true
			l.opts.Warn("cannot renew the snowflake worker lease; keeping the worker id and retrying", "worker", l.Worker(), "error", err)
		case err == nil && failing:
			failing = false
			l.opts.Info("snowflake worker lease renewed again", "worker", l.Worker())
		}
	}
}

// renewOnce extends the lease, or takes one again when it was lost.
func (l *Lease) renewOnce(ctx context.Context) error {
	l.mu.Lock()
	w, held := l.worker, l.held
	l.mu.Unlock()
	if held {
		ok, err := l.store.RenewLease(ctx, LeaseKeyPrefix+strconv.Itoa(w), l.opts.Owner, l.opts.TTL)
		if err != nil || ok {
			return err
		}
		l.opts.Warn("the snowflake worker lease was lost; taking one again", "worker", w)
	}
	nw, err := l.take(ctx, w)
	if err != nil {
		l.mu.Lock()
		l.held = false
		l.mu.Unlock()
		return err
	}
	l.mu.Lock()
	l.worker, l.held = nw, true
	l.mu.Unlock()
	if nw != w {
		l.opts.Warn("snowflake worker id moved to a free one", "from", w, "to", nw)
		if err := l.opts.Generator.SetWorker(nw); err != nil {
			return err
		}
		if l.opts.OnChange != nil {
			l.opts.OnChange(nw)
		}
	}
	return nil
}

// Release stops renewing and deletes the lease (when still held), so
// another replica can take the id at once.
func (l *Lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		w, held := l.worker, l.held
		l.mu.Unlock()
		if held {
			err = l.store.ReleaseLease(ctx, LeaseKeyPrefix+strconv.Itoa(w), l.opts.Owner)
		}
	})
	return err
}
