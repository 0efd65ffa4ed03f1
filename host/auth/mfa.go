package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/mfa"
)

// Runtime switches of the second factors (sys_config).
const (
	KeyTotpEnabled         = "sys.security.totp.enabled"
	KeyTotpRequireForSuper = "sys.security.totp.requireForSuperAdmin"
)

// MethodTOTP is the login-log method of POST /auth/login/totp.
const MethodTOTP = "totp"

// TOTP challenges: one-time records of the one-time store (PutOnce/Take),
// under mfa.KeyPrefix.
const (
	totpLoginPrefix = mfa.KeyPrefix + "login:"
	totpBindPrefix  = mfa.KeyPrefix + "bind:"
	// TotpChallengeTTL is the life of a login challenge (signal 40018).
	TotpChallengeTTL = 5 * time.Minute
	// TotpBindTTL is the life of a bind challenge (bind/start).
	TotpBindTTL = 10 * time.Minute
	// TotpMaxAttempts wrong codes end a challenge.
	TotpMaxAttempts = 5
	challengeBytes  = 32
	maxCodeInput    = 16
)

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

func (s *Service) putChallenge(ctx context.Context, key string, rec totpChallenge) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ttl := time.Until(rec.ExpiresAt)
	if ttl <= 0 {
		return errcode.New(errcode.MfaBindInvalid)
	}
	if err := s.d.Store.PutOnce(ctx, key, raw, ttl); err != nil {
		return fmt.Errorf("storing a TOTP challenge: %w", err)
	}
	return nil
}

// takeChallenge removes and returns a challenge: 40021 when it is unknown,
// expired or already taken.
func (s *Service) takeChallenge(ctx context.Context, key string) (totpChallenge, error) {
	var rec totpChallenge
	raw, ok, err := s.d.Store.Take(ctx, key)
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
func (s *Service) retry(ctx context.Context, key string, rec totpChallenge) error {
	rec.Attempts++
	left := TotpMaxAttempts - rec.Attempts
	if left > 0 {
		if err := s.putChallenge(ctx, key, rec); err != nil {
			if _, ok := errcode.As(err); !ok {
				return err
			}
			left = 0
		}
	}
	return errcode.New(errcode.TotpWrong).With("attemptsLeft", max(left, 0))
}

// secondFactorNeed: sys.security.totp.enabled and the user has TOTP
// bound, a passkey, is forced to use TOTP, or is the super-admin under
// requireForSuperAdmin. passkey reports whether the user has a passkey
// (then the 40018 challenge may be completed with it).
func (s *Service) secondFactorNeed(ctx context.Context, u *ent.SysUser) (need, passkey bool, err error) {
	on, err := s.d.Settings.Bool(ctx, KeyTotpEnabled)
	if err != nil || !on {
		return false, false, err
	}
	if passkey, err = s.pk.Has(ctx, u.ID); err != nil {
		return false, false, err
	}
	if u.TotpEnabled || u.ForceTotp || passkey {
		return true, passkey, nil
	}
	if !u.IsSuperAdmin {
		return false, false, nil
	}
	need, err = s.d.Settings.Bool(ctx, KeyTotpRequireForSuper)
	return need, false, err
}

// secondFactor is the gate every first factor (password, SMS login,
// external login) passes instead of IssueTokens: it issues tokens when no
// second factor is required, else answers the signal of the factor: 40018
// with challengeId (and passkey: true when the user has a passkey, which
// completes it through /auth/passkey/login/*), 40020 when the user has
// neither TOTP nor a passkey.
func (s *Service) secondFactor(ctx context.Context, u *ent.SysUser, first string, cl Client) (*LoginOutput, error) {
	need, passkey, err := s.secondFactorNeed(ctx, u)
	if err != nil {
		return nil, err
	}
	if need {
		if !mfa.Bound(u) && !passkey {
			return nil, errcode.New(errcode.TotpNotBound)
		}
		id, err := newChallengeID()
		if err != nil {
			return nil, err
		}
		rec := totpChallenge{UserID: u.ID, Method: first, ExpiresAt: time.Now().Add(TotpChallengeTTL)}
		if err := s.putChallenge(ctx, totpLoginPrefix+id, rec); err != nil {
			return nil, err
		}
		signal := errcode.New(errcode.TotpRequired).With("challengeId", id)
		if passkey {
			signal = signal.With("passkey", true)
		}
		return nil, signal
	}
	// The SMS second factor asks password logins of users with a phone
	// (sys.security.mfa.enabled): 40009 with the challenge.
	if first == MethodPassword {
		if err := s.smsSecondFactor(ctx, u, cl); err != nil {
			return nil, err
		}
	}
	return s.IssueTokens(ctx, u, first, cl)
}

// CompleteLogin is the gate for a first factor outside this package (the
// external login): tokens, or the second factor's signal (40018 with
// challengeId, 40020).
func (s *Service) CompleteLogin(ctx context.Context, u *ent.SysUser, method string, cl Client) (*LoginOutput, error) {
	return s.secondFactor(ctx, u, method, cl)
}

// TotpLoginInput is the body of POST /auth/login/totp.
type TotpLoginInput struct {
	ChallengeID string `json:"challengeId"`
	Code        string `json:"code"`
}

// TotpLogin completes a login that answered 40018. The challenge is one-
// time (taken atomically), lives TotpChallengeTTL and dies after
// TotpMaxAttempts wrong codes; wrong codes count toward the account
// lockout of the client, and a code is accepted once per time step.
func (s *Service) TotpLogin(ctx context.Context, in TotpLoginInput, cl Client) (*LoginOutput, error) {
	var userID *int64
	account := ""
	out, err := s.totpLogin(ctx, in, cl, &userID, &account)
	s.WriteLoginLog(ctx, account, MethodTOTP, userID, err, cl)
	return out, err
}

func (s *Service) totpLogin(ctx context.Context, in TotpLoginInput, cl Client, userID **int64, account *string) (*LoginOutput, error) {
	id := strings.TrimSpace(in.ChallengeID)
	if !validChallengeID(id) {
		return nil, errcode.New(errcode.MfaBindInvalid)
	}
	if len(in.Code) > maxCodeInput {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "code")
	}
	rec, err := s.takeChallenge(ctx, totpLoginPrefix+id)
	if err != nil {
		return nil, err
	}
	u, err := s.liveUser(ctx, rec.UserID)
	if be, ok := errcode.As(err); ok && be.Code == errcode.UserNotFound {
		return nil, errcode.New(errcode.MfaBindInvalid)
	}
	if err != nil {
		return nil, err
	}
	*userID, *account = &u.ID, u.Account
	if !u.Enabled {
		return nil, errcode.New(errcode.AccountDisabled)
	}
	lock, policy, err := s.openUnlocked(ctx, subjectOf(u, u.Account), cl.IP)
	if err != nil {
		return nil, err
	}
	if err := s.mfa.Verify(ctx, u, strings.TrimSpace(in.Code)); err != nil {
		if be, ok := errcode.As(err); !ok || be.Code != errcode.TotpWrong {
			return nil, err
		}
		locked, ferr := lock.fail(ctx, policy)
		if ferr != nil {
			return nil, ferr
		}
		if locked {
			return nil, errcode.New(errcode.AccountLocked).With("lockMinutes", policy.minutes)
		}
		return nil, s.retry(ctx, totpLoginPrefix+id, rec)
	}
	if err := lock.succeed(ctx); err != nil {
		s.d.Log.Warn("resetting the failed-login counter failed", "error", err)
	}
	s.TouchLogin(ctx, u, cl)
	return s.issueTokens(ctx, u, rec.Method, cl, true)
}

