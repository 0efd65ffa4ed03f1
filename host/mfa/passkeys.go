package mfa

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/mfa/passkey"
)

// PasskeyLoginBeginInput is the body of POST /auth/passkey/login/begin:
// the challengeId of signal 40018.
type PasskeyLoginBeginInput struct {
	ChallengeID string `json:"challengeId"`
}

// PasskeyFinishInput is the body of the login finish endpoints.
type PasskeyFinishInput struct {
	CeremonyID string          `json:"ceremonyId"`
	Credential json.RawMessage `json:"credential"`
}

// PasskeyLoginBegin starts completing a login that answered 40018 with a
// passkey instead of a TOTP code. The login challenge stays valid (the
// user may still type a TOTP code); it is spent by whichever factor
// completes it first. 40032 when the challenge is unknown, expired or
// spent; 40030 when the user has no passkey.
func (f *Factors) PasskeyLoginBegin(ctx context.Context, in PasskeyLoginBeginInput) (*passkey.Begin, error) {
	if !f.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	id := strings.TrimSpace(in.ChallengeID)
	if !validChallengeID(id) {
		return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
	}
	// Read the challenge: take it and put it back with its remaining life.
	rec, err := f.takeChallenge(ctx, totpLoginPrefix+id)
	if err != nil {
		if _, ok := errcode.As(err); ok {
			return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
		}
		return nil, err
	}
	if err := f.putChallenge(ctx, totpLoginPrefix+id, rec); err != nil {
		if _, ok := errcode.As(err); ok {
			return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
		}
		return nil, err
	}
	return f.pk.BeginSecondFactor(ctx, rec.UserID, rec.Method, id)
}

// PasskeyLogin completes a second-factor login with the assertion of a
// ceremony PasskeyLoginBegin started: the ceremony is one-time, failures
// count toward the account lockout like wrong TOTP codes, and the login
// challenge is spent. Every attempt is written to the login log (method
// passkey); the session's method is the first factor's.
func (f *Factors) PasskeyLogin(ctx context.Context, in PasskeyFinishInput, cl auth.Client) (*auth.LoginOutput, error) {
	var user *ent.SysUser
	out, err := f.passkeyLogin(ctx, passkey.KindSecondFactor, in, cl, &user)
	f.logPasskeyLogin(ctx, user, err, cl)
	return out, err
}

// PasswordlessBegin starts a passwordless login (discoverable
// credentials): 40031 when sys.security.passkey.passwordless is off or no
// relying party is configured.
func (f *Factors) PasswordlessBegin(ctx context.Context) (*passkey.Begin, error) {
	if err := f.passwordlessOn(ctx); err != nil {
		return nil, err
	}
	return f.pk.BeginPasswordless(ctx)
}

// PasswordlessLogin completes a passwordless login: the passkey's owner
// must be live, enabled and not locked out (as in the password login);
// failures count toward the owner's lockout. No second factor is asked: a
// passkey with user verification is two factors (something the user has,
// unlocked by something the user knows or is).
func (f *Factors) PasswordlessLogin(ctx context.Context, in PasskeyFinishInput, cl auth.Client) (*auth.LoginOutput, error) {
	var user *ent.SysUser
	out, err := f.passwordlessLogin(ctx, in, cl, &user)
	f.logPasskeyLogin(ctx, user, err, cl)
	return out, err
}

func (f *Factors) passwordlessLogin(ctx context.Context, in PasskeyFinishInput, cl auth.Client, user **ent.SysUser) (*auth.LoginOutput, error) {
	if err := f.passwordlessOn(ctx); err != nil {
		return nil, err
	}
	return f.passkeyLogin(ctx, passkey.KindPasswordless, in, cl, user)
}

func (f *Factors) passwordlessOn(ctx context.Context) error {
	if !f.pk.Enabled() {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	on, err := f.d.Settings.Bool(ctx, passkey.KeyPasswordless)
	if err != nil {
		return err
	}
	if !on {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "passwordlessOff")
	}
	return nil
}

func (f *Factors) logPasskeyLogin(ctx context.Context, u *ent.SysUser, err error, cl auth.Client) {
	var uid *int64
	account := ""
	if u != nil {
		uid, account = &u.ID, u.Account
	}
	var ve *passkey.VerifyError
	if errors.As(err, &ve) {
		f.d.Log.Info("passkey assertion refused", "user_id", uid, "reason", ve.Err.Error())
	}
	f.logins.WriteLoginLog(ctx, account, MethodPasskey, uid, err, cl)
}

