// Package session keeps login sessions: one sys_session row per login (every
// login method), refresh-token rotation with reuse detection, revocation,
// the concurrency policy, and the cached "is this session still active"
// answer that every protected request asks.
//
// Refresh tokens (RFC 9700 §4.14.2, ASVS 5 10.4.5). Each session has a
// lineage of refresh tokens in sys_session_token; only their SHA-256 is
// stored. A refresh exchanges the presented token for a new one: the
// presented row is marked rotated by a compare-and-swap (UPDATE ... WHERE
// rotated_at IS NULL, success only when one row changed) inside the
// transaction that inserts its successor, so of any number of concurrent
// refreshes of one token exactly one rotates it, on every dialect. A rotated
// token presented again is reuse: the whole session is revoked, which kills
// every token of it, the newest included. The one exception is the grace
// window (Options.RefreshGrace, from Service:Security:Session:
// RefreshGraceSeconds): within it, the immediately previous token (the one
// whose successor has not been rotated yet) is honoured once more with a
// pair of its own, and both pairs keep working, so two tabs refreshing
// together do not log each other out. A second extra use, or any use after
// the window, is reuse. With RefreshGrace 0 the rule is strict.
//
// Lifetimes. A session ends at login + NewSession.RefreshTTL
// (sys.security.session.refreshMinutes, capped by the caller at
// Service:Security:Session:AbsoluteHours): refreshing never extends it
// (ASVS 5 10.4.8, an absolute refresh-token lifetime).
//
// Policies at login (Create): NewSession.Single revokes the user's other
// sessions (reason "single"), NewSession.MaxConcurrent the oldest beyond
// the limit (reason "concurrency"); both run after the new session is
// committed and revoke through the same path as a logout, so the next
// request of a revoked session on any replica sharing the cache is refused.
//
// Idle timeout (Options.Idle, Service:Security:Session:IdleMinutesNormal;
// Options.IdleMFA, IdleMinutesMfa, for the sessions whose login verified a
// second factor — Idle below is the session's own, T follows the shorter).
// Activity is last_seen_time, written by the miss path of State at most
// once per touch interval T = min(Idle/4, 1 minute) per session (a
// conditional UPDATE, so replicas missing together write once). With Idle
// on, every active mark is trusted for at most T and never past
// last_seen_time + Idle, so each active session misses (one read, at most
// one write) about once per T per replica and a cache hit still touches no
// database. Requests served by hits between two writes are not recorded:
// last_seen_time lags the real last request by less than T, so a session is
// refused after between Idle - T and Idle without a request. The miss path
// and Refresh refuse a session whose last_seen_time is more than Idle ago
// and revoke it (reason "idle", a conditional UPDATE that re-checks
// last_seen_time in the database, the authoritative value, so a touch by
// another replica meanwhile wins). A refresh is not activity: it neither
// revives an idle session nor extends one.
//
// Active check. Active answers from the cache (key KeyPrefix+sid; both
// "active" and "revoked" answers are cached) without touching the database;
// a miss reads the row. Revocation writes the database first and then
// replaces the cache entry, so the very next request on any replica sharing
// the cache is refused. last_seen_time is written on the miss path only,
// at most once per minute per session (once per touch interval with an idle
// timeout). An active mark carries its own deadline, never past the
// session's absolute end or idle end, so no copy of it (a replica's near
// cache included) keeps a session usable after either.
package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/syssessiontoken"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/logging"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/telemetry"
	"github.com/adminkernel/kernel/host/token"
)

// Login methods recorded in sys_session.login_method. External logins
// record the provider code.
const (
	MethodPassword = "password"
	MethodSMS      = "sms"
)

// Revoke reasons written by this package. Callers pass their own reason to
// Revoke and RevokeUser (at most 64 characters are kept).
const (
	ReasonReuse       = "reuse"
	ReasonConcurrency = "concurrency"
	ReasonSingle      = "single"
	ReasonIdle        = "idle"
	ReasonSelf        = "revoked by the user"
)

const (
	// KeyPrefix prefixes the cache keys of active marks: KeyPrefix + sid.
	KeyPrefix = "sess:"
	// DefaultCacheTTL is how long an active mark is trusted when
	// Options.CacheTTL is 0. A replica with its own in-process cache sees a
	// revocation made on another replica after at most this long.
	DefaultCacheTTL = time.Minute
	// LastSeenEvery is the granularity of last_seen_time (without an idle
	// timeout; with one, TouchEvery).
	LastSeenEvery = time.Minute
	// ListLimit caps ListUser.
	ListLimit = 100
	// DefaultPageSize is used by Online when the filter's Limit is 0.
	DefaultPageSize = 20

	maxSessionIDLen = 64
	maxRefreshLen   = 512
	maxMethodLen    = 32
	maxIPLen        = 64
	maxUserAgentLen = 512
	maxReasonLen    = 64
)

// Session marks: the cached answer of Active. A revoked mark is one byte;
// an active mark is '1' followed by the mark's own deadline (Unix
// milliseconds, big-endian), so that a copy of it, wherever it is kept (a
// replica-local near cache included), is never trusted past the deadline
// its writer gave it. A mark of any other shape is a miss.
//
// An active session whose user must change the password is marked with 'P'
// instead of '1' (same layout): the flag rides on the mark every protected
// request reads anyway, so enforcing it costs no database read on a hit.
const (
	markActiveByte   = '1'
	markPasswordByte = 'P'
	markRevokedByte  = '0'
	activeMarkLen    = 9
)

