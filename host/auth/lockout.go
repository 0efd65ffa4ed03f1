package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/telemetry"
)

// Lockout (docs/design/security.md, "Brute force and rate limits").
//
// Failures are counted per subject: "u<id>" for an existing account, or
// "n<lower-cased name>" for a name no live user has, so that both answer
// alike. Three counters, all cache counters with a TTL (exempt from
// eviction):
//
//   - per (subject, client): at maxFailCount failures within lockMinutes the
//     pair is locked for lockMinutes (40004). Only that client is refused;
//     the account's owner logs in from anywhere else.
//   - per subject across clients: from accountCaptchaThreshold failures
//     within lockMinutes (a fixed window), every login of the subject, from
//     every client, needs a captcha answer (40029 when absent). Attempts
//     refused because their pair is locked count here too.
//   - an epoch per subject: part of the other keys, so Unlock (an
//     administrator's password reset, `adminkernel user unlock`) retires
//     every pair of the subject at once without listing them.
//
// A success from a client clears that pair only. The account-wide counter
// runs out with its window: a success by the owner must not reset it, or an
// attacker interleaving with the owner's logins would get a fresh set of
// captcha-free guesses after each of them.
const (
	lockPrefix      = "lk:"
	epochTTL        = 7 * 24 * time.Hour
	maxLockMinutes  = 24 * 60
	clientUnknown   = "unknown"
	subjectUser     = "u"
	subjectUnknown  = "n"
	keyEpoch        = "e:"
	keyPairFailures = "f:"
	keyPairLock     = "l:"
	keyAccount      = "a:"
)

// lockPolicy is the runtime lockout policy (sys.security.loginLock.*).
type lockPolicy struct {
	maxFail   int // per (account, client); <= 0 = no lockout
	minutes   int // lock length and counting window
	captchaAt int // account-wide failures from which a captcha is needed; <= 0 = never
}

func (p lockPolicy) window() time.Duration { return time.Duration(p.minutes) * time.Minute }

// lockState is what a login needs to know before checking the password.
type lockState struct {
	locked      time.Duration // > 0: the pair is locked for this long
	needCaptcha bool
}

// lockout works on the counters of one subject seen from one client.
type lockout struct {
	store   cache.Store
	subject string
	client  string
	epoch   string
	metrics *telemetry.Metrics // counts the locks fail sets (nil = none)
}

// subjectOf is the counter subject of a login name: the user's id when the
// name is a live account, else the normalised name.
func subjectOf(u *ent.SysUser, account string) string {
	if u != nil {
		return subjectUser + strconv.FormatInt(u.ID, 10)
	}
	return subjectUnknown + schema.NormalizeAccount(strings.TrimSpace(account))
}

