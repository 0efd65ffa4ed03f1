package mfa

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/mfa/passkey"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sms"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// Runtime switches of the second factors (sys_config).
const (
	KeyTotpEnabled         = "sys.security.totp.enabled"
	KeyTotpRequireForSuper = "sys.security.totp.requireForSuperAdmin"
	// KeyMfaEnabled switches the SMS second factor on.
	KeyMfaEnabled = "sys.security.mfa.enabled"
)

// MethodTOTP is the login-log method of POST /auth/login/totp.
const MethodTOTP = "totp"

// MethodPasskey is the login-log method of the passkey logins (second
// factor and passwordless) and the session method of a passwordless one.
const MethodPasskey = passkey.MethodPasskey

// TOTP challenges: one-time records of the one-time store (PutOnce/Take),
// under KeyPrefix.
const (
	totpLoginPrefix = KeyPrefix + "login:"
	totpBindPrefix  = KeyPrefix + "bind:"
	// TotpChallengeTTL is the life of a login challenge (signal 40018).
	TotpChallengeTTL = 5 * time.Minute
	// TotpBindTTL is the life of a bind challenge (bind/start).
	TotpBindTTL = 10 * time.Minute
	// TotpMaxAttempts wrong codes end a challenge.
	TotpMaxAttempts = 5
	challengeBytes  = 32
	maxCodeInput    = 16
)

// Deps are the collaborators of the area (Gate and Factors).
type Deps struct {
	Client    *ent.Client
	Config    *config.Config
	Store     cache.Store
	Settings  *sysconfig.Service
	Sessions  *session.Service
	SmsCodes  *sms.Codes
	SmsSender sms.Sender
	// Totp is the TOTP state; nil builds one over Client, Store and the
	// key ring of Config.
	Totp *Service
	// Passkeys is the WebAuthn relying party; nil builds one from Config
	// (host/mfa/passkey).
	Passkeys *passkey.Service
	// Windows are the re-authentication windows (host/mfa/reauth):
	// enrolling or removing a factor needs one. Nil refuses those changes
	// with 40024.
	Windows ReauthWindows
	// Notify delivers a personal notice to a user (the Notice module's;
	// nil when it is disabled): the security notices of factor changes.
	Notify func(ctx context.Context, userID int64, title, content string) error
	Log    hclog.Logger
}

// ReauthWindows tells whether a session has an open re-authentication
// window (host/mfa/reauth.Windows). Enrolling a factor and removing one
// need one whatever sys.security.totp.enabled says: a stolen session alone
// must not become a permanent takeover.
type ReauthWindows interface {
	IsOpen(ctx context.Context, userID int64, sid string) (bool, error)
}

// Gate is the second-factor gate of every login (auth.SecondFactor): it
// tells whether a second factor is asked and stores its challenge.
type Gate struct {
	d   Deps
	pk  *passkey.Service
	otp *Service
}

// NewGate builds the gate (and so the area's state: the TOTP service and
// the relying party when Deps leaves them nil).
func NewGate(d Deps) (*Gate, error) {
	if d.Log == nil {
		d.Log = hclog.NewNullLogger()
	}
	if d.Totp == nil {
		d.Totp = New(d.Client, d.Store, d.Config)
	}
	if d.Passkeys == nil {
		pk, err := passkey.New(d.Client, d.Store, d.Config)
		if err != nil {
			return nil, err
		}
		d.Passkeys = pk
	}
	return &Gate{d: d, pk: d.Passkeys, otp: d.Totp}, nil
}

// Totp returns the TOTP state (the re-authentication's TOTP check and the
// administrator's clear use it).
func (g *Gate) Totp() *Service { return g.otp }

// Passkeys returns the WebAuthn relying party.
func (g *Gate) Passkeys() *passkey.Service { return g.pk }

// totpChallenge is the record of a login or bind challenge.
type totpChallenge struct {
	UserID int64  `json:"u"`
	Method string `json:"m,omitempty"` // login: the first factor
	Sealed string `json:"s,omitempty"` // bind: the sealed new seed
	// SessionID, on a bind started from a signed-in session, is that
	// session: it survives the binding (the others end).
	SessionID string    `json:"sid,omitempty"`
	Attempts  int       `json:"a"`
	ExpiresAt time.Time `json:"e"`
}