// State is the answer of State.
type State uint8

// Session states.
const (
	// Inactive: revoked, expired or unknown.
	Inactive State = iota
	// Active: usable.
	Active
	// PasswordChange: usable only to change the password (the user's
	// mustChangePassword was set at login).
	PasswordChange
)

func stateOf(active, mustChange bool) State {
	switch {
	case !active:
		return Inactive
	case mustChange:
		return PasswordChange
	default:
		return Active
	}
}

var (
	markRevoked = []byte{markRevokedByte}

	// errLost: a compare-and-swap found the row already changed.
	errLost = errors.New("session: lost the race for the refresh token")
	// errInactive: the session was revoked or expired meanwhile.
	errInactive = errors.New("session: the session is no longer active")
)

// Options configures a Service.
type Options struct {
	// RefreshGrace is the window after a rotation in which the previous
	// refresh token is honoured once more (0 = strict).
	RefreshGrace time.Duration
	// Idle ends a session without a request for this long (0 = off; see the
	// package comment for the granularity).
	Idle time.Duration
	// IdleMFA is Idle for the sessions whose login verified a second
	// factor (Service:Security:Session:IdleMinutesMfa); 0 = Idle.
	IdleMFA time.Duration
	// CacheTTL bounds how long an active mark is cached (0 =
	// DefaultCacheTTL). Revoked marks are cached as long.
	CacheTTL time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Log receives reuse detections and cache failures (nil = discard).
	Log hclog.Logger
	// NextID issues row ids (the kernel's snowflake generator); required:
	// a rotation needs the id of the next token before inserting it.
	NextID func() int64
	// Events receives a SessionsEnded event after sessions are revoked
	// (nil = none): the realtime hub closes their connections, on every
	// replica through the relay (host/bus).
	Events *events.Bus
	// Metrics counts reuse detections (nil = none).
	Metrics *telemetry.Metrics
}

// Service manages sessions. It is safe for concurrent use.
type Service struct {
	client   *ent.Client
	store    cache.Store
	grace    time.Duration
	idle     time.Duration // sessions without a second factor
	idleMFA  time.Duration // sessions with one
	touch    time.Duration // how often last_seen_time is written
	cacheTTL time.Duration
	now      func() time.Time
	log      hclog.Logger
	nextID   func() int64
	events   *events.Bus
	metrics  *telemetry.Metrics
}

// New returns a Service over the kernel's tables and cache.
func New(client *ent.Client, store cache.Store, opts Options) *Service {
	s := &Service{client: client, store: store, grace: max(opts.RefreshGrace, 0), idle: max(opts.Idle, 0),
		cacheTTL: opts.CacheTTL, now: opts.Now, log: opts.Log, nextID: opts.NextID, events: opts.Events, metrics: opts.Metrics}
	s.idleMFA = s.idle
	if opts.IdleMFA > 0 {
		s.idleMFA = opts.IdleMFA
	}
	// The touch interval serves the shorter of the two timeouts.
	switch {
	case s.idle == 0:
		s.touch = TouchEvery(s.idleMFA)
	case s.idleMFA == 0:
		s.touch = TouchEvery(s.idle)
	default:
		s.touch = TouchEvery(min(s.idle, s.idleMFA))
	}
	if s.nextID == nil {
		panic("session: Options.NextID is required")
	}
	if s.cacheTTL <= 0 {
		s.cacheTTL = DefaultCacheTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	return s
}

func (s *Service) clock() time.Time { return s.now().UTC() }

// TouchEvery is how often a session's last_seen_time is written: with an
// idle timeout min(idle/4, LastSeenEvery) (at least a second), else
// LastSeenEvery. It is the granularity of the idle timeout.
func TouchEvery(idle time.Duration) time.Duration {
	if idle <= 0 {
		return LastSeenEvery
	}
	return max(min(idle/4, LastSeenEvery), time.Second)
}

// idleFor is the idle timeout of a session with (mfa) or without a second
// factor at login (0 = none).
func (s *Service) idleFor(mfa bool) time.Duration {
	if mfa {
		return s.idleMFA
	}
	return s.idle
}

// markTTL is how long an active answer may be trusted: CacheTTL, but never
// past the session's absolute end (exp) and, with an idle timeout, never
// longer than the touch interval nor past lastSeen + its idle timeout.
func (s *Service) markTTL(now, exp, lastSeen time.Time, mfa bool) time.Duration {
	ttl := min(s.cacheTTL, exp.Sub(now))
	if idle := s.idleFor(mfa); idle > 0 {
		ttl = min(ttl, s.touch, lastSeen.Add(idle).Sub(now))
	}
	return ttl
}

// idleOut reports whether a session last seen at lastSeen is past its idle
// timeout at now.
func (s *Service) idleOut(mfa bool, lastSeen, now time.Time) bool {
	idle := s.idleFor(mfa)
	return idle > 0 && now.Sub(lastSeen) > idle
}

// expireIdle revokes an idle session (reason "idle") unless the database
// says otherwise: the UPDATE re-checks last_seen_time, so a request that
// another replica recorded meanwhile keeps the session. It reports whether
// the session is over (revoked now or before).
func (s *Service) expireIdle(ctx context.Context, sid string, mfa bool, now time.Time) (bool, error) {
	n, err := s.client.SysSession.Update().
		Where(syssession.SessionID(sid), syssession.RevokedAtIsNil(), syssession.LastSeenTimeLT(now.Add(-s.idleFor(mfa)))).
		SetRevokedAt(now).
		SetRevokeReason(ReasonIdle).
		Save(ctx)
	if err != nil {
		return false, fmt.Errorf("session: end an idle session: %w", err)
	}
	if n == 1 {
		err := s.forget(ctx, []string{sid})
		s.ended([]string{sid})
		return true, err
	}
	row, err := s.client.SysSession.Query().
		Where(syssession.SessionID(sid)).
		Select(syssession.FieldRevokedAt).
		Only(ctx)
	if ent.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("session: read: %w", err)
	}
	return row.RevokedAt != nil, nil
}

