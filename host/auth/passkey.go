package auth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/passkey"
)

// MethodPasskey is the login-log method of the passkey logins (second
// factor and passwordless) and the session method of a passwordless one.
const MethodPasskey = passkey.MethodPasskey

// Passkeys returns the WebAuthn relying party.
func (s *Service) Passkeys() *passkey.Service { return s.pk }

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
func (s *Service) PasskeyLoginBegin(ctx context.Context, in PasskeyLoginBeginInput) (*passkey.Begin, error) {
	if !s.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	id := strings.TrimSpace(in.ChallengeID)
	if !validChallengeID(id) {
		return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
	}
	// Read the challenge: take it and put it back with its remaining life.
	rec, err := s.takeChallenge(ctx, totpLoginPrefix+id)
	if err != nil {
		if _, ok := errcode.As(err); ok {
			return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
		}
		return nil, err
	}
	if err := s.putChallenge(ctx, totpLoginPrefix+id, rec); err != nil {
		if _, ok := errcode.As(err); ok {
			return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
		}
		return nil, err
	}
	return s.pk.BeginSecondFactor(ctx, rec.UserID, rec.Method, id)
}

// PasskeyLogin completes a second-factor login with the assertion of a
// ceremony PasskeyLoginBegin started: the ceremony is one-time, failures
// count toward the account lockout like wrong TOTP codes, and the login
// challenge is spent. Every attempt is written to the login log (method
// passkey); the session's method is the first factor's.
func (s *Service) PasskeyLogin(ctx context.Context, in PasskeyFinishInput, cl Client) (*LoginOutput, error) {
	var user *ent.SysUser
	out, err := s.passkeyLogin(ctx, passkey.KindSecondFactor, in, cl, &user)
	s.logPasskeyLogin(ctx, user, err, cl)
	return out, err
}

// PasswordlessBegin starts a passwordless login (discoverable
// credentials): 40031 when sys.security.passkey.passwordless is off or no
// relying party is configured.
func (s *Service) PasswordlessBegin(ctx context.Context) (*passkey.Begin, error) {
	if err := s.passwordlessOn(ctx); err != nil {
		return nil, err
	}
	return s.pk.BeginPasswordless(ctx)
}

// PasswordlessLogin completes a passwordless login: the passkey's owner
// must be live, enabled and not locked out (as in the password login);
// failures count toward the owner's lockout. No second factor is asked: a
// passkey with user verification is two factors (something the user has,
// unlocked by something the user knows or is).
func (s *Service) PasswordlessLogin(ctx context.Context, in PasskeyFinishInput, cl Client) (*LoginOutput, error) {
	var user *ent.SysUser
	out, err := s.passwordlessLogin(ctx, in, cl, &user)
	s.logPasskeyLogin(ctx, user, err, cl)
	return out, err
}

func (s *Service) passwordlessLogin(ctx context.Context, in PasskeyFinishInput, cl Client, user **ent.SysUser) (*LoginOutput, error) {
	if err := s.passwordlessOn(ctx); err != nil {
		return nil, err
	}
	return s.passkeyLogin(ctx, passkey.KindPasswordless, in, cl, user)
}

func (s *Service) passwordlessOn(ctx context.Context) error {
	if !s.pk.Enabled() {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	on, err := s.d.Settings.Bool(ctx, passkey.KeyPasswordless)
	if err != nil {
		return err
	}
	if !on {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "passwordlessOff")
	}
	return nil
}

func (s *Service) logPasskeyLogin(ctx context.Context, u *ent.SysUser, err error, cl Client) {
	var uid *int64
	account := ""
	if u != nil {
		uid, account = &u.ID, u.Account
	}
	var ve *passkey.VerifyError
	if errors.As(err, &ve) {
		s.d.Log.Info("passkey assertion refused", "user_id", uid, "reason", ve.Err.Error())
	}
	s.WriteLoginLog(ctx, account, MethodPasskey, uid, err, cl)
}