func newChallengeID() (string, error) {
	b := make([]byte, challengeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// validChallengeID: 43 base64url characters.
func validChallengeID(id string) bool {
	if len(id) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

func (g *Gate) putChallenge(ctx context.Context, key string, rec totpChallenge) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ttl := time.Until(rec.ExpiresAt)
	if ttl <= 0 {
		return errcode.New(errcode.MfaBindInvalid)
	}
	if err := g.d.Store.PutOnce(ctx, key, raw, ttl); err != nil {
		return fmt.Errorf("storing a TOTP challenge: %w", err)
	}
	return nil
}

// takeChallenge removes and returns a challenge: 40021 when it is unknown,
// expired or already taken.
func (g *Gate) takeChallenge(ctx context.Context, key string) (totpChallenge, error) {
	var rec totpChallenge
	raw, ok, err := g.d.Store.Take(ctx, key)
	if err != nil {
		return rec, fmt.Errorf("reading a TOTP challenge: %w", err)
	}
	if !ok || json.Unmarshal(raw, &rec) != nil || time.Now().After(rec.ExpiresAt) {
		return rec, errcode.New(errcode.MfaBindInvalid)
	}
	return rec, nil
}

// retry puts a challenge back after a wrong code while attempts remain and
// answers 40019 with attemptsLeft (0: the challenge is gone).
func (g *Gate) retry(ctx context.Context, key string, rec totpChallenge) error {
	rec.Attempts++
	left := TotpMaxAttempts - rec.Attempts
	if left > 0 {
		if err := g.putChallenge(ctx, key, rec); err != nil {
			if _, ok := errcode.As(err); !ok {
				return err
			}
			left = 0
		}
	}
	return errcode.New(errcode.TotpWrong).With("attemptsLeft", max(left, 0))
}

// need: sys.security.totp.enabled and the user has TOTP bound, a passkey,
// is forced to use TOTP, or is the super-admin under requireForSuperAdmin.
// passkey reports whether the user has a passkey (then the 40018
// challenge may be completed with it).
func (g *Gate) need(ctx context.Context, u *ent.SysUser) (need, passkey bool, err error) {
	on, err := g.d.Settings.Bool(ctx, KeyTotpEnabled)
	if err != nil || !on {
		return false, false, err
	}
	if passkey, err = g.pk.Has(ctx, u.ID); err != nil {
		return false, false, err
	}
	if u.TotpEnabled || u.ForceTotp || passkey {
		return true, passkey, nil
	}
	if !u.IsSuperAdmin {
		return false, false, nil
	}
	need, err = g.d.Settings.Bool(ctx, KeyTotpRequireForSuper)
	return need, false, err
}

// Challenge is the gate every first factor (password, SMS login, external
// login) passes before tokens are issued (auth.SecondFactor): nil when no
// second factor is required, else the signal of the factor: 40018 with
// challengeId (and passkey: true when the user has a passkey, which
// completes it through /auth/passkey/login/*), 40020 when the user has
// neither TOTP nor a passkey, 40009 for the SMS second factor of a
// password login.
func (g *Gate) Challenge(ctx context.Context, u *ent.SysUser, first string, cl auth.Client) error {
	need, passkey, err := g.need(ctx, u)
	if err != nil {
		return err
	}
	if need {
		if !Bound(u) && !passkey {
			return errcode.New(errcode.TotpNotBound)
		}
		id, err := newChallengeID()
		if err != nil {
			return err
		}
		rec := totpChallenge{UserID: u.ID, Method: first, ExpiresAt: time.Now().Add(TotpChallengeTTL)}
		if err := g.putChallenge(ctx, totpLoginPrefix+id, rec); err != nil {
			return err
		}
		signal := errcode.New(errcode.TotpRequired).With("challengeId", id)
		if passkey {
			signal = signal.With("passkey", true)
		}
		return signal
	}
	// The SMS second factor asks password logins of users with a phone
	// (sys.security.mfa.enabled): 40009 with the challenge.
	if first == auth.MethodPassword {
		return g.smsSecondFactor(ctx, u, cl)
	}
	return nil
}

// SMS second factor (sys.security.mfa.enabled; wire contract §2.3
// endpoints 3 and 5, signals 40009/40010).
//
// After a correct password, a user with a phone gets no tokens but signal
// 40009 with args {challengeId, phoneMask, expiresSeconds, resendSeconds};
// an SMS code is sent. The challenge is a one-time record under
// mfa:sms:<challengeId> living as long as the code. The code itself lives
// in the SMS code store (host/sms Codes, purpose "mfa", subject the
// challenge id): attempts per code are bounded there (5), a right code is
// consumed exactly once there, and the resend interval is enforced there.
//
// The challenge is bound to the password step: to the browser binder
// (cookie auth.MfaBinderCookie, HttpOnly, SameSite=Lax, Path /api/v1/auth)
// or, when the password login carried bindingChallenge, to the app's
// binding verifier (host/internal/bindproof). Completing or resending takes
// the record (atomic), so of parallel requests exactly one works on it; a
// missing or wrong proof spends it (40011). A wrong code puts it back while
// attempts are left (40010 attemptsLeft) and counts as a failed login for
// the account's lockout; after the last attempt it is gone (40010
// attemptsLeft 0, then 40011).
const (
	mfaSmsKeyPrefix = "mfa:sms:"
	smsPurposeMfa   = "mfa"
	maxSmsCodeLen   = 16
)

// smsChallenge is the record under mfa:sms:<challengeId>.
type smsChallenge struct {
	UserID     int64  `json:"u"`
	BinderHash string `json:"b,omitempty"`
	Challenge  string `json:"c,omitempty"`
	// Expires is when the live code (and so the challenge) ends, unix ms.
	Expires int64 `json:"e"`
	Sends   int   `json:"n"`
}

func (r smsChallenge) ttl() time.Duration { return time.Until(time.UnixMilli(r.Expires)) }

// smsFactor reports whether the SMS second factor is in force for u: the
// switch is on and u has a phone.
func (g *Gate) smsFactor(ctx context.Context, u *ent.SysUser) (bool, error) {
	if strings.TrimSpace(deref(u.Phone)) == "" {
		return false, nil
	}
	return g.d.Settings.Bool(ctx, KeyMfaEnabled)
}

// smsSecondFactor is the SMS branch of the second-factor gate: nil when
// the factor is not required (switch off, or the user has no phone: the
// password alone logs in, docs/design/security.md), else signal 40009 after
// storing a challenge and sending a code.
func (g *Gate) smsSecondFactor(ctx context.Context, u *ent.SysUser, cl auth.Client) error {
	on, err := g.d.Settings.Bool(ctx, KeyMfaEnabled)
	if err != nil || !on {
		return err
	}
	phone := strings.TrimSpace(deref(u.Phone))
	if phone == "" {
		return nil
	}
	if cl.BindingChallenge == "" && cl.Binder == "" {
		return errors.New("auth: an SMS challenge needs a browser binder or a binding challenge")
	}
	id, err := bindproof.NewToken()
	if err != nil {
		return err
	}
	rec := smsChallenge{UserID: u.ID, Challenge: cl.BindingChallenge, Sends: 1}
	if rec.Challenge == "" {
		rec.BinderHash = bindproof.HashBinder(cl.Binder)
	}
	opts, err := g.sendMfaCode(ctx, id, phone)
	if err != nil {
		return err
	}
	rec.Expires = time.Now().Add(opts.TTL).UnixMilli()
	if err := g.putSmsChallenge(ctx, id, rec); err != nil {
		return err
	}
	return errcode.New(errcode.SmsCodeRequired).
		With("challengeId", id).
		With("phoneMask", sms.MaskPhone(phone)).
		With("expiresSeconds", int(opts.TTL.Seconds())).
		With("resendSeconds", int(opts.ResendInterval.Seconds()))
}

// sendMfaCode issues a code for the challenge and sends it. A failed
// delivery is logged, not answered: the user may resend.
func (g *Gate) sendMfaCode(ctx context.Context, id, phone string) (sms.CodeOptions, error) {
	code, err := g.d.SmsCodes.Issue(ctx, smsPurposeMfa, id)
	if err != nil {
		if be, ok := errcode.As(err); ok && be.Code == errcode.TooManyRequests {
			be.Status = 200 // "sending too often" is a login-table signal
		}
		return sms.CodeOptions{}, err
	}
	if err := g.d.SmsSender.Send(ctx, phone, code); err != nil {
		g.d.Log.Error("sending the SMS second-factor code failed", "error", err)
	}
	return g.d.SmsCodes.Options(), nil
}

func (g *Gate) putSmsChallenge(ctx context.Context, id string, rec smsChallenge) error {
	ttl := rec.ttl()
	if ttl <= 0 {
		return nil
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := g.d.Store.PutOnce(ctx, mfaSmsKeyPrefix+id, raw, ttl); err != nil {
		return fmt.Errorf("storing the SMS challenge: %w", err)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