// NewSession describes a login.
type NewSession struct {
	UserID int64
	// Method is "password", "sms" or the external provider code.
	Method string
	// MFA records that a second factor was verified.
	MFA bool
	// MustChangePassword restricts the session to changing the password
	// (see State) until PasswordChanged.
	MustChangePassword bool
	// IP is the client address; UserAgent the raw User-Agent header (cut
	// to 512 characters). Both are copied.
	IP        string
	UserAgent string
	// MaxConcurrent is the concurrency policy: at most this many active
	// sessions per user, the oldest are revoked (0 = unlimited).
	MaxConcurrent int
	// Single is the single-session policy (Service:Security:Session:Mode
	// Single): the user's other sessions are revoked (reason "single"). It
	// overrides MaxConcurrent.
	Single bool
	// RefreshTTL is the session's absolute lifetime, and so the lifetime
	// of its refresh tokens (sys.security.session.refreshMinutes).
	RefreshTTL time.Duration
}

// Issued is the result of Create.
type Issued struct {
	SessionID string
	// RefreshToken is the plain refresh token: returned once, never stored.
	RefreshToken     string
	RefreshExpiresAt time.Time
}

// Refreshed is the result of Refresh.
type Refreshed struct {
	SessionID        string
	UserID           int64
	RefreshToken     string
	RefreshExpiresAt time.Time
}

// Info describes a session for the online list (the contract's
// OnlineSessionItem) and a user's own list (MySessionItem without
// isCurrent).
type Info struct {
	SessionID string              `json:"sessionId"`
	UserID    int64               `json:"userId"`
	Account   string              `json:"account"`
	IP        *string             `json:"ip"`
	UserAgent *string             `json:"userAgent"`
	LoginTime request.EntityStamp `json:"loginTime"`
	ExpiresAt request.EntityStamp `json:"expiresAt"`

	// Not part of the contract's items.
	LoginMethod  string    `json:"-"`
	MFA          bool      `json:"-"`
	LastSeenTime time.Time `json:"-"`
}

// OnlineFilter selects a page of active sessions.
type OnlineFilter struct {
	// UserID restricts the list to one user (nil = everyone).
	UserID *int64
	// Users, when not nil, restricts the list to the sessions of the users
	// these predicates select (a caller's data scope, datascope.Scope.Users).
	Users []predicate.SysUser
	// Offset and Limit page the list (Limit 0 = DefaultPageSize).
	Offset int
	Limit  int
}

// Create records a login and returns its session id and first refresh
// token, then applies the concurrency policy (the new session counts; the
// oldest active sessions beyond MaxConcurrent are revoked).
func (s *Service) Create(ctx context.Context, in NewSession) (Issued, error) {
	if in.UserID <= 0 || strings.TrimSpace(in.Method) == "" || in.RefreshTTL <= 0 {
		return Issued{}, errors.New("session: Create needs a user, a login method and a positive RefreshTTL")
	}
	plain, hash, err := token.NewRefreshToken()
	if err != nil {
		return Issued{}, err
	}
	now := s.clock()
	exp := now.Add(in.RefreshTTL)
	var sid string
	err = s.tx(ctx, func(tx *ent.Tx) error {
		row, err := tx.SysSession.Create().
			SetUserID(in.UserID).
			SetLoginMethod(clean(in.Method, maxMethodLen)).
			SetMfa(in.MFA).
			SetMustChangePassword(in.MustChangePassword).
			SetNillableIP(optional(clean(in.IP, maxIPLen))).
			SetNillableUserAgent(optional(clean(in.UserAgent, maxUserAgentLen))).
			SetCreateTime(now).
			SetLastSeenTime(now).
			SetExpiresAt(exp).
			SetRefreshTokenHash(hash).
			SetRefreshExpiresAt(exp).
			Save(ctx)
		if err != nil {
			return err
		}
		sid = row.SessionID
		return tx.SysSessionToken.Create().
			SetSessionID(sid).
			SetTokenHash(hash).
			SetCreateTime(now).
			SetExpiresAt(exp).
			Exec(ctx)
	})
	if err != nil {
		return Issued{}, fmt.Errorf("session: create: %w", err)
	}
	s.mark(ctx, sid, stateOf(true, in.MustChangePassword), s.markTTL(now, exp, now, in.MFA))
	limit, reason := in.MaxConcurrent, ReasonConcurrency
	if in.Single {
		limit, reason = 1, ReasonSingle
	}
	if limit > 0 {
		if err := s.enforceLimit(ctx, in.UserID, limit, reason, now); err != nil {
			return Issued{}, err
		}
	}
	return Issued{SessionID: sid, RefreshToken: plain, RefreshExpiresAt: exp}, nil
}