// BindStartInput is the body of POST /auth/mfa/bind/start (token is
// accepted and ignored, wire contract §2.3).
type BindStartInput struct {
	Account         string  `json:"account"`
	CurrentPassword string  `json:"currentPassword"`
	Token           *string `json:"token"`
}

// BindStartOutput is the answer of bind/start.
type BindStartOutput struct {
	BindChallengeID string `json:"bindChallengeId"`
	OtpauthURI      string `json:"otpauthUri"`
	Seed            string `json:"seed"`
	ExpiresSeconds  int    `json:"expiresSeconds"`
}

// BindCompleteInput is the body of POST /auth/mfa/bind/complete.
type BindCompleteInput struct {
	BindChallengeID string `json:"bindChallengeId"`
	TotpCode        string `json:"totpCode"`
}

// BindCompleteOutput carries the recovery codes, shown once.
type BindCompleteOutput struct {
	RecoveryCodes []string `json:"recoveryCodes"`
}

// RecoveryInput is the body of POST /auth/mfa/recovery.
type RecoveryInput struct {
	Account         string `json:"account"`
	CurrentPassword string `json:"currentPassword"`
	RecoveryCode    string `json:"recoveryCode"`
}

func validAccount(a string) bool {
	return strings.TrimSpace(a) != "" && utf8.RuneCountInString(a) <= maxAccountLen
}

// errTotpKeys is logged when seeds cannot be sealed or opened.
var errTotpKeys = errors.New("TOTP seeds cannot be sealed or opened")

// BindStart checks the account's password (a failure counts toward the
// lockout and answers as the login does) and starts binding a new seed.
// A user with TOTP bound must unbind first (recovery code, or an
// administrator's clear): 40021. The password alone binds only an account
// without another factor (passwordBindAllowed: 40035 otherwise, the
// signed-in path is BindStartSession).
func (s *Service) BindStart(ctx context.Context, in BindStartInput, cl Client) (*BindStartOutput, error) {
	if !validAccount(in.Account) {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "account")
	}
	if in.CurrentPassword == "" {
		return nil, errcode.New(errcode.MfaBindPasswordRequired)
	}
	if len(in.CurrentPassword) > maxPasswordLen {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "currentPassword")
	}
	var uid *int64
	pc, err := s.checkPassword(ctx, PasswordInput{Account: in.Account, Password: in.CurrentPassword}, false, cl, &uid)
	if err != nil {
		return nil, err
	}
	u := pc.user
	if err := s.passwordBindAllowed(ctx, u); err != nil {
		return nil, err
	}
	return s.newBind(ctx, u, "")
}

