package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/sms"
)

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
// (cookie MfaBinderCookie, HttpOnly, SameSite=Lax, Path /api/v1/auth) or,
// when the password login carried bindingChallenge, to the app's binding
// verifier (host/bindproof). Completing or resending takes the record
// (atomic), so of parallel requests exactly one works on it; a missing or
// wrong proof spends it (40011). A wrong code puts it back while attempts
// are left (40010 attemptsLeft) and counts as a failed login for the
// account's lockout; after the last attempt it is gone (40010
// attemptsLeft 0, then 40011).
const (
	// KeyMfaEnabled switches the SMS second factor on.
	KeyMfaEnabled = "sys.security.mfa.enabled"
	// MfaBinderCookie carries the browser binder of SMS challenges.
	MfaBinderCookie = "tn_mfa_bind"
	// MfaBinderPath is the cookie's path: only the login endpoints see it.
	MfaBinderPath = "/api/v1/auth"

	mfaSmsKeyPrefix = "mfa:sms:"
	smsPurposeMfa   = "mfa"
	// maxMfaSmsSends caps the codes one challenge sends (the first and
	// the resends); then the user logs in again.
	maxMfaSmsSends = 5
	maxSmsCodeLen  = 16
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

// SmsChallengeInput is the body of POST /auth/login/sms.
type SmsChallengeInput struct {
	ChallengeID string `json:"challengeId"`
	Code        string `json:"code"`
	// BindingVerifier proves a challenge bound to a bindingChallenge.
	BindingVerifier *string `json:"bindingVerifier"`
}

// SmsResendInput is the body of POST /auth/login/sms/resend.
type SmsResendInput struct {
	ChallengeID     string  `json:"challengeId"`
	BindingVerifier *string `json:"bindingVerifier"`
}

// smsSecondFactor is the SMS branch of the second-factor gate: nil when
// the factor is not required (switch off, or the user has no phone: the
// password alone logs in, docs/design/security.md), else signal 40009 after
// storing a challenge and sending a code.
func (s *Service) smsSecondFactor(ctx context.Context, u *ent.SysUser, cl Client) error {
	on, err := s.d.Settings.Bool(ctx, KeyMfaEnabled)
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
	opts, err := s.sendMfaCode(ctx, id, phone)
	if err != nil {
		return err
	}
	rec.Expires = time.Now().Add(opts.TTL).UnixMilli()
	if err := s.putSmsChallenge(ctx, id, rec); err != nil {
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
func (s *Service) sendMfaCode(ctx context.Context, id, phone string) (sms.CodeOptions, error) {
	code, err := s.d.SmsCodes.Issue(ctx, smsPurposeMfa, id)
	if err != nil {
		if be, ok := errcode.As(err); ok && be.Code == errcode.TooManyRequests {
			be.Status = 200 // "sending too often" is a login-table signal
		}
		return sms.CodeOptions{}, err
	}
	if err := s.d.SmsSender.Send(ctx, phone, code); err != nil {
		s.d.Log.Error("sending the SMS second-factor code failed", "error", err)
	}
	return s.d.SmsCodes.Options(), nil
}

func (s *Service) putSmsChallenge(ctx context.Context, id string, rec smsChallenge) error {
	ttl := rec.ttl()
	if ttl <= 0 {
		return nil
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := s.d.Store.PutOnce(ctx, mfaSmsKeyPrefix+id, raw, ttl); err != nil {
		return fmt.Errorf("storing the SMS challenge: %w", err)
	}
	return nil
}

// takeSmsChallenge consumes the record of id and checks the proof: 40011
// when it is unknown, expired, used, or the proof is missing or wrong (the
// record is spent then).
func (s *Service) takeSmsChallenge(ctx context.Context, id, verifier string, cl Client) (smsChallenge, error) {
	var rec smsChallenge
	if !bindproof.ValidToken(id) {
		return rec, errcode.New(errcode.SmsCodeExpired)
	}
	raw, ok, err := s.d.Store.Take(ctx, mfaSmsKeyPrefix+id)
	if err != nil {
		return rec, fmt.Errorf("consuming the SMS challenge: %w", err)
	}
	if !ok {
		return rec, errcode.New(errcode.SmsCodeExpired)
	}
	if err := json.Unmarshal(raw, &rec); err != nil || rec.UserID == 0 {
		return rec, errcode.New(errcode.SmsCodeExpired).Wrap(errors.New("unreadable SMS challenge"))
	}
	if !(bindproof.Proof{Binder: cl.Binder, Verifier: verifier}).Matches(rec.BinderHash, rec.Challenge) {
		s.d.Log.Info("SMS challenge refused: the browser binder or binding verifier is missing or wrong; the challenge is spent", "user_id", rec.UserID)
		_ = s.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return rec, errcode.New(errcode.SmsCodeExpired).Wrap(errors.New("SMS challenge without its binder or verifier"))
	}
	return rec, nil
}

// challengeUser is the live account of a challenge: 40011 when it is gone,
// 40005 when it was disabled meanwhile.
func (s *Service) challengeUser(ctx context.Context, id int64) (*ent.SysUser, error) {
	u, err := s.d.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.SmsCodeExpired)
	}
	if err != nil {
		return nil, err
	}
	if !u.Enabled {
		return nil, errcode.New(errcode.AccountDisabled)
	}
	return u, nil
}

// CompleteSmsChallenge is POST /auth/login/sms: the code of an SMS
// challenge ends the password login with tokens (a session with mfa=true).
// Every attempt is written to the login log (method password).
func (s *Service) CompleteSmsChallenge(ctx context.Context, in SmsChallengeInput, cl Client) (*LoginOutput, error) {
	var u *ent.SysUser
	out, err := s.completeSmsChallenge(ctx, in, cl, &u)
	account, userID := "", (*int64)(nil)
	if u != nil {
		account, userID = u.Account, &u.ID
	}
	s.WriteLoginLog(ctx, account, MethodPassword, userID, err, cl)
	return out, err
}

func (s *Service) completeSmsChallenge(ctx context.Context, in SmsChallengeInput, cl Client, user **ent.SysUser) (*LoginOutput, error) {
	code := strings.TrimSpace(in.Code)
	if code == "" || len(code) > maxSmsCodeLen {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "code")
	}
	id := strings.TrimSpace(in.ChallengeID)
	rec, err := s.takeSmsChallenge(ctx, id, deref(in.BindingVerifier), cl)
	if err != nil {
		return nil, err
	}
	u, err := s.challengeUser(ctx, rec.UserID)
	if err != nil {
		_ = s.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return nil, err
	}
	*user = u
	cerr := s.d.SmsCodes.Check(ctx, smsPurposeMfa, id, code)
	if cerr == nil {
		s.TouchLogin(ctx, u, cl)
		return s.issueTokens(ctx, u, MethodPassword, cl, true)
	}
	be, ok := errcode.As(cerr)
	switch {
	case ok && be.Code == errcode.SmsCodeWrong:
		s.countSmsFailure(ctx, u, cl)
		if left, _ := be.Args["attemptsLeft"].(int); left > 0 {
			if err := s.putSmsChallenge(context.WithoutCancel(ctx), id, rec); err != nil {
				return nil, err
			}
		}
		return nil, cerr
	case ok:
		return nil, cerr // 40011: the code is dead, and so is the challenge
	default:
		// The cache failed: keep the challenge for a retry.
		_ = s.putSmsChallenge(context.WithoutCancel(ctx), id, rec)
		return nil, cerr
	}
}

// countSmsFailure counts a wrong code as a failed login of the account
// from this client (sys.security.loginLock.*), so guessing across fresh
// challenges ends in the lockout. The answer stays 40010.
func (s *Service) countSmsFailure(ctx context.Context, u *ent.SysUser, cl Client) {
	policy, err := s.lockPolicy(ctx)
	if err == nil {
		var lock *lockout
		if lock, err = s.openLockout(ctx, subjectOf(u, u.Account), cl.IP); err == nil {
			_, err = lock.fail(ctx, policy)
		}
	}
	if err != nil {
		s.d.Log.Warn("counting a wrong SMS second-factor code failed", "user_id", u.ID, "error", err)
	}
}

// ResendSmsChallenge is POST /auth/login/sms/resend: a new code for the
// challenge (the previous one retired), at most maxMfaSmsSends codes per
// challenge; 40008 (HTTP 200, args.retryAfterSeconds) when too soon.
func (s *Service) ResendSmsChallenge(ctx context.Context, in SmsResendInput, cl Client) (*SmsSendOutput, error) {
	id := strings.TrimSpace(in.ChallengeID)
	rec, err := s.takeSmsChallenge(ctx, id, deref(in.BindingVerifier), cl)
	if err != nil {
		return nil, err
	}
	keep := func() { _ = s.putSmsChallenge(context.WithoutCancel(ctx), id, rec) }
	if rec.Sends >= maxMfaSmsSends {
		keep()
		return nil, &errcode.Error{Code: errcode.TooManyRequests, Status: 200, Args: map[string]any{"retryAfterSeconds": max(int(rec.ttl().Seconds()), 1)}}
	}
	u, err := s.challengeUser(ctx, rec.UserID)
	if err != nil {
		_ = s.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return nil, err
	}
	phone := strings.TrimSpace(deref(u.Phone))
	if phone == "" {
		_ = s.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return nil, errcode.New(errcode.SmsCodeExpired)
	}
	opts, err := s.sendMfaCode(ctx, id, phone)
	if err != nil {
		keep()
		return nil, err
	}
	rec.Sends++
	rec.Expires = time.Now().Add(opts.TTL).UnixMilli()
	if err := s.putSmsChallenge(ctx, id, rec); err != nil {
		return nil, err
	}
	return &SmsSendOutput{ExpiresSeconds: int(opts.TTL.Seconds()), ResendSeconds: int(opts.ResendInterval.Seconds())}, nil
}