// clientKey is the client part of a counter: the IPv4 address or the /64
// network of an IPv6 address (as the rate limiter counts).
func clientKey(ip string) string {
	if ip == "" {
		return clientUnknown
	}
	parsed := net.ParseIP(ip)
	if parsed == nil {
		return clientUnknown
	}
	if v4 := parsed.To4(); v4 != nil {
		return v4.String()
	}
	return parsed.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// openLockout reads the subject's epoch. A cache error fails closed.
func openLockout(ctx context.Context, store cache.Store, subject, clientIP string) (*lockout, error) {
	e, _, err := store.Count(ctx, lockPrefix+keyEpoch+subject)
	if err != nil {
		return nil, fmt.Errorf("reading the login lock: %w", err)
	}
	return &lockout{store: store, subject: subject, client: clientKey(clientIP), epoch: strconv.FormatInt(e, 10)}, nil
}

// openLockout is openLockout with the service's store and metrics.
func (s *Service) openLockout(ctx context.Context, subject, clientIP string) (*lockout, error) {
	l, err := openLockout(ctx, s.d.Store, subject, clientIP)
	if l != nil {
		l.metrics = s.d.Metrics
	}
	return l, err
}

func (l *lockout) pairKey(kind string) string {
	return lockPrefix + kind + l.subject + ":" + l.epoch + ":" + l.client
}

func (l *lockout) accountKey() string {
	return lockPrefix + keyAccount + l.subject + ":" + l.epoch
}

// state reports whether the pair is locked and whether the subject needs a
// captcha. A locked attempt is counted account-wide.
func (l *lockout) state(ctx context.Context, p lockPolicy) (lockState, error) {
	var st lockState
	if p.maxFail > 0 {
		n, ttl, err := l.store.Count(ctx, l.pairKey(keyPairLock))
		if err != nil {
			return st, fmt.Errorf("reading the login lock: %w", err)
		}
		if n > 0 {
			st.locked = max(ttl, time.Second)
			if p.captchaAt > 0 {
				if _, err := l.store.Incr(ctx, l.accountKey(), 1, p.window()); err != nil {
					return st, fmt.Errorf("counting a failed login: %w", err)
				}
			}
			return st, nil
		}
	}
	if p.captchaAt > 0 {
		n, _, err := l.store.Count(ctx, l.accountKey())
		if err != nil {
			return st, fmt.Errorf("reading the login lock: %w", err)
		}
		st.needCaptcha = n >= int64(p.captchaAt)
	}
	return st, nil
}

// fail counts a failed attempt and reports whether it locked the pair.
func (l *lockout) fail(ctx context.Context, p lockPolicy) (locked bool, err error) {
	if p.captchaAt > 0 {
		if _, err := l.store.Incr(ctx, l.accountKey(), 1, p.window()); err != nil {
			return false, fmt.Errorf("counting a failed login: %w", err)
		}
	}
	if p.maxFail <= 0 {
		return false, nil
	}
	n, err := l.store.Incr(ctx, l.pairKey(keyPairFailures), 1, p.window())
	if err != nil {
		return false, fmt.Errorf("counting a failed login: %w", err)
	}
	if n < int64(p.maxFail) {
		return false, nil
	}
	if _, err := l.store.Incr(ctx, l.pairKey(keyPairLock), 1, p.window()); err != nil {
		return false, fmt.Errorf("locking an account: %w", err)
	}
	_ = l.store.Reset(ctx, l.pairKey(keyPairFailures))
	l.metrics.Lockout()
	return true, nil
}

// succeed clears the pair's failures (not the account-wide counter).
func (l *lockout) succeed(ctx context.Context) error {
	return l.store.Reset(ctx, l.pairKey(keyPairFailures))
}

// clearSubject retires every counter of a subject: a new epoch for the
// pairs, and the account-wide counter of the old epoch is removed.
func clearSubject(ctx context.Context, store cache.Store, subject string) error {
	e, _, err := store.Count(ctx, lockPrefix+keyEpoch+subject)
	if err != nil {
		return err
	}
	// A random step, so that an epoch that ran out (epochTTL) and starts
	// again is not taken back to a value whose keys might still live.
	step, err := rand.Int(rand.Reader, big.NewInt(1<<40))
	if err != nil {
		return err
	}
	if _, err := store.Incr(ctx, lockPrefix+keyEpoch+subject, step.Int64()+1, epochTTL); err != nil {
		return err
	}
	return store.Reset(ctx, lockPrefix+keyAccount+subject+":"+strconv.FormatInt(e, 10))
}

// ClearLockout clears every lockout counter of an account name: those of
// the live user it names (matched case-insensitively) and those of the name
// itself. It is the break-glass of `adminkernel user unlock` and what an
// administrator's password reset does. It reports whether a live user has
// the name.
func ClearLockout(ctx context.Context, client *ent.Client, store cache.Store, account string) (bool, error) {
	u, err := client.SysUser.Query().
		Where(sysuser.AccountNorm(schema.NormalizeAccount(strings.TrimSpace(account))), sysuser.IsDelete(false)).
		Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return false, err
	}
	subjects := []string{subjectOf(nil, account)}
	if u != nil {
		subjects = append(subjects, subjectOf(u, account))
	}
	for _, s := range subjects {
		if err := clearSubject(ctx, store, s); err != nil {
			return u != nil, fmt.Errorf("clearing the login lock: %w", err)
		}
	}
	return u != nil, nil
}

// openUnlocked opens the lockout counters of (subject, client IP) under the
// current policy and refuses a pair locked now: 40004 with
// args.lockMinutes. The checks that take a password or a code after the
// login (re-authentication, a password change, the TOTP login step) start
// here.
func (s *Service) openUnlocked(ctx context.Context, subject, clientIP string) (*lockout, lockPolicy, error) {
	policy, err := s.lockPolicy(ctx)
	if err != nil {
		return nil, policy, err
	}
	lock, err := s.openLockout(ctx, subject, clientIP)
	if err != nil {
		return nil, policy, err
	}
	st, err := lock.state(ctx, policy)
	if err != nil {
		return nil, policy, err
	}
	if st.locked > 0 {
		return nil, policy, errcode.New(errcode.AccountLocked).With("lockMinutes", minutesCeil(st.locked))
	}
	return lock, policy, nil
}