// newBind creates a seed for u and its bind challenge.
func (s *Service) newBind(ctx context.Context, u *ent.SysUser, sid string) (*BindStartOutput, error) {
	issuer := s.d.Config.Service.Security.Jwt.Issuer
	if issuer == "" {
		issuer = "AdminKernel"
	}
	seed, uri, err := mfa.NewSeed(issuer, u.Account)
	if err != nil {
		return nil, err
	}
	sealed, err := s.mfa.Seal(u.ID, seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTotpKeys, err)
	}
	id, err := newChallengeID()
	if err != nil {
		return nil, err
	}
	rec := totpChallenge{UserID: u.ID, Sealed: sealed, SessionID: sid, ExpiresAt: time.Now().Add(TotpBindTTL)}
	if err := s.putChallenge(ctx, totpBindPrefix+id, rec); err != nil {
		return nil, err
	}
	return &BindStartOutput{BindChallengeID: id, OtpauthURI: uri, Seed: seed, ExpiresSeconds: int(TotpBindTTL.Seconds())}, nil
}

// BindComplete checks a code of the new seed, binds it, and returns ten
// new recovery codes. The challenge is one-time and dies after
// TotpMaxAttempts wrong codes (40019 with attemptsLeft); 40021 for an
// unknown or expired challenge. The user's sessions end, except the
// signed-in session that started the binding (it goes on with the new
// factor, as after adding a passkey).
func (s *Service) BindComplete(ctx context.Context, in BindCompleteInput) (*BindCompleteOutput, error) {
	id := strings.TrimSpace(in.BindChallengeID)
	if !validChallengeID(id) {
		return nil, errcode.New(errcode.MfaBindInvalid)
	}
	if len(in.TotpCode) > maxCodeInput {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "totpCode")
	}
	rec, err := s.takeChallenge(ctx, totpBindPrefix+id)
	if err != nil {
		return nil, err
	}
	seed, err := s.mfa.Open(rec.UserID, rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTotpKeys, err)
	}
	if err := s.mfa.Check(ctx, rec.UserID, seed, strings.TrimSpace(in.TotpCode)); err != nil {
		if be, ok := errcode.As(err); ok && be.Code == errcode.TotpWrong {
			return nil, s.retry(ctx, totpBindPrefix+id, rec)
		}
		return nil, err
	}
	codes, err := s.mfa.Enable(ctx, rec.UserID, rec.Sealed)
	if err != nil {
		return nil, err
	}
	if rec.SessionID != "" {
		s.otherSessionsEnd(ctx, rec.UserID, rec.SessionID, "TOTP bound")
	} else {
		s.factorChanged(ctx, rec.UserID, "TOTP bound")
	}
	s.securityNotice(ctx, rec.UserID, changeTotpBound)
	return &BindCompleteOutput{RecoveryCodes: codes}, nil
}

// Recovery checks the password and spends a recovery code: TOTP is
// unbound. A wrong code answers 40022 and counts toward the lockout. The
// user's sessions end.
func (s *Service) Recovery(ctx context.Context, in RecoveryInput, cl Client) error {
	if !validAccount(in.Account) {
		return errcode.New(errcode.RequestInvalid).With("field", "account")
	}
	if in.CurrentPassword == "" || len(in.CurrentPassword) > maxPasswordLen {
		return errcode.New(errcode.RequestInvalid).With("field", "currentPassword")
	}
	if strings.TrimSpace(in.RecoveryCode) == "" {
		return errcode.New(errcode.RecoveryCodeInvalid)
	}
	var uid *int64
	pc, err := s.checkPassword(ctx, PasswordInput{Account: in.Account, Password: in.CurrentPassword}, false, cl, &uid)
	if err != nil {
		return err
	}
	err = s.mfa.UseRecoveryCode(ctx, pc.user.ID, in.RecoveryCode)
	if be, ok := errcode.As(err); ok && be.Code == errcode.RecoveryCodeInvalid {
		locked, ferr := pc.lock.fail(ctx, pc.policy)
		if ferr != nil {
			return ferr
		}
		if locked {
			return errcode.New(errcode.AccountLocked).With("lockMinutes", pc.policy.minutes)
		}
		return err
	}
	if err != nil {
		return err
	}
	s.factorChanged(ctx, pc.user.ID, "TOTP unbound with a recovery code")
	s.securityNotice(ctx, pc.user.ID, changeTotpUnbound)
	return nil
}

// factorChanged ends every session of the user after a change of its
// factors (the change is written to the operation log by the route).
func (s *Service) factorChanged(ctx context.Context, userID int64, reason string) {
	n, err := s.d.Sessions.RevokeUser(ctx, userID, reason, "")
	if err != nil {
		s.d.Log.Error("ending the sessions of a user after a factor change failed", "user_id", userID, "error", err)
		return
	}
	s.d.Log.Info("second factor changed", "user_id", userID, "change", reason, "sessions_ended", n)
}