// enforceLimit revokes the user's oldest active sessions beyond limit. It
// runs after the new session is committed, so of two concurrent logins the
// later one always sees both and the policy converges (on the newest
// logins).
func (s *Service) enforceLimit(ctx context.Context, userID int64, limit int, reason string, now time.Time) error {
	sids, err := s.client.SysSession.Query().
		Where(syssession.UserID(userID), syssession.RevokedAtIsNil(), syssession.ExpiresAtGT(now)).
		Order(ent.Desc(syssession.FieldCreateTime), ent.Desc(syssession.FieldID)).
		Select(syssession.FieldSessionID).
		Strings(ctx)
	if err != nil {
		return fmt.Errorf("session: apply the concurrency policy: %w", err)
	}
	if len(sids) <= limit {
		return nil
	}
	if _, err := s.revoke(ctx, sids[limit:], reason); err != nil {
		return fmt.Errorf("session: apply the concurrency policy: %w", err)
	}
	return nil
}

// Refresh exchanges a refresh token for a new one (see the package
// comment). Any unknown, expired, rotated or revoked token, and any token of
// an expired or revoked session, gives errcode.RefreshTokenInvalid; reuse
// also revokes the session.
func (s *Service) Refresh(ctx context.Context, plain string) (Refreshed, error) {
	invalid := errcode.New(errcode.RefreshTokenInvalid)
	if plain == "" || len(plain) > maxRefreshLen {
		return Refreshed{}, invalid
	}
	hash := token.HashRefreshToken(plain)
	now := s.clock()
	tok, err := s.client.SysSessionToken.Query().Where(syssessiontoken.TokenHash(hash)).Only(ctx)
	if ent.IsNotFound(err) {
		return Refreshed{}, invalid
	}
	if err != nil {
		return Refreshed{}, fmt.Errorf("session: refresh: %w", err)
	}
	sess, err := s.client.SysSession.Query().Where(syssession.SessionID(tok.SessionID)).Only(ctx)
	if ent.IsNotFound(err) {
		return Refreshed{}, invalid
	}
	if err != nil {
		return Refreshed{}, fmt.Errorf("session: refresh: %w", err)
	}
	if sess.RevokedAt != nil || !sess.ExpiresAt.After(now) || !tok.ExpiresAt.After(now) {
		return Refreshed{}, invalid
	}
	if s.idleOut(sess.Mfa, sess.LastSeenTime, now) {
		over, err := s.expireIdle(ctx, sess.SessionID, sess.Mfa, now)
		if err != nil {
			return Refreshed{}, fmt.Errorf("session: refresh: %w", err)
		}
		if over {
			return Refreshed{}, invalid
		}
	}

	if tok.RotatedAt == nil {
		r, err := s.rotate(ctx, sess, tok, now)
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, errInactive):
			return Refreshed{}, invalid
		case !errors.Is(err, errLost):
			return Refreshed{}, fmt.Errorf("session: refresh: %w", err)
		}
		// Someone rotated it first: it is a rotated token now.
		if tok, err = s.client.SysSessionToken.Get(ctx, tok.ID); err != nil {
			return Refreshed{}, fmt.Errorf("session: refresh: %w", err)
		}
	}

	if s.inGrace(ctx, tok, now) {
		r, err := s.graceIssue(ctx, sess, tok, now)
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, errInactive):
			return Refreshed{}, invalid
		case !errors.Is(err, errLost):
			return Refreshed{}, fmt.Errorf("session: refresh: %w", err)
		}
	}

	// Reuse of a rotated token: revoke the whole session.
	logging.Ctx(ctx, s.log).Warn("refresh token reuse detected: session revoked", "user_id", sess.UserID, "session", sess.ID)
	s.metrics.ReuseDetected()
	if _, err := s.revoke(ctx, []string{sess.SessionID}, ReasonReuse); err != nil {
		return Refreshed{}, fmt.Errorf("session: revoke after refresh-token reuse: %w", err)
	}
	return Refreshed{}, invalid
}

// inGrace reports whether a rotated token may be honoured once more: the
// grace window is on, the rotation is recent, the extra use is still
// available, and the token is the immediately previous one (its successor
// has not been rotated in turn).
func (s *Service) inGrace(ctx context.Context, tok *ent.SysSessionToken, now time.Time) bool {
	if s.grace <= 0 || tok.RotatedAt == nil || tok.GraceUsedAt != nil || tok.ReplacedBy == nil {
		return false
	}
	if now.Sub(*tok.RotatedAt) > s.grace {
		return false
	}
	next, err := s.client.SysSessionToken.Query().
		Where(syssessiontoken.ID(*tok.ReplacedBy)).
		Select(syssessiontoken.FieldRotatedAt).
		Only(ctx)
	return err == nil && next.RotatedAt == nil
}

// rotate marks tok rotated (compare-and-swap) and issues its successor in
// one transaction.
func (s *Service) rotate(ctx context.Context, sess *ent.SysSession, tok *ent.SysSessionToken, now time.Time) (Refreshed, error) {
	return s.issue(ctx, sess, tok, now, func(tx *ent.Tx, nextID int64) (int, error) {
		return tx.SysSessionToken.Update().
			Where(syssessiontoken.ID(tok.ID), syssessiontoken.RotatedAtIsNil()).
			SetRotatedAt(now).
			SetReplacedBy(nextID).
			Save(ctx)
	})
}

// graceIssue uses tok's one extra exchange inside the grace window
// (compare-and-swap on grace_used_at) and issues a sibling of its
// successor.
func (s *Service) graceIssue(ctx context.Context, sess *ent.SysSession, tok *ent.SysSessionToken, now time.Time) (Refreshed, error) {
	return s.issue(ctx, sess, tok, now, func(tx *ent.Tx, _ int64) (int, error) {
		return tx.SysSessionToken.Update().
			Where(syssessiontoken.ID(tok.ID), syssessiontoken.GraceUsedAtIsNil(),
				syssessiontoken.RotatedAtGTE(now.Add(-s.grace))).
			SetGraceUsedAt(now).
			Save(ctx)
	})
}

