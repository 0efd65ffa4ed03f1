package mfa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
)

// TotpLoginInput is the body of POST /auth/login/totp.
type TotpLoginInput struct {
	ChallengeID string `json:"challengeId"`
	Code        string `json:"code"`
}

// TotpLogin completes a login that answered 40018. The challenge is one-
// time (taken atomically), lives TotpChallengeTTL and dies after
// TotpMaxAttempts wrong codes; wrong codes count toward the account
// lockout of the client, and a code is accepted once per time step.
func (f *Factors) TotpLogin(ctx context.Context, in TotpLoginInput, cl auth.Client) (*auth.LoginOutput, error) {
	var userID *int64
	account := ""
	out, err := f.totpLogin(ctx, in, cl, &userID, &account)
	f.logins.WriteLoginLog(ctx, account, MethodTOTP, userID, err, cl)
	return out, err
}

func (f *Factors) totpLogin(ctx context.Context, in TotpLoginInput, cl auth.Client, userID **int64, account *string) (*auth.LoginOutput, error) {
	id := strings.TrimSpace(in.ChallengeID)
	if !validChallengeID(id) {
		return nil, errcode.New(errcode.MfaBindInvalid)
	}
	if len(in.Code) > maxCodeInput {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "code")
	}
	rec, err := f.takeChallenge(ctx, totpLoginPrefix+id)
	if err != nil {
		return nil, err
	}
	u, err := f.liveUser(ctx, rec.UserID)
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
	attempt, err := f.logins.OpenAttempt(ctx, u, cl.IP)
	if err != nil {
		return nil, err
	}
	if err := f.otp.Verify(ctx, u, strings.TrimSpace(in.Code)); err != nil {
		if be, ok := errcode.As(err); !ok || be.Code != errcode.TotpWrong {
			return nil, err
		}
		if err := attempt.Fail(ctx); err != nil {
			return nil, err
		}
		return nil, f.retry(ctx, totpLoginPrefix+id, rec)
	}
	attempt.Succeed(ctx)
	return f.logins.IssueVerified(ctx, u, rec.Method, cl)
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
	return strings.TrimSpace(a) != "" && utf8.RuneCountInString(a) <= auth.MaxAccountLen
}

// errTotpKeys is logged when seeds cannot be sealed or opened.
var errTotpKeys = errors.New("TOTP seeds cannot be sealed or opened")

// BindStart checks the account's password (a failure counts toward the
// lockout and answers as the login does) and starts binding a new seed.
// A user with TOTP bound must unbind first (recovery code, or an
// administrator's clear): 40021. The password alone binds only an account
// without another factor (passwordBindAllowed: 40035 otherwise, the
// signed-in path is BindStartSession).
func (f *Factors) BindStart(ctx context.Context, in BindStartInput, cl auth.Client) (*BindStartOutput, error) {
	if !validAccount(in.Account) {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "account")
	}
	if in.CurrentPassword == "" {
		return nil, errcode.New(errcode.MfaBindPasswordRequired)
	}
	if len(in.CurrentPassword) > auth.MaxPasswordLen {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "currentPassword")
	}
	u, _, err := f.logins.CheckPassword(ctx, in.Account, in.CurrentPassword, cl)
	if err != nil {
		return nil, err
	}
	if err := f.passwordBindAllowed(ctx, u); err != nil {
		return nil, err
	}
	return f.newBind(ctx, u, "")
}

// passwordBindAllowed is the rule of the password-only binding: an account
// with TOTP bound answers 40021 (alreadyBound); an account with another
// factor in force at its login — a passkey, or a phone under the SMS
// second factor — answers 40035: the password alone must not add a factor
// beside it. The documented 40020 path stays open: a user TOTP is
// required of (forceTotp, the super-admin under requireForSuperAdmin) who
// has neither TOTP nor a passkey is answered 40020 at login before the SMS
// factor is asked, so the password is the only factor that account has.
func (f *Factors) passwordBindAllowed(ctx context.Context, u *ent.SysUser) error {
	if Bound(u) {
		return errcode.New(errcode.MfaBindInvalid).With("reason", "alreadyBound")
	}
	has, err := f.pk.Has(ctx, u.ID)
	if err != nil {
		return err
	}
	if has {
		return errcode.New(errcode.MfaEnrolSessionRequired)
	}
	phone, err := f.smsFactor(ctx, u)
	if err != nil || !phone {
		return err
	}
	need, _, err := f.need(ctx, u)
	if err != nil {
		return err
	}
	if !need {
		return errcode.New(errcode.MfaEnrolSessionRequired)
	}
	return nil
}

