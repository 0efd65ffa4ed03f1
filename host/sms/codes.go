package sms

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
)

// Defaults of CodeOptions.
const (
	DefaultCodeLength     = 6
	DefaultCodeTTL        = 5 * time.Minute
	DefaultMaxAttempts    = 5
	DefaultResendInterval = 60 * time.Second
	maxCodeLength         = 10
)

// CodeOptions configures Codes. Zero (or negative) values take the defaults.
type CodeOptions struct {
	// Length is the number of digits (default 6).
	Length int
	// TTL is how long a code can be used (default 5 minutes).
	TTL time.Duration
	// MaxAttempts is how many wrong codes kill the code (default 5).
	MaxAttempts int
	// ResendInterval is the minimum time between two codes for the same
	// purpose and phone (default 60 s).
	ResendInterval time.Duration
}

// Codes issues and checks SMS codes, one live code per purpose and phone.
//
// Cache layout (<p> is the purpose, <h> a digest of purpose and phone, so
// phone numbers are not cache keys; <n> is a random per-issue nonce):
//
//	sms:resend:<p>:<h>          counter, TTL ResendInterval: the resend gate
//	sms:cur:<p>:<h>             counter, TTL: holds <n> of the live code
//	sms:att:<p>:<h>:<n>         counter, TTL: attempts on that code
//	sms:code:<p>:<h>:<n>:<d>    one-time value, TTL: <d> digests the code
//
// Check never needs to read a code back: the submitted code's digest names
// the one-time key, so a right code is consumed with one atomic Take and a
// wrong one simply misses. Every check first reserves an attempt (Incr), so
// even parallel guesses are bounded by MaxAttempts, and a successful check
// pushes the attempt counter past any reachable value, which marks the code
// used. Issuing a new code moves the cur pointer to a new nonce, which
// retires the previous code at once.
type Codes struct {
	store cache.Store
	opts  CodeOptions
}

// usedMark is added to the attempt counter when a code is consumed; wrong
// attempts can never reach it.
const usedMark = int64(1) << 40