// issue runs claim (which must change exactly one row of tok, or the race
// is lost) and, in the same transaction, checks that the session is still
// active, records the new token on it and inserts the new token's row.
func (s *Service) issue(ctx context.Context, sess *ent.SysSession, tok *ent.SysSessionToken, now time.Time,
	claim func(tx *ent.Tx, nextID int64) (int, error)) (Refreshed, error) {
	plain, hash, err := token.NewRefreshToken()
	if err != nil {
		return Refreshed{}, err
	}
	nextID := s.nextID()
	exp := tok.ExpiresAt
	err = s.tx(ctx, func(tx *ent.Tx) error {
		n, err := claim(tx, nextID)
		if err != nil {
			return err
		}
		if n != 1 {
			return errLost
		}
		n, err = tx.SysSession.Update().
			Where(syssession.ID(sess.ID), syssession.RevokedAtIsNil(), syssession.ExpiresAtGT(now)).
			SetRefreshTokenHash(hash).
			SetRefreshExpiresAt(exp).
			SetPrevRefreshTokenHash(tok.TokenHash).
			SetRefreshRotatedAt(now).
			Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errInactive
		}
		return tx.SysSessionToken.Create().
			SetID(nextID).
			SetSessionID(sess.SessionID).
			SetTokenHash(hash).
			SetParentID(tok.ID).
			SetCreateTime(now).
			SetExpiresAt(exp).
			Exec(ctx)
	})
	if err != nil {
		return Refreshed{}, err
	}
	return Refreshed{SessionID: sess.SessionID, UserID: sess.UserID, RefreshToken: plain, RefreshExpiresAt: exp}, nil
}

// Active reports whether a session is still usable: not revoked and not
// expired (a PasswordChange session is active). See State.
func (s *Service) Active(ctx context.Context, sid string) (bool, error) {
	st, err := s.State(ctx, sid)
	return st != Inactive, err
}

// State reports whether a session is still usable, and whether only to
// change the password. A cache hit answers without touching the database. A
// miss (or a cache failure) reads the row, refreshes last_seen_time when it
// is older than LastSeenEvery, and caches the answer. Database errors are
// returned: callers fail closed.
func (s *Service) State(ctx context.Context, sid string) (State, error) {
	if sid == "" || len(sid) > maxSessionIDLen {
		return Inactive, nil
	}
	v, ok, err := cache.Peek(ctx, s.store, KeyPrefix+sid)
	switch {
	case err != nil:
		s.log.Debug("session cache read failed; reading the database", "error", err)
	case !ok:
	case len(v) == 1 && v[0] == markRevokedByte:
		return Inactive, nil
	case len(v) == activeMarkLen && (v[0] == markActiveByte || v[0] == markPasswordByte):
		if s.clock().UnixMilli() < int64(binary.BigEndian.Uint64(v[1:])) { //nolint:gosec // written by mark from a positive UnixMilli
			if v[0] == markPasswordByte {
				return PasswordChange, nil
			}
			return Active, nil
		}
	}
	return s.load(ctx, sid)
}

func (s *Service) load(ctx context.Context, sid string) (State, error) {
	now := s.clock()
	row, err := s.client.SysSession.Query().
		Where(syssession.SessionID(sid)).
		Select(syssession.FieldRevokedAt, syssession.FieldExpiresAt, syssession.FieldLastSeenTime, syssession.FieldMustChangePassword, syssession.FieldMfa).
		Only(ctx)
	if ent.IsNotFound(err) {
		s.mark(ctx, sid, Inactive, s.cacheTTL)
		return Inactive, nil
	}
	if err != nil {
		return Inactive, fmt.Errorf("session: read: %w", err)
	}
	if row.RevokedAt != nil || !row.ExpiresAt.After(now) {
		s.mark(ctx, sid, Inactive, s.cacheTTL)
		return Inactive, nil
	}
	if s.idleOut(row.Mfa, row.LastSeenTime, now) {
		over, err := s.expireIdle(ctx, sid, row.Mfa, now)
		if err != nil {
			return Inactive, err
		}
		if over {
			return Inactive, nil
		}
		// Another replica recorded a request meanwhile: the session lives,
		// and its touch is at most a moment old.
		row.LastSeenTime = now
	}
	lastSeen := row.LastSeenTime
	if now.Sub(row.LastSeenTime) >= s.touch {
		// Conditional, so replicas missing together write once.
		if err := s.client.SysSession.Update().
			Where(syssession.SessionID(sid), syssession.LastSeenTimeLT(now.Add(-s.touch))).
			SetLastSeenTime(now).
			Exec(ctx); err != nil {
			s.log.Warn("updating a session's last-seen time failed", "error", err)
		} else {
			lastSeen = now
		}
	}
	st := stateOf(true, row.MustChangePassword)
	s.mark(ctx, sid, st, s.markTTL(now, row.ExpiresAt, lastSeen, row.Mfa))
	// A revocation (or a password change) committed between the read above
	// and the mark would be hidden by the mark: look again, now that the
	// mark is written.
	again, err := s.client.SysSession.Query().
		Where(syssession.SessionID(sid)).
		Select(syssession.FieldRevokedAt, syssession.FieldMustChangePassword).
		Only(ctx)
	if err != nil {
		_ = s.store.Delete(ctx, KeyPrefix+sid)
		return Inactive, fmt.Errorf("session: read: %w", err)
	}
	if again.RevokedAt != nil {
		s.mark(ctx, sid, Inactive, s.cacheTTL)
		return Inactive, nil
	}
	if again.MustChangePassword != row.MustChangePassword {
		// Changed meanwhile: leave it to the next request to cache.
		_ = s.store.Delete(ctx, KeyPrefix+sid)
		return stateOf(true, again.MustChangePassword), nil
	}
	return st, nil
}

