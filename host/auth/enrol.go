package auth

import (
	"context"
	"strings"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/sms"
)

// ReauthWindows tells whether a session has an open re-authentication
// window (host/reauth.Windows). Enrolling a factor, removing one and
// changing the phone or e-mail need one whatever sys.security.totp.enabled
// says: a stolen session alone must not become a permanent takeover.
type ReauthWindows interface {
	IsOpen(ctx context.Context, userID int64, sid string) (bool, error)
}

// requireReauth answers HTTP 403 / 40024 unless the caller's session has
// an open re-authentication window (without windows wired, never).
func (s *Service) requireReauth(ctx context.Context, userID int64, sid string) error {
	if s.d.Windows != nil {
		open, err := s.d.Windows.IsOpen(ctx, userID, sid)
		if err != nil {
			return err
		}
		if open {
			return nil
		}
	}
	s.d.Log.Debug("re-authentication required for a factor or contact change", "user_id", userID)
	return errcode.New(errcode.ReauthRequired)
}

// smsFactor reports whether the SMS second factor is in force for u: the
// switch is on and u has a phone.
func (s *Service) smsFactor(ctx context.Context, u *ent.SysUser) (bool, error) {
	if strings.TrimSpace(deref(u.Phone)) == "" {
		return false, nil
	}
	return s.d.Settings.Bool(ctx, KeyMfaEnabled)
}

// passwordBindAllowed is the rule of the password-only binding: an account
// with TOTP bound answers 40021 (alreadyBound); an account with another
// factor in force at its login — a passkey, or a phone under the SMS
// second factor — answers 40035: the password alone must not add a factor
// beside it. The documented 40020 path stays open: a user TOTP is
// required of (forceTotp, the super-admin under requireForSuperAdmin) who
// has neither TOTP nor a passkey is answered 40020 at login before the SMS
// factor is asked, so the password is the only factor that account has.
func (s *Service) passwordBindAllowed(ctx context.Context, u *ent.SysUser) error {
	if mfa.Bound(u) {
		return errcode.New(errcode.MfaBindInvalid).With("reason", "alreadyBound")
	}
	has, err := s.pk.Has(ctx, u.ID)
	if err != nil {
		return err
	}
	if has {
		return errcode.New(errcode.MfaEnrolSessionRequired)
	}
	phone, err := s.smsFactor(ctx, u)
	if err != nil || !phone {
		return err
	}
	need, _, err := s.secondFactorNeed(ctx, u)
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
func (s *Service) BindStartSession(ctx context.Context, userID int64, sid string) (*BindStartOutput, error) {
	if err := s.requireReauth(ctx, userID, sid); err != nil {
		return nil, err
	}
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	if mfa.Bound(u) {
		return nil, errcode.New(errcode.MfaBindInvalid).With("reason", "alreadyBound")
	}
	return s.newBind(ctx, u, sid)
}

// notifyContactChange tells the user through the old channel that the
// phone or e-mail changed: an SMS to the old phone when the sender can
// send notices (sms.Notifier), a personal notice in the console, and a
// line in the log either way. A failed notice never undoes the change.
func (s *Service) notifyContactChange(ctx context.Context, u *ent.SysUser, oldPhone, newPhone, oldEmail, newEmail string) {
	if oldPhone != newPhone {
		s.d.Log.Info("phone changed", "user_id", u.ID, "old", sms.MaskPhone(oldPhone), "new", sms.MaskPhone(newPhone))
		if n, ok := s.d.SmsSender.(sms.Notifier); ok && oldPhone != "" {
			if err := n.Notify(ctx, oldPhone, sms.TemplatePhoneChanged); err != nil {
				s.d.Log.Warn("telling the old phone about a phone change failed", "user_id", u.ID, "error", err)
			}
		}
		s.securityNotice(ctx, u.ID, changePhone)
	}
	if oldEmail != newEmail {
		s.d.Log.Info("e-mail changed", "user_id", u.ID)
		s.securityNotice(ctx, u.ID, changeEmail)
	}
}