// BindStartSession starts binding TOTP for a signed-in user (POST
// /personal/mfa/bind/start): the session passed the account's factors at
// its login, and a re-authentication window must be open (40024
// otherwise, whatever sys.security.totp.enabled says). The binding is
// completed by POST /auth/mfa/bind/complete.
func (f *Factors) BindStartSession(ctx context.Context, userID int64, sid string) (*BindStartOutput, error) {
	if err := f.requireReauth(ctx, userID, sid); err != nil {
		return nil, err
	}
	u, err := f.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	if Bound(u) {
		return nil, errcode.New(errcode.MfaBindInvalid).With("reason", "alreadyBound")
	}
	return f.newBind(ctx, u, sid)
}

// newBind creates a seed for u and its bind challenge.
func (f *Factors) newBind(ctx context.Context, u *ent.SysUser, sid string) (*BindStartOutput, error) {
	issuer := f.d.Config.Service.Security.Jwt.Issuer
	if issuer == "" {
		issuer = "AdminKernel"
	}
	seed, uri, err := NewSeed(issuer, u.Account)
	if err != nil {
		return nil, err
	}
	sealed, err := f.otp.Seal(u.ID, seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTotpKeys, err)
	}
	id, err := newChallengeID()
	if err != nil {
		return nil, err
	}
	rec := totpChallenge{UserID: u.ID, Sealed: sealed, SessionID: sid, ExpiresAt: time.Now().Add(TotpBindTTL)}
	if err := f.putChallenge(ctx, totpBindPrefix+id, rec); err != nil {
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
func (f *Factors) BindComplete(ctx context.Context, in BindCompleteInput) (*BindCompleteOutput, error) {
	id := strings.TrimSpace(in.BindChallengeID)
	if !validChallengeID(id) {
		return nil, errcode.New(errcode.MfaBindInvalid)
	}
	if len(in.TotpCode) > maxCodeInput {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "totpCode")
	}
	rec, err := f.takeChallenge(ctx, totpBindPrefix+id)
	if err != nil {
		return nil, err
	}
	seed, err := f.otp.Open(rec.UserID, rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTotpKeys, err)
	}
	if err := f.otp.Check(ctx, rec.UserID, seed, strings.TrimSpace(in.TotpCode)); err != nil {
		if be, ok := errcode.As(err); ok && be.Code == errcode.TotpWrong {
			return nil, f.retry(ctx, totpBindPrefix+id, rec)
		}
		return nil, err
	}
	codes, err := f.otp.Enable(ctx, rec.UserID, rec.Sealed)
	if err != nil {
		return nil, err
	}
	if rec.SessionID != "" {
		f.otherSessionsEnd(ctx, rec.UserID, rec.SessionID, "TOTP bound")
	} else {
		f.factorChanged(ctx, rec.UserID, "TOTP bound")
	}
	f.securityNotice(ctx, rec.UserID, changeTotpBound)
	return &BindCompleteOutput{RecoveryCodes: codes}, nil
}

// Recovery checks the password and spends a recovery code: TOTP is
// unbound. A wrong code answers 40022 and counts toward the lockout. The
// user's sessions end.
func (f *Factors) Recovery(ctx context.Context, in RecoveryInput, cl auth.Client) error {
	if !validAccount(in.Account) {
		return errcode.New(errcode.RequestInvalid).With("field", "account")
	}
	if in.CurrentPassword == "" || len(in.CurrentPassword) > auth.MaxPasswordLen {
		return errcode.New(errcode.RequestInvalid).With("field", "currentPassword")
	}
	if strings.TrimSpace(in.RecoveryCode) == "" {
		return errcode.New(errcode.RecoveryCodeInvalid)
	}
	u, attempt, err := f.logins.CheckPassword(ctx, in.Account, in.CurrentPassword, cl)
	if err != nil {
		return err
	}
	err = f.otp.UseRecoveryCode(ctx, u.ID, in.RecoveryCode)
	if be, ok := errcode.As(err); ok && be.Code == errcode.RecoveryCodeInvalid {
		if ferr := attempt.Fail(ctx); ferr != nil {
			return ferr
		}
		return err
	}
	if err != nil {
		return err
	}
	f.factorChanged(ctx, u.ID, "TOTP unbound with a recovery code")
	f.securityNotice(ctx, u.ID, changeTotpUnbound)
	return nil
}
