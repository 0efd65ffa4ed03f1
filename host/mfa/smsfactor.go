package mfa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
)

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

// takeSmsChallenge consumes the record of id and checks the proof: 40011
// when it is unknown, expired, used, or the proof is missing or wrong (the
// record is spent then).
func (f *Factors) takeSmsChallenge(ctx context.Context, id, verifier string, cl auth.Client) (smsChallenge, error) {
	var rec smsChallenge
	if !bindproof.ValidToken(id) {
		return rec, errcode.New(errcode.SmsCodeExpired)
	}
	raw, ok, err := f.d.Store.Take(ctx, mfaSmsKeyPrefix+id)
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
		f.d.Log.Info("SMS challenge refused: the browser binder or binding verifier is missing or wrong; the challenge is spent", "user_id", rec.UserID)
		_ = f.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return rec, errcode.New(errcode.SmsCodeExpired).Wrap(errors.New("SMS challenge without its binder or verifier"))
	}
	return rec, nil
}

// challengeUser is the live account of a challenge: 40011 when it is gone,
// 40005 when it was disabled meanwhile.
func (f *Factors) challengeUser(ctx context.Context, id int64) (*ent.SysUser, error) {
	u, err := f.d.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).Only(ctx)
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
func (f *Factors) CompleteSmsChallenge(ctx context.Context, in SmsChallengeInput, cl auth.Client) (*auth.LoginOutput, error) {
	var u *ent.SysUser
	out, err := f.completeSmsChallenge(ctx, in, cl, &u)
	account, userID := "", (*int64)(nil)
	if u != nil {
		account, userID = u.Account, &u.ID
	}
	f.logins.WriteLoginLog(ctx, account, auth.MethodPassword, userID, err, cl)
	return out, err
}

func (f *Factors) completeSmsChallenge(ctx context.Context, in SmsChallengeInput, cl auth.Client, user **ent.SysUser) (*auth.LoginOutput, error) {
	code := strings.TrimSpace(in.Code)
	if code == "" || len(code) > maxSmsCodeLen {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "code")
	}
	id := strings.TrimSpace(in.ChallengeID)
	rec, err := f.takeSmsChallenge(ctx, id, deref(in.BindingVerifier), cl)
	if err != nil {
		return nil, err
	}
	u, err := f.challengeUser(ctx, rec.UserID)
	if err != nil {
		_ = f.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return nil, err
	}
	*user = u
	cerr := f.d.SmsCodes.Check(ctx, smsPurposeMfa, id, code)
	if cerr == nil {
		return f.logins.IssueVerified(ctx, u, auth.MethodPassword, cl)
	}
	be, ok := errcode.As(cerr)
	switch {
	case ok && be.Code == errcode.SmsCodeWrong:
		f.countSmsFailure(ctx, u, cl)
		if left, _ := be.Args["attemptsLeft"].(int); left > 0 {
			if err := f.putSmsChallenge(context.WithoutCancel(ctx), id, rec); err != nil {
				return nil, err
			}
		}
		return nil, cerr
	case ok:
		return nil, cerr // 40011: the code is dead, and so is the challenge
	default:
		// The cache failed: keep the challenge for a retry.
		_ = f.putSmsChallenge(context.WithoutCancel(ctx), id, rec)
		return nil, cerr
	}
}

// countSmsFailure counts a wrong code as a failed login of the account
// from this client (sys.security.loginLock.*), so guessing across fresh
// challenges ends in the lockout. The answer stays 40010.
func (f *Factors) countSmsFailure(ctx context.Context, u *ent.SysUser, cl auth.Client) {
	if err := f.logins.CountFailure(ctx, u, cl.IP); err != nil {
		f.d.Log.Warn("counting a wrong SMS second-factor code failed", "user_id", u.ID, "error", err)
	}
}

// ResendSmsChallenge is POST /auth/login/sms/resend: a new code for the
// challenge (the previous one retired), at most auth.MaxSmsChallengeSends codes per
// challenge; 40008 (HTTP 200, args.retryAfterSeconds) when too soon.
func (f *Factors) ResendSmsChallenge(ctx context.Context, in SmsResendInput, cl auth.Client) (*auth.SmsSendOutput, error) {
	id := strings.TrimSpace(in.ChallengeID)
	rec, err := f.takeSmsChallenge(ctx, id, deref(in.BindingVerifier), cl)
	if err != nil {
		return nil, err
	}
	keep := func() { _ = f.putSmsChallenge(context.WithoutCancel(ctx), id, rec) }
	if rec.Sends >= auth.MaxSmsChallengeSends {
		keep()
		return nil, &errcode.Error{Code: errcode.TooManyRequests, Status: 200, Args: map[string]any{"retryAfterSeconds": max(int(rec.ttl().Seconds()), 1)}}
	}
	u, err := f.challengeUser(ctx, rec.UserID)
	if err != nil {
		_ = f.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return nil, err
	}
	phone := strings.TrimSpace(deref(u.Phone))
	if phone == "" {
		_ = f.d.SmsCodes.Revoke(context.WithoutCancel(ctx), smsPurposeMfa, id)
		return nil, errcode.New(errcode.SmsCodeExpired)
	}
	opts, err := f.sendMfaCode(ctx, id, phone)
	if err != nil {
		keep()
		return nil, err
	}
	rec.Sends++
	rec.Expires = time.Now().Add(opts.TTL).UnixMilli()
	if err := f.putSmsChallenge(ctx, id, rec); err != nil {
		return nil, err
	}
	return &auth.SmsSendOutput{ExpiresSeconds: int(opts.TTL.Seconds()), ResendSeconds: int(opts.ResendInterval.Seconds())}, nil
}