// passkeyLogin is the shared finish of both logins.
func (f *Factors) passkeyLogin(ctx context.Context, kind string, in PasskeyFinishInput, cl auth.Client, user **ent.SysUser) (*auth.LoginOutput, error) {
	peek, perr := f.pk.Take(ctx, kind, in.CeremonyID, in.Credential)
	if peek == nil {
		return nil, perr
	}
	if peek.UserID <= 0 {
		// An unknown credential (passwordless): no account to count on.
		if perr != nil {
			return nil, perr
		}
		return nil, errcode.New(errcode.PasskeyInvalid).With("reason", "unknownCredential")
	}
	u, err := f.liveUser(ctx, peek.UserID)
	if be, ok := errcode.As(err); ok && be.Code == errcode.UserNotFound {
		return nil, errcode.New(errcode.PasskeyInvalid).With("reason", "unknownCredential")
	}
	if err != nil {
		return nil, err
	}
	*user = u
	if !u.Enabled {
		return nil, errcode.New(errcode.AccountDisabled)
	}
	attempt, err := f.logins.OpenAttempt(ctx, u, cl.IP)
	if err != nil {
		return nil, err
	}
	var res *passkey.Result
	verr := perr // a malformed assertion counts like a wrong one
	if verr == nil {
		res, verr = f.pk.Verify(ctx, peek)
	}
	if verr != nil {
		if be, ok := errcode.As(verr); !ok || be.Code != errcode.PasskeyInvalid {
			return nil, verr
		}
		if ferr := attempt.Fail(ctx); ferr != nil {
			return nil, ferr
		}
		return nil, verr
	}
	method := MethodPasskey
	if kind == passkey.KindSecondFactor {
		// Spend the login challenge: of a TOTP code and a passkey, the
		// first completes the login.
		if _, err := f.takeChallenge(ctx, totpLoginPrefix+res.Challenge); err != nil {
			if _, ok := errcode.As(err); ok {
				return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
			}
			return nil, err
		}
		method = res.Method
	}
	attempt.Succeed(ctx)
	return f.logins.IssueVerified(ctx, u, method, cl)
}

// ListPasskeys returns the caller's passkeys (40031 when passkeys are off).
func (f *Factors) ListPasskeys(ctx context.Context, userID int64) ([]passkey.Item, error) {
	if !f.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	return f.pk.List(ctx, userID)
}

// BeginPasskeyRegistration starts registering a passkey for the caller;
// the caller's session sid needs an open re-authentication window (40024,
// whatever sys.security.totp.enabled says).
func (f *Factors) BeginPasskeyRegistration(ctx context.Context, userID int64, sid string) (*passkey.Begin, error) {
	if !f.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	if err := f.requireReauth(ctx, userID, sid); err != nil {
		return nil, err
	}
	u, err := f.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	return f.pk.BeginRegistration(ctx, passkey.Owner{ID: u.ID, Account: u.Account, Name: u.Name})
}

// FinishPasskeyRegistration stores the caller's new passkey and ends the
// caller's other sessions (a factor change).
func (f *Factors) FinishPasskeyRegistration(ctx context.Context, userID int64, sid string, in passkey.RegisterInput) (*passkey.Item, error) {
	if !f.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	u, err := f.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	item, err := f.pk.FinishRegistration(ctx, passkey.Owner{ID: u.ID, Account: u.Account, Name: u.Name}, in)
	if err != nil {
		var ve *passkey.VerifyError
		if errors.As(err, &ve) {
			f.d.Log.Info("passkey registration refused", "user_id", u.ID, "reason", ve.Err.Error())
		}
		return nil, err
	}
	f.otherSessionsEnd(ctx, userID, sid, "passkey added")
	f.securityNotice(ctx, userID, changePasskeyAdded)
	return item, nil
}

// DeletePasskey removes one of the caller's passkeys (40033 for an id
// that is not the caller's) and ends the caller's other sessions. The
// caller's session sid needs an open re-authentication window (40024,
// whatever sys.security.totp.enabled says).
func (f *Factors) DeletePasskey(ctx context.Context, userID int64, sid string, id int64) error {
	if !f.pk.Enabled() {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	if err := f.requireReauth(ctx, userID, sid); err != nil {
		return err
	}
	if err := f.pk.Delete(ctx, userID, id); err != nil {
		return err
	}
	f.otherSessionsEnd(ctx, userID, sid, "passkey removed")
	f.securityNotice(ctx, userID, changePasskeyRemoved)
	return nil
}