// PasswordChanged lifts the password-change restriction from every session
// of the user: the next request of each is a full session again.
func (s *Service) PasswordChanged(ctx context.Context, userID int64) error {
	now := s.clock()
	sids, err := s.client.SysSession.Query().
		Where(syssession.UserID(userID), syssession.MustChangePassword(true), syssession.RevokedAtIsNil(), syssession.ExpiresAtGT(now)).
		Select(syssession.FieldSessionID).
		Strings(ctx)
	if err != nil {
		return fmt.Errorf("session: lift the password-change restriction of user %d: %w", userID, err)
	}
	if len(sids) == 0 {
		return nil
	}
	if err := s.client.SysSession.Update().
		Where(syssession.SessionIDIn(sids...)).
		SetMustChangePassword(false).
		Exec(ctx); err != nil {
		return fmt.Errorf("session: lift the password-change restriction of user %d: %w", userID, err)
	}
	keys := make([]string, len(sids))
	for i, sid := range sids {
		keys[i] = KeyPrefix + sid
	}
	if err := s.store.Delete(ctx, keys...); err != nil {
		// The restriction then lasts until the marks expire (CacheTTL).
		s.log.Warn("clearing the cache of sessions after a password change failed", "error", err)
	}
	return nil
}

// mark caches an answer for sid (best effort: a lost mark is a later miss).
func (s *Service) mark(ctx context.Context, sid string, st State, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	val := markRevoked
	if st != Inactive {
		val = make([]byte, activeMarkLen)
		val[0] = markActiveByte
		if st == PasswordChange {
			val[0] = markPasswordByte
		}
		binary.BigEndian.PutUint64(val[1:], uint64(s.clock().Add(ttl).UnixMilli())) //nolint:gosec // a positive UnixMilli
	}
	if err := s.store.Set(ctx, KeyPrefix+sid, val, ttl); err != nil {
		s.log.Debug("session cache write failed", "error", err)
	}
}

// forget replaces the cache entries of revoked sessions: the stale entry
// is deleted (an error here is returned: a surviving "active" entry would
// keep the session usable), then the revoked answer is cached.
func (s *Service) forget(ctx context.Context, sids []string) error {
	if len(sids) == 0 {
		return nil
	}
	keys := make([]string, len(sids))
	for i, sid := range sids {
		keys[i] = KeyPrefix + sid
	}
	if err := s.store.Delete(ctx, keys...); err != nil {
		if !errors.Is(err, cache.ErrUnavailable) { // an outage is logged once, by the cache's tracker
			s.log.Error("clearing the cache of revoked sessions failed", "sessions", len(sids), "error", err)
		}
		return fmt.Errorf("session: the sessions are revoked but their cache entries could not be cleared: %w", err)
	}
	if s.cacheTTL <= 0 {
		return nil
	}
	marks := make([]cache.Entry, len(sids))
	for i, key := range keys {
		marks[i] = cache.Entry{Key: key, Val: markRevoked}
	}
	// One round trip for all of them (a user with 1 000 sessions:
	// docs/design/benchmarks.md, force-logout); best effort like mark.
	if err := cache.SetMany(ctx, s.store, marks, s.cacheTTL); err != nil {
		s.log.Debug("session cache write failed", "sessions", len(sids), "error", err)
	}
	return nil
}

// revoke marks the given sessions revoked (those still active) and clears
// their cache entries. It returns how many rows changed.
func (s *Service) revoke(ctx context.Context, sids []string, reason string) (int, error) {
	if len(sids) == 0 {
		return 0, nil
	}
	n, err := s.client.SysSession.Update().
		Where(syssession.SessionIDIn(sids...), syssession.RevokedAtIsNil()).
		SetRevokedAt(s.clock()).
		SetRevokeReason(clean(reason, maxReasonLen)).
		Save(ctx)
	if err != nil {
		return 0, err
	}
	err = s.forget(ctx, sids)
	if n > 0 {
		s.ended(sids)
	}
	return n, err
}

// ended tells the realtime hub (every replica's) that the sessions are
// over; nil means "re-check every connection".
func (s *Service) ended(sids []string) {
	s.events.Publish(events.SessionsEnded{SessionIDs: sids})
}

// Revoke ends one session (logout, force-logout). Revoking a revoked
// session succeeds; an unknown session gives errcode.SessionNotFound.
func (s *Service) Revoke(ctx context.Context, sid, reason string) error {
	if sid == "" || len(sid) > maxSessionIDLen {
		return errcode.New(errcode.SessionNotFound)
	}
	n, err := s.revoke(ctx, []string{sid}, reason)
	if err != nil {
		return fmt.Errorf("session: revoke: %w", err)
	}
	if n == 0 {
		ok, err := s.Exists(ctx, sid)
		if err != nil {
			return err
		}
		if !ok {
			return errcode.New(errcode.SessionNotFound)
		}
	}
	return nil
}

