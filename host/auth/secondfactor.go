package auth

import (
	"context"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
)

// The seam between login and the second factors (host/mfa).
//
// The dependency goes one way: host/mfa imports this package (its types
// Client, LoginOutput and Attempt, WriteTokens, the binder cookie), this
// package never imports host/mfa nor its sub-packages. Login starts a
// second factor through SecondFactor, an interface declared here and
// handed in at construction (Deps.SecondFactor, host/mfa's Gate); the
// second-factor area finishes a login through the exported methods below
// (CheckPassword, OpenAttempt, CountFailure, IssueVerified, WriteLoginLog),
// which host/mfa names in an interface of its own (mfa.Logins).

// SecondFactor is the gate every first factor (password, SMS login,
// external login) passes before tokens are issued. Challenge answers nil
// when u logs in with the first factor alone; otherwise the signal of the
// second factor (40018 with challengeId, 40020, 40009 with the SMS
// challenge; a challenge is stored by the gate) or an error.
type SecondFactor interface {
	Challenge(ctx context.Context, u *ent.SysUser, first string, cl Client) error
}

// secondFactor is the gate every first factor passes instead of
// IssueTokens: the second factor's signal, or tokens.
func (s *Service) secondFactor(ctx context.Context, u *ent.SysUser, first string, cl Client) (*LoginOutput, error) {
	if err := s.d.SecondFactor.Challenge(ctx, u, first, cl); err != nil {
		return nil, err
	}
	return s.IssueTokens(ctx, u, first, cl)
}

// CompleteLogin is the gate for a first factor outside this package (the
// external login): tokens, or the second factor's signal (40018 with
// challengeId, 40020).
func (s *Service) CompleteLogin(ctx context.Context, u *ent.SysUser, method string, cl Client) (*LoginOutput, error) {
	return s.secondFactor(ctx, u, method, cl)
}

// IssueVerified ends a login whose second factor was verified (a TOTP
// code, an SMS code, a passkey): the login is recorded on the user
// (TouchLogin) and the session is marked as having passed a second factor
// (sys_session.mfa). method is the session's method.
func (s *Service) IssueVerified(ctx context.Context, u *ent.SysUser, method string, cl Client) (*LoginOutput, error) {
	s.TouchLogin(ctx, u, cl)
	return s.issueTokens(ctx, u, method, cl, true)
}

// Attempt is the login lockout of one (account, client) pair during a
// step that a second factor or a recovery code completes: a wrong answer
// counts as a failed login of the account from that client.
type Attempt struct {
	s      *Service
	lock   *lockout
	policy lockPolicy
}

// Fail counts a wrong answer: nil while the pair is not locked, 40004
// (lockMinutes) when this failure locked it, or the cache's error.
func (a *Attempt) Fail(ctx context.Context) error {
	locked, err := a.lock.fail(ctx, a.policy)
	if err != nil {
		return err
	}
	if locked {
		return errcode.New(errcode.AccountLocked).With("lockMinutes", a.policy.minutes)
	}
	return nil
}

// Succeed clears the pair's failures (a failure to do so is logged).
func (a *Attempt) Succeed(ctx context.Context) {
	if err := a.lock.succeed(ctx); err != nil {
		a.s.d.Log.Warn("resetting the failed-login counter failed", "error", err)
	}
}

// OpenAttempt opens the lockout of u from clientIP: 40004 while the pair
// is locked.
func (s *Service) OpenAttempt(ctx context.Context, u *ent.SysUser, clientIP string) (*Attempt, error) {
	lock, policy, err := s.openUnlocked(ctx, subjectOf(u, u.Account), clientIP)
	if err != nil {
		return nil, err
	}
	return &Attempt{s: s, lock: lock, policy: policy}, nil
}

// CountFailure counts a wrong answer of u from clientIP toward the
// lockout whether or not the pair is already locked (a wrong SMS
// second-factor code: its answer stays 40010).
func (s *Service) CountFailure(ctx context.Context, u *ent.SysUser, clientIP string) error {
	policy, err := s.lockPolicy(ctx)
	if err != nil {
		return err
	}
	lock, err := s.openLockout(ctx, subjectOf(u, u.Account), clientIP)
	if err != nil {
		return err
	}
	_, err = lock.fail(ctx, policy)
	return err
}

// CheckPassword is the password step of the self-service that a password
// alone may start (a TOTP bind start, a recovery): lockout, the captcha an
// account past accountCaptchaThreshold needs (40029 without it; these
// bodies carry none, wire contract §2.3), the password, the account
// enabled — answered as the login answers. The returned Attempt counts
// later wrong answers of the same request (a wrong recovery code).
func (s *Service) CheckPassword(ctx context.Context, account, plain string, cl Client) (*ent.SysUser, *Attempt, error) {
	var uid *int64
	pc, err := s.checkPassword(ctx, PasswordInput{Account: account, Password: plain}, false, cl, &uid)
	if err != nil {
		return nil, nil, err
	}
	return pc.user, &Attempt{s: s, lock: pc.lock, policy: pc.policy}, nil
}