// passkeyLogin is the shared finish of both logins.
func (s *Service) passkeyLogin(ctx context.Context, kind string, in PasskeyFinishInput, cl Client, user **ent.SysUser) (*LoginOutput, error) {
	peek, perr := s.pk.Take(ctx, kind, in.CeremonyID, in.Credential)
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
	u, err := s.liveUser(ctx, peek.UserID)
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
	lock, policy, err := s.openUnlocked(ctx, subjectOf(u, u.Account), cl.IP)
	if err != nil {
		return nil, err
	}
	var res *passkey.Result
	verr := perr // a malformed assertion counts like a wrong one
	if verr == nil {
		res, verr = s.pk.Verify(ctx, peek)
	}
	if verr != nil {
		if be, ok := errcode.As(verr); !ok || be.Code != errcode.PasskeyInvalid {
			return nil, verr
		}
		locked, ferr := lock.fail(ctx, policy)
		if ferr != nil {
			return nil, ferr
		}
		if locked {
			return nil, errcode.New(errcode.AccountLocked).With("lockMinutes", policy.minutes)
		}
		return nil, verr
	}
	method := MethodPasskey
	if kind == passkey.KindSecondFactor {
		// Spend the login challenge: of a TOTP code and a passkey, the
		// first completes the login.
		if _, err := s.takeChallenge(ctx, totpLoginPrefix+res.Challenge); err != nil {
			if _, ok := errcode.As(err); ok {
				return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
			}
			return nil, err
		}
		method = res.Method
	}
	if err := lock.succeed(ctx); err != nil {
		s.d.Log.Warn("resetting the failed-login counter failed", "error", err)
	}
	s.TouchLogin(ctx, u, cl)
	return s.issueTokens(ctx, u, method, cl, true)
}

// ListPasskeys returns the caller's passkeys (40031 when passkeys are off).
func (s *Service) ListPasskeys(ctx context.Context, userID int64) ([]passkey.Item, error) {
	if !s.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	return s.pk.List(ctx, userID)
}

// BeginPasskeyRegistration starts registering a passkey for the caller;
// the caller's session sid needs an open re-authentication window (40024,
// whatever sys.security.totp.enabled says).
func (s *Service) BeginPasskeyRegistration(ctx context.Context, userID int64, sid string) (*passkey.Begin, error) {
	if !s.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	if err := s.requireReauth(ctx, userID, sid); err != nil {
		return nil, err
	}
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	return s.pk.BeginRegistration(ctx, passkey.Owner{ID: u.ID, Account: u.Account, Name: u.Name})
}

// FinishPasskeyRegistration stores the caller's new passkey and ends the
// caller's other sessions (a factor change).
func (s *Service) FinishPasskeyRegistration(ctx context.Context, userID int64, sid string, in passkey.RegisterInput) (*passkey.Item, error) {
	if !s.pk.Enabled() {
		return nil, errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	item, err := s.pk.FinishRegistration(ctx, passkey.Owner{ID: u.ID, Account: u.Account, Name: u.Name}, in)
	if err != nil {
		var ve *passkey.VerifyError
		if errors.As(err, &ve) {
			s.d.Log.Info("passkey registration refused", "user_id", u.ID, "reason", ve.Err.Error())
		}
		return nil, err
	}
	s.otherSessionsEnd(ctx, userID, sid, "passkey added")
	s.securityNotice(ctx, userID, changePasskeyAdded)
	return item, nil
}

// DeletePasskey removes one of the caller's passkeys (40033 for an id
// that is not the caller's) and ends the caller's other sessions. The
// caller's session sid needs an open re-authentication window (40024,
// whatever sys.security.totp.enabled says).
func (s *Service) DeletePasskey(ctx context.Context, userID int64, sid string, id int64) error {
	if !s.pk.Enabled() {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	if err := s.requireReauth(ctx, userID, sid); err != nil {
		return err
	}
	if err := s.pk.Delete(ctx, userID, id); err != nil {
		return err
	}
	s.otherSessionsEnd(ctx, userID, sid, "passkey removed")
	s.securityNotice(ctx, userID, changePasskeyRemoved)
	return nil
}

// otherSessionsEnd ends every session of the user but the caller's.
func (s *Service) otherSessionsEnd(ctx context.Context, userID int64, sid, reason string) {
	n, err := s.d.Sessions.RevokeUser(ctx, userID, reason, sid)
	if err != nil {
		s.d.Log.Error("ending the sessions of a user after a factor change failed", "user_id", userID, "error", err)
		return
	}
	s.d.Log.Info("second factor changed", "user_id", userID, "change", reason, "sessions_ended", n)
}