// RevokeUser ends every active session of a user (account disabled,
// password changed or reset), except exceptSID when it is not empty. It
// returns how many sessions were revoked.
func (s *Service) RevokeUser(ctx context.Context, userID int64, reason, exceptSID string) (int, error) {
	now := s.clock()
	upd := s.client.SysSession.Update().Where(syssession.UserID(userID), syssession.RevokedAtIsNil())
	if exceptSID != "" {
		upd.Where(syssession.SessionIDNEQ(exceptSID))
	}
	n, err := upd.SetRevokedAt(now).SetRevokeReason(clean(reason, maxReasonLen)).Save(ctx)
	if err != nil {
		return 0, fmt.Errorf("session: revoke the sessions of user %d: %w", userID, err)
	}
	// Clear the cache of every revoked, unexpired session of the user: it
	// includes the ones just revoked, whatever their ids.
	sids, err := s.client.SysSession.Query().
		Where(syssession.UserID(userID), syssession.RevokedAtNotNil(), syssession.ExpiresAtGT(now)).
		Select(syssession.FieldSessionID).
		Strings(ctx)
	if err != nil {
		return n, fmt.Errorf("session: revoke the sessions of user %d: %w", userID, err)
	}
	err = s.forget(ctx, sids)
	if n > 0 && len(sids) > 0 {
		s.ended(sids)
	}
	return n, err
}

// RevokeOwn ends one of the caller's own sessions. A session that does not
// exist or belongs to someone else gives errcode.SessionNotFound.
func (s *Service) RevokeOwn(ctx context.Context, userID int64, sid string) error {
	if sid == "" || len(sid) > maxSessionIDLen {
		return errcode.New(errcode.SessionNotFound)
	}
	own, err := s.client.SysSession.Query().
		Where(syssession.SessionID(sid), syssession.UserID(userID)).
		Exist(ctx)
	if err != nil {
		return fmt.Errorf("session: revoke: %w", err)
	}
	if !own {
		return errcode.New(errcode.SessionNotFound)
	}
	if _, err := s.revoke(ctx, []string{sid}, ReasonSelf); err != nil {
		return fmt.Errorf("session: revoke: %w", err)
	}
	return nil
}

// Exists reports whether a session with this id was ever created.
func (s *Service) Exists(ctx context.Context, sid string) (bool, error) {
	if sid == "" || len(sid) > maxSessionIDLen {
		return false, nil
	}
	ok, err := s.client.SysSession.Query().Where(syssession.SessionID(sid)).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("session: read: %w", err)
	}
	return ok, nil
}

// UserOf returns the user a session belongs to; ok is false when no
// session with this id was ever created.
func (s *Service) UserOf(ctx context.Context, sid string) (userID int64, ok bool, err error) {
	if sid == "" || len(sid) > maxSessionIDLen {
		return 0, false, nil
	}
	row, err := s.client.SysSession.Query().Where(syssession.SessionID(sid)).
		Select(syssession.FieldUserID).First(ctx)
	if ent.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("session: read: %w", err)
	}
	return row.UserID, true, nil
}

// Online returns a page of active, unexpired sessions, newest login first,
// with the users' accounts, and the total count.
func (s *Service) Online(ctx context.Context, f OnlineFilter) ([]Info, int, error) {
	now := s.clock()
	q := s.client.SysSession.Query().Where(s.live(now)...)
	if f.UserID != nil {
		q.Where(syssession.UserID(*f.UserID))
	}
	if f.Users != nil {
		q.Where(userIn(f.Users))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("session: count online sessions: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	rows, err := q.Order(ent.Desc(syssession.FieldCreateTime), ent.Desc(syssession.FieldID)).
		Offset(max(f.Offset, 0)).Limit(limit).All(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("session: list online sessions: %w", err)
	}
	items := infos(rows)
	if err := s.fillAccounts(ctx, items); err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// ListUser returns a user's active, unexpired sessions, newest first, at
// most ListLimit. The caller marks the current one (its token's sid).
func (s *Service) ListUser(ctx context.Context, userID int64) ([]Info, error) {
	rows, err := s.client.SysSession.Query().
		Where(append(s.live(s.clock()), syssession.UserID(userID))...).
		Order(ent.Desc(syssession.FieldCreateTime), ent.Desc(syssession.FieldID)).
		Limit(ListLimit).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("session: list the sessions of user %d: %w", userID, err)
	}
	items := infos(rows)
	if err := s.fillAccounts(ctx, items); err != nil {
		return nil, err
	}
	return items, nil
}

// live selects the sessions that are usable at now: not revoked, not
// expired and, with an idle timeout, not idle (an idle session is revoked
// by its next request; until then the lists leave it out).
func (s *Service) live(now time.Time) []predicate.SysSession {
	ps := []predicate.SysSession{syssession.RevokedAtIsNil(), syssession.ExpiresAtGT(now)}
	if s.idle == s.idleMFA {
		if s.idle > 0 {
			ps = append(ps, syssession.LastSeenTimeGTE(now.Add(-s.idle)))
		}
	} else {
		fresh := func(mfa bool) predicate.SysSession {
			if idle := s.idleFor(mfa); idle > 0 {
				return syssession.And(syssession.Mfa(mfa), syssession.LastSeenTimeGTE(now.Add(-idle)))
			}
			return syssession.Mfa(mfa)
		}
		ps = append(ps, syssession.Or(fresh(false), fresh(true)))
	}
	return ps
}

// userIn selects the sessions whose user the predicates select, as
// user_id IN (SELECT id FROM sys_user WHERE ...): one query, however many
// users the scope covers.
func userIn(users []predicate.SysUser) predicate.SysSession {
	return func(s *sql.Selector) {
		t := sql.Table(sysuser.Table)
		sub := sql.Select(t.C(sysuser.FieldID)).From(t)
		for _, p := range users {
			p(sub)
		}
		s.Where(sql.In(s.C(syssession.FieldUserID), sub))
	}
}

func infos(rows []*ent.SysSession) []Info {
	out := make([]Info, len(rows))
	for i, r := range rows {
		out[i] = Info{
			SessionID:    r.SessionID,
			UserID:       r.UserID,
			IP:           r.IP,
			UserAgent:    r.UserAgent,
			LoginTime:    request.EntityStamp{Time: r.CreateTime},
			ExpiresAt:    request.EntityStamp{Time: r.ExpiresAt},
			LoginMethod:  r.LoginMethod,
			MFA:          r.Mfa,
			LastSeenTime: r.LastSeenTime,
		}
	}
	return out
}

func (s *Service) fillAccounts(ctx context.Context, items []Info) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(items))
	seen := make(map[int64]bool, len(items))
	for _, it := range items {
		if !seen[it.UserID] {
			seen[it.UserID] = true
			ids = append(ids, it.UserID)
		}
	}
	users, err := s.client.SysUser.Query().
		Where(sysuser.IDIn(ids...)).
		Select(sysuser.FieldID, sysuser.FieldAccount).
		All(ctx)
	if err != nil {
		return fmt.Errorf("session: read accounts: %w", err)
	}
	account := make(map[int64]string, len(users))
	for _, u := range users {
		account[u.ID] = u.Account
	}
	for i := range items {
		items[i].Account = account[items[i].UserID]
	}
	return nil
}