// New returns a code store backed by store.
func New(store cache.Store, opts CodeOptions) *Codes {
	if opts.Length <= 0 {
		opts.Length = DefaultCodeLength
	}
	if opts.Length > maxCodeLength {
		opts.Length = maxCodeLength
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultCodeTTL
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.ResendInterval <= 0 {
		opts.ResendInterval = DefaultResendInterval
	}
	return &Codes{store: store, opts: opts}
}

// Options returns the effective options (for expiresSeconds/resendSeconds).
func (c *Codes) Options() CodeOptions { return c.opts }

func (c *Codes) keys(purpose, phone string) (resend, cur, base string) {
	d := sha256.Sum256([]byte(purpose + "\x00" + phone))
	h := hex.EncodeToString(d[:16])
	return "sms:resend:" + purpose + ":" + h, "sms:cur:" + purpose + ":" + h, purpose + ":" + h
}

func attKey(base string, nonce int64) string {
	return "sms:att:" + base + ":" + strconv.FormatInt(nonce, 36)
}

func codeKey(base string, nonce int64, code string) string {
	n := strconv.FormatInt(nonce, 36)
	d := sha256.Sum256([]byte(n + ":" + code))
	return "sms:code:" + base + ":" + n + ":" + hex.EncodeToString(d[:16])
}

// Issue creates a new code for purpose and phone, replacing any earlier one,
// and returns it for sending. Within ResendInterval of the previous code it
// returns errcode.TooManyRequests with args.retryAfterSeconds.
func (c *Codes) Issue(ctx context.Context, purpose, phone string) (string, error) {
	resendKey, curKey, base := c.keys(purpose, phone)
	n, err := c.store.Incr(ctx, resendKey, 1, c.opts.ResendInterval)
	if err != nil {
		return "", fmt.Errorf("sms: resend gate: %w", err)
	}
	if n > 1 {
		_, ttl, err := c.store.Count(ctx, resendKey)
		if err != nil {
			return "", fmt.Errorf("sms: resend gate: %w", err)
		}
		return "", errcode.New(errcode.TooManyRequests).With("retryAfterSeconds", ceilSeconds(ttl))
	}
	code, err := c.issue(ctx, curKey, base)
	if err != nil {
		// Nothing was sent: let the caller try again at once.
		_ = c.store.Reset(context.WithoutCancel(ctx), resendKey)
		return "", err
	}
	return code, nil
}

func (c *Codes) issue(ctx context.Context, curKey, base string) (string, error) {
	code, err := randomDigits(c.opts.Length)
	if err != nil {
		return "", fmt.Errorf("sms: code: %w", err)
	}
	nonce, err := randomNonce()
	if err != nil {
		return "", fmt.Errorf("sms: nonce: %w", err)
	}
	// The code key outlives the pointer slightly, so a code is never found
	// missing while the pointer still names it.
	if err := c.store.PutOnce(ctx, codeKey(base, nonce, code), []byte{1}, c.opts.TTL+5*time.Second); err != nil {
		return "", fmt.Errorf("sms: store code: %w", err)
	}
	// Point at the new code. The resend gate keeps issuers of one
	// purpose and phone apart, so Reset+Incr sets the pointer to nonce.
	if err := c.store.Reset(ctx, curKey); err != nil {
		return "", fmt.Errorf("sms: store code: %w", err)
	}
	if _, err := c.store.Incr(ctx, curKey, nonce, c.opts.TTL); err != nil {
		return "", fmt.Errorf("sms: store code: %w", err)
	}
	return code, nil
}

// Check verifies code for purpose and phone. Right: nil, exactly once, even
// under concurrent checks. Wrong: errcode.SmsCodeWrong with
// args.attemptsLeft; after MaxAttempts wrong codes (or once used, or when
// none is live) errcode.SmsCodeExpired. Cache failures are plain errors
// (fail closed).
func (c *Codes) Check(ctx context.Context, purpose, phone, code string) error {
	_, curKey, base := c.keys(purpose, phone)
	nonce, _, err := c.store.Count(ctx, curKey)
	if err != nil {
		return fmt.Errorf("sms: check: %w", err)
	}
	if nonce <= 0 {
		return errcode.New(errcode.SmsCodeExpired)
	}
	ak := attKey(base, nonce)
	// Reserve an attempt before looking: parallel guesses stay bounded.
	n, err := c.store.Incr(ctx, ak, 1, c.opts.TTL)
	if err != nil {
		return fmt.Errorf("sms: check: %w", err)
	}
	limit := int64(c.opts.MaxAttempts)
	if n > limit {
		return errcode.New(errcode.SmsCodeExpired)
	}
	if len(code) == c.opts.Length && allDigits(code) {
		_, ok, err := c.store.Take(ctx, codeKey(base, nonce, code))
		if err != nil {
			return fmt.Errorf("sms: check: %w", err)
		}
		if ok {
			// Mark used; later checks of this code see the counter past max.
			// Should this fail, the code itself is gone already; only the
			// answer to a later re-check (40010 instead of 40011) differs.
			_, _ = c.store.Incr(context.WithoutCancel(ctx), ak, usedMark, c.opts.TTL)
			return nil
		}
	}
	// A miss: wrong, or consumed by a concurrent right check just now.
	if now, _, err := c.store.Count(ctx, ak); err == nil && now >= usedMark {
		return errcode.New(errcode.SmsCodeExpired)
	}
	return errcode.New(errcode.SmsCodeWrong).With("attemptsLeft", int(limit-n))
}

// Revoke retires the live code for purpose and phone (for example when
// sending it failed) and clears the resend gate.
func (c *Codes) Revoke(ctx context.Context, purpose, phone string) error {
	resendKey, curKey, _ := c.keys(purpose, phone)
	if err := c.store.Reset(ctx, curKey, resendKey); err != nil {
		return fmt.Errorf("sms: revoke: %w", err)
	}
	return nil
}

func ceilSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

const digits = "0123456789"

var ten = big.NewInt(int64(len(digits)))

func randomDigits(n int) (string, error) {
	b := make([]byte, n)
	for i := range b {
		d, err := rand.Int(rand.Reader, ten)
		if err != nil {
			return "", err
		}
		b[i] = digits[d.Int64()] // d is in [0, 10)
	}
	return string(b), nil
}

var errNonce = errors.New("zero nonce")

// randomNonce returns a random value in [1, 2^53): positive, and exact in
// backends that keep counters as doubles.
func randomNonce() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(b[:]) & (1<<53 - 1))
	if v == 0 {
		return 0, errNonce
	}
	return v, nil
}
