package auth

import (
	"context"
	"strings"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
)

const smsPurposeLogin = "login"

// SmsSendInput is the body of POST /auth/sms/send.
type SmsSendInput struct {
	Phone       string  `json:"phone"`
	CaptchaID   *string `json:"captchaId"`
	CaptchaCode *string `json:"captchaCode"`
}

// SmsSendOutput tells the client how long the code lives and when it may
// ask again.
type SmsSendOutput struct {
	ExpiresSeconds int `json:"expiresSeconds"`
	ResendSeconds  int `json:"resendSeconds"`
}

// SmsLoginInput is the body of POST /auth/sms/login.
type SmsLoginInput struct {
	Phone string `json:"phone"`
	Code  string `json:"code"`
}

func (s *Service) smsEnabled(ctx context.Context) error {
	on, err := s.d.Settings.Bool(ctx, KeySmsLoginEnabled)
	if err != nil {
		return err
	}
	if !on {
		return errcode.New(errcode.SmsLoginDisabled)
	}
	return nil
}

func validPhone(p string) bool {
	p = strings.TrimSpace(p)
	if len(p) < 5 || len(p) > 20 {
		return false
	}
	for i, r := range p {
		if i == 0 && r == '+' {
			continue
		}
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// SendSmsCode issues a login code for a phone. The answer is the same
// whether or not an account has that phone: the code is generated (and the
// resend interval enforced) either way, and only sent when an enabled
// account exists.
func (s *Service) SendSmsCode(ctx context.Context, in SmsSendInput) (*SmsSendOutput, error) {
	if err := s.smsEnabled(ctx); err != nil {
		return nil, err
	}
	if !validPhone(in.Phone) {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "phone")
	}
	if err := s.checkCaptcha(ctx, deref(in.CaptchaID), deref(in.CaptchaCode)); err != nil {
		return nil, err
	}
	phone := strings.TrimSpace(in.Phone)
	code, err := s.d.SmsCodes.Issue(ctx, smsPurposeLogin, phone)
	if err != nil {
		// "Sending too often" is an HTTP-200 envelope in the login table of
		// the contract, unlike the 429 of the rate limiter.
		if be, ok := errcode.As(err); ok && be.Code == errcode.TooManyRequests {
			be.Status = 200
		}
		return nil, err
	}
	u, err := s.smsUser(ctx, phone)
	if err != nil {
		return nil, err
	}
	if u != nil {
		if err := s.d.SmsSender.Send(ctx, phone, code); err != nil {
			s.d.Log.Error("sending the SMS code failed", "error", err)
		}
	}
	opts := s.d.SmsCodes.Options()
	return &SmsSendOutput{ExpiresSeconds: int(opts.TTL.Seconds()), ResendSeconds: int(opts.ResendInterval.Seconds())}, nil
}

// smsUser finds the one enabled, live account with the phone; nil when none
// or ambiguous (two accounts sharing a phone never log in by SMS).
func (s *Service) smsUser(ctx context.Context, phone string) (*ent.SysUser, error) {
	users, err := s.d.Client.SysUser.Query().
		Where(sysuser.Phone(phone), sysuser.IsDelete(false), sysuser.Enabled(true)).
		Limit(2).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(users) != 1 {
		if len(users) > 1 {
			s.d.Log.Warn("several accounts share a phone number; SMS login refused for it")
		}
		return nil, nil
	}
	return users[0], nil
}

// SmsLogin checks a one-time code and issues tokens.
func (s *Service) SmsLogin(ctx context.Context, in SmsLoginInput, cl Client) (*LoginOutput, error) {
	var userID *int64
	out, err := s.smsLogin(ctx, in, cl, &userID)
	s.WriteLoginLog(ctx, in.Phone, MethodSMS, userID, err, cl)
	return out, err
}

func (s *Service) smsLogin(ctx context.Context, in SmsLoginInput, cl Client, userID **int64) (*LoginOutput, error) {
	if err := s.smsEnabled(ctx); err != nil {
		return nil, err
	}
	if !validPhone(in.Phone) {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "phone")
	}
	if strings.TrimSpace(in.Code) == "" || len(in.Code) > 16 {
		return nil, errcode.New(errcode.SmsCodeExpired)
	}
	phone := strings.TrimSpace(in.Phone)
	if err := s.d.SmsCodes.Check(ctx, smsPurposeLogin, phone, strings.TrimSpace(in.Code)); err != nil {
		// Phone login answers a wrong code with 40011 too (wire contract §2.3).
		if be, ok := errcode.As(err); ok && be.Code == errcode.SmsCodeWrong {
			return nil, errcode.New(errcode.SmsCodeExpired).With("attemptsLeft", be.Args["attemptsLeft"])
		}
		return nil, err
	}
	u, err := s.smsUser(ctx, phone)
	if err != nil {
		return nil, err
	}
	if u == nil {
		// A right code for a phone without an account: the code was never
		// sent, so this cannot happen through the UI; answer as expired.
		return nil, errcode.New(errcode.SmsCodeExpired)
	}
	*userID = &u.ID
	s.TouchLogin(ctx, u, cl)
	return s.secondFactor(ctx, u, MethodSMS, cl)
}