// purgeBatch is the number of session rows Purge handles per statement.
var purgeBatch = 500

// Purge deletes what ended sessions leave behind: the refresh-token rows of
// sessions that expired or were revoked (rows that only matter while a
// session lives, to recognise a replayed token), and the session rows
// themselves once they ended more than keep ago. It returns the numbers of
// session and token rows deleted.
//
// It walks the ended sessions in primary-key order, purgeBatch at a time,
// and deletes each batch with short statements of their own (no
// transaction around the whole): on a table of a million sessions no
// statement holds its locks for long, and memory stays flat however many
// rows have ended.
func (s *Service) Purge(ctx context.Context, keep time.Duration) (sessions, tokens int, err error) {
	now := s.clock()
	cut := now.Add(-max(keep, 0))
	var after int64
	for {
		rows, err := s.client.SysSession.Query().
			Where(syssession.IDGT(after), syssession.Or(syssession.RevokedAtNotNil(), syssession.ExpiresAtLTE(now))).
			Order(ent.Asc(syssession.FieldID)).
			Limit(purgeBatch).
			Select(syssession.FieldID, syssession.FieldSessionID, syssession.FieldRevokedAt, syssession.FieldExpiresAt).
			All(ctx)
		if err != nil {
			return sessions, tokens, fmt.Errorf("session: purge: %w", err)
		}
		if len(rows) == 0 {
			return sessions, tokens, nil
		}
		after = rows[len(rows)-1].ID
		sids := make([]string, len(rows))
		var old []int64
		for i, r := range rows {
			sids[i] = r.SessionID
			if (r.RevokedAt != nil && r.RevokedAt.Before(cut)) || r.ExpiresAt.Before(cut) {
				old = append(old, r.ID)
			}
		}
		n, err := s.client.SysSessionToken.Delete().Where(syssessiontoken.SessionIDIn(sids...)).Exec(ctx)
		if err != nil {
			return sessions, tokens, fmt.Errorf("session: purge: %w", err)
		}
		tokens += n
		if len(old) > 0 {
			n, err = s.client.SysSession.Delete().Where(syssession.IDIn(old...)).Exec(ctx)
			if err != nil {
				return sessions, tokens, fmt.Errorf("session: purge: %w", err)
			}
			sessions += n
		}
	}
}

// tx runs fn in a transaction (database.WithTx).
func (s *Service) tx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	return database.WithTx(ctx, s.client, fn)
}

// clean copies s (callers may pass strings that alias a request buffer),
// keeps valid UTF-8 without control characters (PostgreSQL refuses NUL and
// invalid UTF-8) and cuts it to n characters.
func clean(s string, n int) string {
	var b strings.Builder
	b.Grow(min(len(s), n*utf8.UTFMax))
	count := 0
	for _, r := range strings.TrimSpace(s) {
		if count == n {
			break
		}
		if r == utf8.RuneError || unicode.IsControl(r) {
			continue
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DeleteUser removes every session of userID and their refresh tokens
// inside tx: the user is purged for good (module.ForgetUser; their
// sessions were revoked when the user was deleted).
func DeleteUser(ctx context.Context, tx *ent.Tx, userID int64) error {
	sids, err := tx.SysSession.Query().Where(syssession.UserID(userID)).Select(syssession.FieldSessionID).Strings(ctx)
	if err != nil {
		return err
	}
	for len(sids) > 0 {
		batch := sids[:min(len(sids), 500)]
		sids = sids[len(batch):]
		if _, err := tx.SysSessionToken.Delete().Where(syssessiontoken.SessionIDIn(batch...)).Exec(ctx); err != nil {
			return err
		}
	}
	_, err = tx.SysSession.Delete().Where(syssession.UserID(userID)).Exec(ctx)
	return err
}
